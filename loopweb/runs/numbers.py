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


#: The largest count a run's ``record.metrics`` may report (tokens, micro-dollars, ms): a
#: billion dollars in micro-dollars, and far more tokens or time than a run takes.
METRIC_MAX = 10**15
#: ``runtime_s`` at most: about 31 years.
RUNTIME_MAX = 10**9


def metric_integer(value: object) -> int | None:
    """A count a run's metrics reports: a JSON integer from 0 to ``METRIC_MAX``; else None."""
    found = json_integer(value)
    return found if found is not None and 0 <= found <= METRIC_MAX else None


def runtime_seconds(value: object) -> bool:
    """Whether ``value`` is a number of seconds a run could take (finite, 0 to RUNTIME_MAX)."""
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and 0 <= value <= RUNTIME_MAX
    )


#: The counts a run record's ``metrics`` may report (what a dispatch's totals add up).
METRIC_COUNTS = ("input_tokens", "output_tokens", "usd_micros", "wall_ms")


def metric_problems(record: object) -> dict[str, str]:
    """Why the known numbers of a run record's ``metrics`` cannot be stored, by path in the record:
    each count null or a ``metric_integer``; ``runtime_s`` null, a ``runtime_seconds``, or not
    a number at all (the signals refuse that one with their own code, E195). Other keys are the
    driver's own."""
    metrics = record.get("metrics") if isinstance(record, dict) else None
    if not isinstance(metrics, dict):
        return {}
    problems = {}
    for key in METRIC_COUNTS:
        value = metrics.get(key)
        if value is not None and metric_integer(value) is None:
            problems[f"metrics.{key}"] = (
                f"{key} is a whole number from 0 to {METRIC_MAX:,}, or null."
            )
    runtime = metrics.get("runtime_s")
    number = isinstance(runtime, int | float) and not isinstance(runtime, bool)
    if number and not runtime_seconds(runtime):
        problems["metrics.runtime_s"] = (
            f"runtime_s is a number of seconds from 0 to {RUNTIME_MAX:,}, or null."
        )
    return problems
