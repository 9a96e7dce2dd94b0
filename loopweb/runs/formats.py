"""Request formats validated outside DRF, each declared once: a ``Format`` lists its fields, and
both the check of what a client sends (``Format.read``, with the validation kit's field checks)
and the format's JSON Schema for the OpenAPI document (``Format.schema``) come from that list.

Pure (no Django). Seed 000's signals, acceptance rules and late events (``signals_app``) and seed
003's pins, summaries and policies (``evalsets``) are declared with it; the API's schema module
registers their schemas as components (``loopweb.runs.api.schema.COMPONENTS``).

What no schema can state (a name's kind against the run's signals, an id already taken, a hash
naming no evalset) stays in the apps' own checks, after ``read``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from loopweb.runs import checks, moments
from loopweb.runs.checks import Errors, join

# -- the schema's vocabulary --------------------------------------------------------------------

#: A string without U+0000.
NO_NUL = "^[^\\u0000]*$"
#: A non-empty string without U+0000 (drf-spectacular adds the empty string beside it).
SOME_TEXT = "^[^\\u0000]+$"
#: The characters the API trims as whitespace (Python's ``str.isspace``), spelled out: regular
#: expression engines disagree on what ``\\s`` holds.
SPACE = (
    "\\u0009-\\u000d\\u001c-\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a"
    "\\u2028\\u2029\\u202f\\u205f\\u3000"
)
#: A string without U+0000 that holds a character other than whitespace.
NOT_BLANK = f"^[^\\u0000]*[^{SPACE}\\u0000][^\\u0000]*$"

STORABLE = {"$ref": "#/components/schemas/StorableJSON"}
STORABLE_OBJECT = {
    "type": "object",
    "propertyNames": {"pattern": NO_NUL},
    "additionalProperties": STORABLE,
}
TIMESTAMP = {
    "type": "string",
    "format": "date-time",
    "pattern": moments.YEAR_PATTERN,
    "maxLength": moments.MAX_LENGTH,
    "description": "RFC 3339 with a time zone, between the years 1900 and 9998.",
}


def text(
    max_length: int | None = None, *, nullable: bool = False, blank: bool = False
) -> dict[str, Any]:
    """A string field: not blank unless ``blank``, no U+0000, at most ``max_length``."""
    schema: dict[str, Any] = {"type": ["string", "null"] if nullable else "string"}
    schema["pattern"] = NO_NUL if blank else NOT_BLANK
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def ref(name: str) -> dict[str, Any]:
    """A reference to the component ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` or null."""
    return {"anyOf": [schema, {"type": "null"}]}


# -- what the schema states beyond the serializers ---------------------------------------------

COMPONENTS: dict[str, dict[str, Any]] = {
    "StorableJSON": {
        "description": "Any JSON PostgreSQL can store: no U+0000 in a string or a key.",
        "anyOf": [
            {"type": "string", "pattern": NO_NUL},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "null"},
            {"type": "array", "items": STORABLE},
            STORABLE_OBJECT,
        ],
    },
}


#: What the app that validates a request component states about it, beyond its serializer (read by
#: ``loopweb.runs.api.schema``'s post-processing hook):
#: ``{component: {property: schema}}``, and under the key ``""`` keywords of the component itself.
PATCHES: dict[str, dict[str, dict[str, Any]]] = {}


def patch(component: str, **properties: dict[str, Any]) -> None:
    """State ``component``'s properties (and, under ``_``, its own keywords)."""
    PATCHES.setdefault(component, {}).update(
        {("" if name == "_" else name): schema for name, schema in properties.items()}
    )


# -- fields -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One key of a format. ``read`` checks it (adding errors at ``path``) and returns its value;
    ``schema`` states the same rule. An optional field given as null is absent, so its schema
    admits null."""

    key: str
    required: bool = False
    description: str | None = None

    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        raise NotImplementedError

    def rule(self) -> dict[str, Any]:
        """The schema of a value given (not null)."""
        raise NotImplementedError

    def schema(self) -> dict[str, Any]:
        schema = self.rule()
        if not self.required:
            schema = _or_null(schema)
        if self.description:
            schema = {**schema, "description": self.description}
        return schema


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    if isinstance(schema.get("type"), str) and set(schema) <= {"type", "pattern", "maxLength"}:
        return {**schema, "type": [schema["type"], "null"]}
    return nullable(schema)


@dataclass(frozen=True)
class Text(Field):
    """A string, not blank, without U+0000. ``not_in``: values the format's own check refuses
    later, with a message and code of its own (a name of another kind, E195)."""

    max_length: int = 200
    not_in: tuple[str, ...] = ()

    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return checks.string(
            raw, self.key, path, errors, required=self.required, max_length=self.max_length
        )

    def rule(self) -> dict[str, Any]:
        schema = text(self.max_length)
        return {**schema, "not": {"enum": list(self.not_in)}} if self.not_in else schema


@dataclass(frozen=True)
class Choice(Field):
    choices: tuple[str, ...] = ()

    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return checks.choice(raw, self.key, path, errors, self.choices, required=self.required)

    def rule(self) -> dict[str, Any]:
        return {"enum": list(self.choices)}


@dataclass(frozen=True)
class Number(Field):
    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return checks.number(raw, self.key, path, errors, required=self.required)

    def rule(self) -> dict[str, Any]:
        return {"type": "number"}


@dataclass(frozen=True)
class Moment(Field):
    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return checks.parse_timestamp(raw.get(self.key), path, errors, required=self.required)

    def rule(self) -> dict[str, Any]:
        return dict(TIMESTAMP)


@dataclass(frozen=True)
class Extensions(Field):
    """Free JSON, an object PostgreSQL can store."""

    description: str | None = "Extensions."

    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return checks.json_object(raw, self.key, path, errors)

    def rule(self) -> dict[str, Any]:
        return dict(STORABLE_OBJECT)

    def schema(self) -> dict[str, Any]:
        return nullable({**STORABLE_OBJECT, "description": self.description})


@dataclass(frozen=True)
class Names(Field):
    """A list of distinct names. ``not_in``: names the format's own check refuses later (a
    name of another kind, E195)."""

    not_in: tuple[str, ...] = ()
    max_length: int = 200

    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return checks.names(raw, self.key, path, errors)

    def rule(self) -> dict[str, Any]:
        item = text(self.max_length)
        if self.not_in:
            item = {**item, "not": {"enum": list(self.not_in)}}
        return {"type": "array", "uniqueItems": True, "items": item}

    def schema(self) -> dict[str, Any]:
        schema = {**self.rule(), "type": ["array", "null"]}
        return {**schema, "description": self.description} if self.description else schema


@dataclass(frozen=True)
class Given(Field):
    """A field whose check is written out by its format's module, with its schema beside it:
    ``check(raw, path, errors)`` returns the value."""

    check: Callable[[Mapping[str, Any], str, Errors], Any] = lambda raw, path, errors: None
    json_schema: dict[str, Any] = field(default_factory=dict)

    def read(self, raw: Mapping[str, Any], path: str, errors: Errors) -> Any:
        return self.check(raw, path, errors)

    def rule(self) -> dict[str, Any]:
        return dict(self.json_schema)

    def schema(self) -> dict[str, Any]:
        schema = dict(self.json_schema)
        return {**schema, "description": self.description} if self.description else schema


# -- formats ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Format:
    """A request format: its fields, in the order they are checked, and what its schema states
    beyond them (``also``: conditions between fields, limits of the object as a whole)."""

    name: str
    fields: tuple[Field, ...]
    description: str = ""
    also: dict[str, Any] = field(default_factory=dict)
    #: The message and code of a key the format does not know.
    unknown: tuple[str, str] = ("Unknown field.", "unknown_field")

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(f.key for f in self.fields)

    def field(self, key: str) -> Field:
        return next(f for f in self.fields if f.key == key)

    def read(
        self,
        raw: Mapping[str, Any],
        prefix: str,
        errors: Errors,
        *,
        only: Collection[str] | None = None,
    ) -> dict[str, Any]:
        """Every field's value (None where it is absent or wrong), its errors added under
        ``prefix``; unknown keys are refused. ``only`` reads those fields alone (the others are
        the caller's to check)."""
        message, code = self.unknown
        for key in raw:
            if key not in self.keys:
                errors.add(join(prefix, str(key)), message, code)
        return {
            f.key: f.read(raw, join(prefix, f.key), errors)
            for f in self.fields
            if only is None or f.key in only
        }

    def schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object"}
        if self.description:
            schema["description"] = self.description
        schema["additionalProperties"] = False
        required = [f.key for f in self.fields if f.required]
        if required:
            schema["required"] = required
        schema["properties"] = {f.key: f.schema() for f in self.fields}
        schema.update(self.also)
        return schema

    def with_fields(self, *fields: Field, name: str | None = None, **changes: Any) -> Format:
        return replace(self, name=name or self.name, fields=fields, **changes)
