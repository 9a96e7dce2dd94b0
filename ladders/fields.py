"""A model field for a large JSON document written and read whole."""

import json
from typing import TYPE_CHECKING, Any

from django.core.serializers.json import DjangoJSONEncoder
from django.db import models

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
        return None if value is None else json.loads(value)

    def to_python(self, value):
        if isinstance(value, str):
            return json.loads(value)
        return value

    def get_prep_value(self, value):
        # Written in the transaction that ends a dispatch (a megabyte for 200 × 50): by orjson,
        # the text ``json`` writes with Django's encoder (``loopweb.runs.jsonbytes``).
        if value is None:
            return None
        return jsonbytes.dumps(value, _DJANGO_DEFAULT).decode()

    def value_to_string(self, obj):
        return self.get_prep_value(self.value_from_object(obj))
