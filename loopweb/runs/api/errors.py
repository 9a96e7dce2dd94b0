"""One error shape for every 4xx: ``{"detail", "code"?, "errors": {field: [message, ...]}}``.

Nested field names are joined with dots (``gate.floor``, ``rungs.3.case``).
"""

from django.core.exceptions import ObjectDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
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
    return {"non_field_errors": [ErrorDetail(m, code=e.code) for e in exc.error_list for m in e.messages]}


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
    field, messages = next(iter(errors.items()))
    body = {"detail": f"{field}: {messages[0]}", "errors": errors}
    if "E195" in codes:
        body["code"] = "E195"
    elif codes and codes[0]:
        body["code"] = codes[0]
    return Response(body, status=status.HTTP_400_BAD_REQUEST)


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(django_detail(exc))
    if isinstance(exc, ObjectDoesNotExist) and not isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, Conflict):
        return Response({"detail": exc.detail, "code": exc.code}, status=status.HTTP_409_CONFLICT)
    if isinstance(exc, exceptions.ValidationError):
        return validation_response(exc.detail)
    if isinstance(exc, exceptions.ParseError):
        return Response(
            {"detail": str(exc.detail), "code": "parse_error", "errors": {"body": [str(exc.detail)]}},
            status=status.HTTP_400_BAD_REQUEST,
        )
    return drf_exception_handler(exc, context)
