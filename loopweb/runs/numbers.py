"""Numbers as clients send them. Pure.

``json_integer`` reads a JSON body's integer as JSON Schema does; ``typed_integer`` reads one
typed into a query parameter or a form field. Every integer the API's query parameters, its
pagination and the console's forms take goes through ``typed_integer``, so none of them meets
``int()``'s own rules: it refuses more than 4,300 digits with a ValueError, and reads
``'²'.isdigit()`` as a digit that ``int()`` then refuses.
"""

import math
import re

#: An id or a count: ASCII digits, as many as a 64-bit integer holds at most.
TYPED_INTEGER = re.compile(r"[0-9]{1,18}")

#: The largest value an id column (PostgreSQL's bigint) holds.
MAX_ID = 2**63 - 1


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


def typed_integer(raw: object, *, low: int = 0, high: int = MAX_ID) -> int | None:
    """A non-negative integer typed as ASCII digits and nothing else (no sign, space, exponent,
    base prefix or other script's digit), within ``low``–``high``; None when it is not one."""
    if not isinstance(raw, str) or not TYPED_INTEGER.fullmatch(raw):
        return None
    value = int(raw)
    return value if low <= value <= high else None
