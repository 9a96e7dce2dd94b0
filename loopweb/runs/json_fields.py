"""The request serializers' field types: free JSON PostgreSQL can store, and strict JSON types.
Every request serializer uses them: the API's, and the checks a console form shares with the API
(``<app>/inputs.py``), which is why they live outside the API layer.

Free JSON the API accepts must be JSON PostgreSQL's ``jsonb`` can store.

``json.loads`` accepts things ``jsonb`` refuses (NUL characters, lone surrogates, numbers that
overflow to infinity); refused here they are a 400 on the field instead of a database error.
"""

import math

from django.core.validators import RegexValidator
from django.db import models
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from loopweb.runs import formats
from loopweb.runs.checks import join
from loopweb.runs.moments import BadMoment, read_moment
from loopweb.runs.numbers import json_integer

#: Deeper documents are refused: nothing Loopweb reads nests this far, and encoding one
#: would exhaust the interpreter's recursion limit.
MAX_JSON_DEPTH = 64


def _text_problem(text: str) -> str | None:
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "contains a lone surrogate character"
    return None


def json_problem(value) -> str | None:
    """Why ``value`` cannot be stored as ``jsonb``, with where in it, or None."""
    stack = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        where = f" at {path}" if path else ""
        if depth > MAX_JSON_DEPTH:
            return f"nests deeper than {MAX_JSON_DEPTH} levels{where}"
        if isinstance(node, str):
            problem = _text_problem(node)
            if problem:
                return f"{problem}{where}"
        elif isinstance(node, float) and not math.isfinite(node):
            return f"holds a number out of range{where}"
        elif isinstance(node, dict):
            for key, item in node.items():
                key = str(key)
                problem = _text_problem(key)
                if problem:
                    return f"has a key that {problem}{where}"
                stack.append((item, f"{path}.{key}" if path else key, depth + 1))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, join(path, index), depth + 1))
    return None


def storable_json(value) -> None:
    """A DRF validator for JSON-valued fields."""
    problem = json_problem(value)
    if problem:
        raise serializers.ValidationError(f"This JSON {problem}.", code="invalid")


# -- strict JSON types --------------------------------------------------------------------------
#
# DRF reads ``"true"`` as a boolean, ``"3"`` as an integer and ``3`` as a string; the schema says
# otherwise, and the schema is the contract. These fields take only the JSON type the schema
# names. Request serializers use them in place of DRF's (``from loopweb.runs.api import fields
# as f``), and ``ModelSerializer`` below maps model fields to them.

#: The largest id the API accepts: a primary key is a 64-bit signed integer.
MAX_ID = 2**63 - 1


class _StrictString:
    """A JSON string and nothing else. Its length is checked before surrounding whitespace is
    trimmed, so the schema's ``maxLength`` is the whole limit; a string held to a pattern is
    not trimmed at all and must match it whole (``" 1"`` and ``"1\n"`` are not ``"1"``), as
    the schema's ``pattern`` reads."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.patterns = [
            v for v in self.validators if isinstance(v, RegexValidator) and not v.inverse_match
        ]
        if self.patterns:
            self.trim_whitespace = False

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        if self.max_length is not None and len(data) > self.max_length:
            self.fail("max_length", max_length=self.max_length)
        value = super().to_internal_value(data)
        for validator in self.patterns:
            if not validator.regex.fullmatch(value):
                raise serializers.ValidationError(validator.message, code=validator.code)
        return value


class CharField(_StrictString, serializers.CharField):
    pass


class SlugField(_StrictString, serializers.SlugField):
    pass


class RegexField(_StrictString, serializers.RegexField):
    pass


class ChoiceField(serializers.ChoiceField):
    """One of the choices, as the JSON string it is (``1`` is not ``"1"``)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid_choice", input=data)
        return super().to_internal_value(data)


class BooleanField(serializers.BooleanField):
    """``true`` or ``false``, and nothing that merely looks like one (``"yes"``, ``1``)."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class IntegerField(serializers.IntegerField):
    """A JSON integer as the schema reads one (``3`` or ``3.0``): not ``3.5``, not a string of
    digits, not ``true``."""

    def to_internal_value(self, data):
        value = json_integer(data)
        if value is None:
            self.fail("invalid")
        return super().to_internal_value(value)


class FloatField(serializers.FloatField):
    """A JSON number: not a string of digits, not ``true``."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return super().to_internal_value(data)


class DateTimeField(serializers.DateTimeField):
    """An RFC 3339 timestamp with its time zone (``format: date-time``), written between the
    years 1900 and 9998 (``loopweb.runs.moments``)."""

    def to_internal_value(self, value):
        try:
            moment = read_moment(value)
        except BadMoment as exc:
            raise serializers.ValidationError(str(exc), code=exc.code) from exc
        return self.enforce_timezone(moment)


class IdField(IntegerField):
    """An object's id: an integer from 1 to 2⁶³−1 (a larger one could name no row, and SQLite
    cannot even compare with it)."""

    def __init__(self, **kwargs):
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ID)
        super().__init__(**kwargs)


@extend_schema_field({"type": "integer", "minimum": 1, "maximum": MAX_ID})
class PrimaryKeyRelatedField(serializers.PrimaryKeyRelatedField):
    """An id that must name a row: a JSON integer in the id range, else a 400; an id that names
    nothing is ``does_not_exist``."""

    def to_internal_value(self, data):
        value = json_integer(data)
        if value is None or not 1 <= value <= MAX_ID:
            self.fail("incorrect_type", data_type=type(data).__name__)
        return super().to_internal_value(value)


class ListField(serializers.ListField):
    """A JSON array; with ``unique``, its items are distinct (``uniqueItems``), else a 400 coded
    ``unique`` naming the first repeated item."""

    def __init__(self, *, unique: bool = False, unique_message: str = "", **kwargs):
        self.unique = unique
        self.unique_message = unique_message or "An item appears twice."
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if self.unique:
            seen = []
            for item in value:
                if item in seen:
                    raise serializers.ValidationError(self.unique_message, code="unique")
                seen.append(item)
        return value


def object_field(json_schema: dict = formats.STORABLE_OBJECT, **kwargs) -> serializers.DictField:
    """A JSON object PostgreSQL can store, documented by ``json_schema``."""

    @extend_schema_field(json_schema)
    class Field(serializers.DictField):
        pass

    kwargs.setdefault("validators", []).append(storable_json)
    return Field(**kwargs)


def json_field(json_schema: dict, **kwargs) -> serializers.JSONField:
    """Free JSON PostgreSQL can store, documented by ``json_schema`` (the app that reads it
    may state it more precisely with ``formats.patch``)."""

    @extend_schema_field(json_schema)
    class Field(serializers.JSONField):
        pass

    kwargs.setdefault("validators", []).append(storable_json)
    return Field(**kwargs)


class ModelSerializer(serializers.ModelSerializer):
    """A ModelSerializer whose generated fields take strict JSON types."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.BooleanField: BooleanField,
        models.CharField: CharField,
        models.TextField: CharField,
        models.SlugField: SlugField,
        models.IntegerField: IntegerField,
        models.PositiveIntegerField: IntegerField,
        models.PositiveSmallIntegerField: IntegerField,
        models.SmallIntegerField: IntegerField,
        models.BigIntegerField: IntegerField,
        models.FloatField: FloatField,
        models.DateTimeField: DateTimeField,
    }
    serializer_related_field = PrimaryKeyRelatedField
    serializer_choice_field = ChoiceField
