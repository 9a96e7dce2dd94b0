"""One error shape for every 4xx: ``{"detail", "code"?, "errors": {field: [message, ...]}}``.

Nested field names are joined with dots (``gate.floor``, ``rungs.3.case``).
"""

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.exceptions import ErrorDetail
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from loopweb.runs.errors import Conflict


def flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "non_field_errors" if key == "__all__" else str(key)
            path = f"{prefix}.{name}" if prefix else name
            for k, v in flatten(value, path).items():
                out.setdefault(k, []).extend(v)
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            out.setdefault(prefix or "non_field_errors", []).extend(str(i) for i in detail)
        else:
            for index, item in enumerate(detail):
                if not item:
                    continue
                path = f"{prefix}.{index}" if prefix else str(index)
                for k, v in flatten(item, path).items():
                    out.setdefault(k, []).extend(v)
    else:
        out.setdefault(prefix or "non_field_errors", []).append(str(detail))
    return out


def django_detail(exc: DjangoValidationError) -> dict:
    """A Django ValidationError as DRF error details, keeping each message's code."""
    if hasattr(exc, "error_dict"):
        return {
            field: [ErrorDetail(m, code=e.code) for e in errors for m in e.messages]
            for field, errors in exc.error_dict.items()
        }
    return {
        "non_field_errors": [
            ErrorDetail(m, code=e.code) for e in exc.error_list for m in e.messages
        ]
    }


def validation_response(detail) -> Response:
    errors = flatten(detail)
    codes = []

    def collect(node):
        if isinstance(node, dict):
            for v in node.values():
                collect(v)
        elif isinstance(node, list):
            for v in node:
                collect(v)
        else:
            codes.append(getattr(node, "code", None))

    collect(detail)
    if not errors:
        errors = {"non_field_errors": ["Invalid input."]}
    field, messages = next(iter(errors.items()))
    body = {"detail": f"{field}: {messages[0]}", "errors": errors}
    if "E195" in codes:
        body["code"] = "E195"
    elif codes and codes[0]:
        body["code"] = codes[0]
    return Response(body, status=status.HTTP_400_BAD_REQUEST)


def parse_error(message: str, code: str = "parse_error") -> Response:
    return Response(
        {"detail": message, "code": code, "errors": {"body": [message]}},
        status=status.HTTP_400_BAD_REQUEST,
    )


def exception_handler(exc, context):
    if isinstance(exc, RecursionError):
        # Only input nests deeply enough to exhaust the stack: the JSON parser (DRF catches
        # ValueError, not RecursionError) or encoding what it produced.
        return parse_error("JSON parse error - the document is nested too deeply.")
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return parse_error(f"The request body is larger than {limit} bytes.", code="too_large")
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(django_detail(exc))
    if isinstance(exc, (ObjectDoesNotExist, Http404)):
        # One message for every missing or hidden object: it names no model or query.
        exc = exceptions.NotFound()
    if isinstance(exc, Conflict):
        return Response({"detail": exc.detail, "code": exc.code}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, exceptions.ValidationError):
        return validation_response(exc.detail)
    if isinstance(exc, exceptions.ParseError):
        return parse_error(str(exc.detail))
    return drf_exception_handler(exc, context)


def not_found(request, exception):
    """The site's 404 handler: a URL under /api/ that matches no route answers the API's 404
    body, like every other 404 of the API; anything else gets the HTML page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)
