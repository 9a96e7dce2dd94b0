"""The OpenAPI schema is the API's contract: what it calls valid is accepted, what it calls
invalid is refused, and every answer is documented.

drf-spectacular derives most of it from the serializers. What it cannot see is stated here:

* every string a request sends is free of U+0000 (PostgreSQL cannot store it) and, where it
  may not be blank, holds a character other than whitespace (the API trims it);
* lists whose items must be distinct say ``uniqueItems``;
* free JSON (a run record, a signal's ``ext``) is JSON PostgreSQL can store (``StorableJSON``);
* the error answers API.md promises (400, 401, 403, 404, 409, 415) on every operation, in the
  error shape of ``loopweb.runs.api.errors``.

The seed formats that are validated outside DRF (signals, acceptance rules, late events, evalset
pins, summaries and policies) are declared once with ``loopweb.runs.formats``, which checks them
and states them; their apps register the schemas here as components.
"""

from drf_spectacular.extensions import OpenApiSerializerFieldExtension

from loopweb.runs import moments
from loopweb.runs.formats import (  # noqa: F401 - the schema's vocabulary, declared with the formats
    COMPONENTS,
    NO_NUL,
    NOT_BLANK,
    PATCHES,
    SOME_TEXT,
    SPACE,
    STORABLE,
    STORABLE_OBJECT,
    nullable,
    patch,
    ref,
    text,
)


class StrictStringExtension(OpenApiSerializerFieldExtension):
    """A request string field states what the API refuses: U+0000, and blank text."""

    target_class = "loopweb.runs.json_fields._StrictString"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction == "request" and not self.target.patterns and "enum" not in schema:
            # A field held to a pattern gets it from its validator; a blank one may be empty.
            schema["pattern"] = SOME_TEXT if self.target.allow_blank else NOT_BLANK
        return schema


class MomentExtension(OpenApiSerializerFieldExtension):
    """A request timestamp states the years it may be written in."""

    target_class = "loopweb.runs.json_fields.DateTimeField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if direction == "request":
            schema.update(pattern=moments.YEAR_PATTERN, maxLength=moments.MAX_LENGTH)
        return schema


class UniqueListExtension(OpenApiSerializerFieldExtension):
    target_class = "loopweb.runs.json_fields.ListField"
    match_subclasses = True

    def map_serializer_field(self, auto_schema, direction):
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        if self.target.unique:
            schema["uniqueItems"] = True
        return schema


def _distinct_types(node) -> None:
    """A ``type`` list names each type once (drf-spectacular may add "null" twice), and a
    ``oneOf`` offering any value beside null (a nullable free JSON field) is any value: null
    would match both."""
    if isinstance(node, dict):
        if isinstance(node.get("type"), list):
            node["type"] = list(dict.fromkeys(node["type"]))
        if isinstance(node.get("oneOf"), list) and {} in node["oneOf"]:
            del node["oneOf"]
        for value in node.values():
            _distinct_types(value)
    elif isinstance(node, list):
        for value in node:
            _distinct_types(value)


def _no_nul_in_parameter(parameter: dict) -> None:
    """A string parameter (a filter, a path part) holds no U+0000 either."""
    schema = parameter.get("schema", {})
    if schema.get("type") == "string" and not ({"pattern", "enum", "format"} & set(schema)):
        schema["pattern"] = NO_NUL


def _body_required(body: dict, schemas: dict) -> bool:
    """A body is required unless an empty object would do (every field optional)."""
    schema = body.get("content", {}).get("application/json", {}).get("schema", {})
    named = schema.get("$ref", "")
    if named.startswith("#/components/schemas/"):
        schema = schemas.get(named.rsplit("/", 1)[1], {})
    return bool(schema.get("required")) or schema.get("type") != "object" or "anyOf" in schema


ERROR_SCHEMA = {
    "type": "object",
    "description": "API.md: every 4xx answers this shape.",
    "properties": {
        "detail": {"type": "string"},
        "code": {"type": "string"},
        "errors": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
    "required": ["detail"],
}

ERRORS = {
    "400": "Bad input: the body, a field or a query parameter (``errors`` names each field).",
    "401": "No credentials, or credentials that are not valid.",
    "403": "The caller may see the object but not do this (or the CSRF check failed).",
    "404": "No such object, or one the caller may not see.",
}
CONFLICT = "The object's state does not allow this now (e.g. Run while a dispatch is running)."
UNSUPPORTED = "The body is not JSON: every request body of the API is application/json."
UNSAFE = {"post", "put", "patch", "delete"}


def document_errors(result, generator, request, public):
    """drf-spectacular post-processing hook: the shared components and error responses."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR_SCHEMA)
    for name, schema in COMPONENTS.items():
        schemas.setdefault(name, schema)
    for name, properties in PATCHES.items():
        component = schemas.get(name)
        if component is None:
            continue
        for key, schema in properties.items():
            if key:
                component.setdefault("properties", {})[key] = schema
            else:
                component.update(schema)
    _distinct_types(result)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                for parameter in operation.get("parameters", []):
                    _no_nul_in_parameter(parameter)
    _error_responses(result, schemas)
    return result


def _error_responses(result, schemas) -> None:
    """Every operation's error responses, and whether its request body is required."""
    error_body = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            errors = dict(ERRORS)
            if method in UNSAFE:
                errors["409"] = CONFLICT
            if "requestBody" in operation:
                errors["415"] = UNSUPPORTED
                operation["requestBody"]["required"] = _body_required(
                    operation["requestBody"], schemas
                )
            for status, description in errors.items():
                responses.setdefault(status, {"description": description, "content": error_body})
