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
    """JSON kept as text: for a document only ever written and read whole, never queried
    inside. PostgreSQL stores ``jsonb`` by parsing it into its binary form and compressing that;
    a final standing of a 200 × 50 board is megabytes, and as ``jsonb`` its INSERT cost about
    as much as the rest of the pass that ends the dispatch. As text it is only compressed."""

    description = "JSON stored as text"

    def from_db_value(self, value, expression, connection):
        return None if value is None else jsonbytes.loads(value)

    def to_python(self, value):
        if isinstance(value, str):
            return jsonbytes.loads(value)
        return value

    def get_prep_value(self, value):
        # Written in the transaction that ends a dispatch (a megabyte for 200 × 50): by orjson,
        # the text ``json`` writes with Django's encoder (``loopweb.runs.jsonbytes``).
        if value is None:
            return None
        return jsonbytes.dumps(value, _DJANGO_DEFAULT).decode()

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))


class JSONDocument(models.JSONField):
    """A ``JSONField`` whose values are read by orjson (``jsonbytes.loads``: what ``json``
    reads): for documents read whole on every request, such as a record's slots."""

    def from_db_value(self, value, expression, connection):
        if self.decoder or not isinstance(value, str) or isinstance(expression, KeyTransform):
            return super().from_db_value(value, expression, connection)
        try:
            return jsonbytes.loads(value)
        except json.JSONDecodeError:
            return value  # as Django's field gives back what is not JSON
