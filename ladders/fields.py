"""Model fields for large JSON documents read whole."""

import json
from typing import TYPE_CHECKING, Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models
from django.db.models.fields.json import KeyTransform

from loopweb.runs import jsonbytes

if TYPE_CHECKING:
    _Text = models.TextField[Any, Any]  # set and read as JSON values, not strings
else:
    _Text = models.TextField


#: How Django's encoder writes what JSON has no type for (datetimes, decimals, UUIDs, …).
_DJANGO_DEFAULT = DjangoJSONEncoder().default


class JSONText(_Text):
    """JSON kept as text, for a document only written and read whole: as ``jsonb`` a 200 × 50
    final standing's INSERT cost about as much as the rest of the pass ending the dispatch."""

    description = "JSON stored as text"

    def from_db_value(self, value, expression, connection):
        return None if value is None else jsonbytes.loads(value)

    def to_python(self, value):
        if isinstance(value, str):
            return jsonbytes.loads(value)
        return value

    def get_prep_value(self, value):
        if value is None:
            return None
        return jsonbytes.dumps(value, _DJANGO_DEFAULT).decode()

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))


class JSONDocument(models.JSONField):
    """A ``JSONField`` read by orjson, for documents read whole on every request."""

    def from_db_value(self, value, expression, connection):
        if self.decoder or not isinstance(value, str) or isinstance(expression, KeyTransform):
            return super().from_db_value(value, expression, connection)
        try:
            return jsonbytes.loads(value)
        except json.JSONDecodeError:
            return value  # as Django's field gives back what is not JSON
