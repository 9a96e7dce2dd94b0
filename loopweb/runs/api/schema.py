"""The OpenAPI schema documents the error answers API.md promises on every endpoint.

drf-spectacular documents what a view returns when it succeeds; the error shape of
``loopweb.runs.api.errors`` (400, 401, 403, 404, 409) is the same everywhere, so it is added to
every operation here instead of being repeated on each view.
"""

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
UNSAFE = {"post", "put", "patch", "delete"}


def document_errors(result, generator, request, public):
    """drf-spectacular post-processing hook: add the shared error responses."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR_SCHEMA)
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            responses = operation["responses"]
            errors = dict(ERRORS)
            if method in UNSAFE:
                errors["409"] = CONFLICT
            for status, description in errors.items():
                responses.setdefault(status, {"description": description, "content": ref})
    return result
