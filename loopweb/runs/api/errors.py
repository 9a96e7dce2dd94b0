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


def listed(items) -> str:
    """Items as a sentence says them: ``a``, ``a and b``, ``a, b and c``."""
    items = [str(item) for item in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def unknown(what: str, items) -> str:
    """``Unknown user: x.`` / ``Unknown users: x and y.``"""
    items = list(items)
    return f"Unknown {what}{'' if len(items) == 1 else 's'}: {listed(items)}."


def leaves(detail, prefix: str = ""):
    """Every message of a DRF error detail as ``(dotted path, message, code)``, in order."""
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = "non_field_errors" if key == "__all__" else str(key)
            if name == "non_field_errors" and prefix:
                # A nested object's own error is the field's: ``rungs``, not
                # ``rungs.non_field_errors``.
                yield from leaves(value, prefix)
                continue
            yield from leaves(value, f"{prefix}.{name}" if prefix else name)
    elif isinstance(detail, list):
        if all(not isinstance(item, (dict, list)) for item in detail):
            for item in detail:
                yield prefix or "non_field_errors", str(item), getattr(item, "code", None)
        else:
            for index, item in enumerate(detail):
                if item:
                    yield from leaves(item, f"{prefix}.{index}" if prefix else str(index))
    else:
        yield prefix or "non_field_errors", str(detail), getattr(detail, "code", None)


def flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for path, message, _ in leaves(detail, prefix):
        out.setdefault(path, []).append(message)
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
    """A 400 in the API's shape. ``detail`` repeats the first error; when any error is an E195
    violation the body's code is E195 and ``detail`` repeats the first E195 error instead, so
    the code and the field it names always go together."""
    found = list(leaves(detail))
    if not found:
        found = [("non_field_errors", "Invalid input.", None)]
    errors: dict[str, list[str]] = {}
    for path, message, _ in found:
        errors.setdefault(path, []).append(message)
    e195 = [leaf for leaf in found if leaf[2] == "E195"]
    path, message, code = (e195 or found)[0]
    body = {"detail": f"{path}: {message}", "errors": errors}
    if code:
        body["code"] = code
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


# The site's error handlers: under /api/ every error Django answers itself (a request it refuses
# before any view runs, a CSRF failure outside DRF, a crash) is a JSON body in the API's error
# shape, like DRF's; anywhere else it is Django's HTML page.


def is_api(request) -> bool:
    return request.path.startswith("/api/")


def bad_request(request, exception):
    """Django's 400: a suspicious request (too many form fields, a host not allowed, ...)."""
    if is_api(request):
        message = "The request could not be read."
        return JsonResponse(
            {"detail": message, "code": "bad_request", "errors": {"body": [message]}},
            status=400,
        )
    return defaults.bad_request(request, exception)


def permission_denied(request, exception):
    if is_api(request):
        return JsonResponse(
            {"detail": "You do not have permission to perform this action."}, status=403
        )
    return defaults.permission_denied(request, exception)


def not_found(request, exception):
    """A URL under /api/ that matches no route answers the API's 404 body, like every other 404
    of the API."""
    if is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    if is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return defaults.server_error(request)
