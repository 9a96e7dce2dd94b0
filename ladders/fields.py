"""A model field for a large JSON document written and read whole."""

import json
from typing import TYPE_CHECKING, Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

if TYPE_CHECKING:
    _Text = models.TextField[Any, Any]  # set and read as JSON values, not strings
else:
    _Text = models.TextField


class JSONText(_Text):
    """JSON kept as text: for a document only ever written and read whole, never queried
    inside. PostgreSQL stores ``jsonb`` by parsing it into its binary form and compressing that;
    a final standing of a 200 × 50 board is megabytes, and as ``jsonb`` its INSERT cost about
    as much as the rest of the pass that ends the dispatch. As text it is only compressed."""

    description = "JSON stored as text"

    def from_db_value(self, value, expression, connection):
        return None if value is None else json.loads(value)

    def to_python(self, value):
        if isinstance(value, str):
            return json.loads(value)
        return value

    def get_prep_value(self, value):
        if value is None:
            return None
        return json.dumps(value, cls=DjangoJSONEncoder, separators=(",", ":"))

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))
