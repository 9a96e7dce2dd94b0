"""The substrate's errors, and validation errors read by dotted path (``gate.floor``,
``rungs.3.case``): the API's error shape and the console's forms both read them so."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework.exceptions import ErrorDetail


class Conflict(Exception):
    """The request is valid but the object's state forbids it (answered 409)."""

    def __init__(self, detail: str, code: str = "conflict"):
        super().__init__(detail)
        self.detail = detail
        self.code = code


class NotReviewable(Http404):
    """The caller may not review this run (answered 404, as for a run they cannot see, so a
    refusal reveals nothing about it)."""


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
