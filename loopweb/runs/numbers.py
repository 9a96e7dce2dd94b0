"""JSON numbers as the API's schema (JSON Schema) reads them. Pure."""

import math


def json_integer(value: object) -> int | None:
    """An integer as JSON Schema reads one: a number with no fractional part, so ``3`` and
    ``3.0`` are the same integer; ``3.5``, ``"3"`` and ``true`` are none. None when it is not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None
