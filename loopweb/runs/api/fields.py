"""The API layer's name for the request fields (``loopweb.runs.json_fields``): API modules may
import them from here; modules outside the API layer import ``loopweb.runs.json_fields``."""

from loopweb.runs.json_fields import (
    MAX_ID as MAX_ID,
)
from loopweb.runs.json_fields import (
    MAX_JSON_DEPTH as MAX_JSON_DEPTH,
)
from loopweb.runs.json_fields import (
    BooleanField as BooleanField,
)
from loopweb.runs.json_fields import (
    CharField as CharField,
)
from loopweb.runs.json_fields import (
    ChoiceField as ChoiceField,
)
from loopweb.runs.json_fields import (
    DateTimeField as DateTimeField,
)
from loopweb.runs.json_fields import (
    FloatField as FloatField,
)
from loopweb.runs.json_fields import (
    IdField as IdField,
)
from loopweb.runs.json_fields import (
    IntegerField as IntegerField,
)
from loopweb.runs.json_fields import (
    ListField as ListField,
)
from loopweb.runs.json_fields import (
    ModelSerializer as ModelSerializer,
)
from loopweb.runs.json_fields import (
    PrimaryKeyRelatedField as PrimaryKeyRelatedField,
)
from loopweb.runs.json_fields import (
    RegexField as RegexField,
)
from loopweb.runs.json_fields import (
    SlugField as SlugField,
)
from loopweb.runs.json_fields import (
    json_field as json_field,
)
from loopweb.runs.json_fields import (
    json_problem as json_problem,
)
from loopweb.runs.json_fields import (
    object_field as object_field,
)
from loopweb.runs.json_fields import (
    storable_json as storable_json,
)
