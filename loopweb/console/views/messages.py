"""Service errors worded for the console's message area."""

from django.contrib import messages
from django.core.exceptions import ValidationError

from loopweb.console.forms import service_errors


def error_lines(exc: ValidationError) -> list[str]:
    lines = []
    for key, texts in service_errors(exc).items():
        parts = key.split(".")
        where = ""
        if parts[0] == "rungs" and len(parts) > 1 and parts[1].isdigit():
            where = f"Rung {int(parts[1]) + 1}: "
        lines += [where + text for text in texts]
    return lines


def report_invalid(request, exc: ValidationError, prefix: str) -> None:
    for line in error_lines(exc):
        messages.error(request, f"{prefix} {line}")
