"""Checks of what clients send, with no queries: an evalset's pins and a run's summary.

A pin's parts use the substrate's cell-key alphabet (``PIN_PART``), so a pin is always a cell.
"""

import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from loopweb.runs.checks import Errors, Invalid
from loopweb.runs.formats import NO_NUL, Format, Given, ref
from loopweb.runs.models.catalog import PIN_PART
from loopweb.runs.numbers import json_integer

MAX_PINS = 500
MAX_SUMMARY_KEYS = 200
MAX_KEY = 100
#: Summary integers are stored like the engine stores them: as i64.
MAX_INT = 2**63 - 1

SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,100}$")
PIN_KEYS = ("case", "version", "variant", "engine")
REQUIRED_COUNTS = ("passed", "failed")
UNKNOWN_PIN_KEY = "Unknown key; a pin is {case, version, variant, engine}."


def _matching(
    key: str,
    pattern: re.Pattern,
    message: str,
    *,
    default: str | None = None,
    nullable: bool = False,
):
    """A pin part's check: a string matching ``pattern`` whole (null allowed if ``nullable``)."""

    def check(raw: Mapping[str, Any], path: str, errors: Errors) -> str | None:
        value = raw.get(key, default)
        if value is None and nullable:
            return None
        if not isinstance(value, str) or not pattern.fullmatch(value):
            errors.add(path, message)
        return value

    return check


_PART = {"type": "string", "pattern": PIN_PART.regex.pattern}

#: A pin of an evalset: ``{case, version, variant, engine}`` in the cell-key alphabet.
PIN = Format(
    "PinInput",
    fields=(
        Given(
            "case",
            required=True,
            check=_matching("case", SLUG, "Must be a case slug."),
            json_schema={"type": "string", "pattern": SLUG.pattern},
        ),
        Given(
            "version",
            required=True,
            check=_matching("version", PIN_PART.regex, str(PIN_PART.message)),
            json_schema=_PART,
        ),
        Given(
            "variant",
            check=_matching("variant", PIN_PART.regex, str(PIN_PART.message), default="default"),
            json_schema=_PART,
            description='"default" when absent.',
        ),
        Given(
            "engine",
            check=_matching(
                "engine", PIN_PART.regex, "Must be null or an engine name.", nullable=True
            ),
            json_schema={"type": ["string", "null"], "pattern": PIN_PART.regex.pattern},
        ),
    ),
    unknown=(UNKNOWN_PIN_KEY, "invalid"),
)

#: An evalset's pins: at least one, at most ``MAX_PINS``, none twice.
PINS = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_PINS,
    "uniqueItems": True,
    "items": ref(PIN.name),
}


def canonical_pins(raw: Any) -> list[dict[str, str | None]]:
    """Pins as ``{case, version, variant, engine}`` in the order given; raise ``Invalid``."""
    if not isinstance(raw, list) or not raw:
        raise Invalid({"": ["Give a non-empty list of case pins."]})
    if len(raw) > MAX_PINS:
        raise Invalid({"": [f"At most {MAX_PINS} pins."]})
    errors = Errors()
    pins: list[dict[str, str | None]] = []
    seen: set[tuple] = set()
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            errors.add(str(index), "A pin is {case, version, variant, engine}.")
            continue
        pin = PIN.read(item, str(index), errors)
        if any(key.startswith(f"{index}.") for key in errors):
            continue
        identity = tuple(pin[key] for key in PIN_KEYS)
        if identity in seen:
            errors.add(str(index), "This pin is already in the evalset.")
            continue
        seen.add(identity)
        pins.append(pin)
    errors.raise_if_any()
    return pins


def pins_hash(pins: list[dict[str, str | None]]) -> str:
    """A stable digest of the pins: the same pins, in any order, give the same hash."""
    canonical = sorted(
        json.dumps([pin["case"], pin["version"], pin["variant"], pin["engine"]]) for pin in pins
    )
    return hashlib.sha256("\n".join(canonical).encode()).hexdigest()[:16]


def _json_number(raw: Any) -> bool:
    """A JSON number in the engine's i64 range, whether written as an integer or not."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return False
    if isinstance(raw, float) and not math.isfinite(raw):
        return False
    return -MAX_INT - 1 <= raw <= MAX_INT


_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_INT}

#: A run's summary as ``check_summary`` reads it (its OpenAPI component).
SUMMARY = {
    "type": "object",
    "description": "passed and failed (non-negative integers) and any other numbers the host "
    "chooses.",
    "required": list(REQUIRED_COUNTS),
    "maxProperties": MAX_SUMMARY_KEYS,
    "propertyNames": {"minLength": 1, "maxLength": MAX_KEY, "pattern": NO_NUL},
    "properties": {key: _COUNT for key in REQUIRED_COUNTS},
    "additionalProperties": {"type": "number", "minimum": -MAX_INT - 1, "maximum": MAX_INT},
}


def check_summary(raw: Any) -> dict[str, int | float]:
    """A run summary: ``passed`` and ``failed`` non-negative integers, every other key a number."""
    if not isinstance(raw, Mapping):
        raise Invalid({"": ["Must be an object with at least passed and failed."]})
    if len(raw) > MAX_SUMMARY_KEYS:
        raise Invalid({"": [f"At most {MAX_SUMMARY_KEYS} keys."]})
    errors = Errors()
    summary = dict(raw)
    for key in REQUIRED_COUNTS:
        count = json_integer(raw.get(key))
        if key not in raw:
            errors.add(key, "This field is required.")
        elif count is None:
            errors.add(key, "Must be a non-negative integer.")
        elif not 0 <= count <= MAX_INT:
            errors.add(key, "Must be a non-negative integer." if count < 0 else "Too large.")
        else:
            summary[key] = count
    for key, item in raw.items():
        if key in REQUIRED_COUNTS:
            continue
        if not key or len(key) > MAX_KEY:
            errors.add(key or "non_field_errors", f"Keys are 1-{MAX_KEY} characters.")
        elif not _json_number(item):
            errors.add(key, f"Must be a number from {-MAX_INT - 1} to {MAX_INT}.")
    errors.raise_if_any()
    return summary
