"""Reading an ``outcome_evalset`` policy (seed 003) from JSON, with field-level errors.

Pure: ``parse_policy`` takes what a client sent and returns a ``Policy`` or raises ``Invalid``
whose keys are dotted paths inside the policy (``checkpoints.1``, ``min_effect``).
"""

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalsets.verdict import (
    DEFAULT_HORIZONS_MS,
    KINDS,
    Checkpoint,
    CostBound,
    effective_schedule,
)
from loopweb.runs.checks import Errors, Invalid
from loopweb.runs.formats import NOT_BLANK, Format, Given, nullable
from loopweb.runs.numbers import json_integer

#: The engine stores counts and milliseconds as i64.
MAX_COUNT = 2**63 - 1
MAX_SCHEDULE = 100
MAX_FIELD = 100

NEWEST_BEFORE_APPLY = "newest_before_apply"
HIGH_WATER = "high_water"
BASELINE_KINDS = (NEWEST_BEFORE_APPLY, HIGH_WATER)

#: Fields whose runs carry a count of passes out of a total (``passed + failed``): the ones an
#: exact test can read.
COUNTED_FIELDS = ("passed", "failed")


@dataclass(frozen=True)
class Policy:
    hash: str
    field: str
    higher_is_better: bool
    horizons_ms: tuple[int, ...] = DEFAULT_HORIZONS_MS
    checkpoints: tuple[Checkpoint, ...] = ()
    baseline: str = NEWEST_BEFORE_APPLY
    min_effect: dict[str, float] | None = dataclasses.field(default=None, hash=False)
    cost: CostBound | None = None
    # The significance level of the opt-in test (EVALSETS.md "Significance"); None: no test.
    alpha: float | None = None

    def schedule(self) -> list[Checkpoint]:
        """The effective schedule: checkpoints when set, else horizons_ms as time checkpoints."""
        return effective_schedule(self.checkpoints, self.horizons_ms)

    @property
    def metric(self) -> str:
        return f"evalset:{self.hash}:{self.field}"

    def as_json(self) -> dict[str, Any]:
        """The canonical policy, every default spelled out."""
        return {
            "hash": self.hash,
            "field": self.field,
            "higher_is_better": self.higher_is_better,
            "horizons_ms": list(self.horizons_ms),
            "checkpoints": [c.as_json() for c in self.checkpoints],
            "baseline": self.baseline,
            "min_effect": dict(self.min_effect) if self.min_effect else None,
            "cost": (
                {"field": self.cost.field, "max_increase_ratio": self.cost.max_increase_ratio}
                if self.cost
                else None
            ),
            "significance": {"alpha": self.alpha} if self.alpha is not None else None,
        }


def _count(raw: Any) -> int | str:
    """A non-negative JSON integer (3 or 3.0; booleans, 3.5 and strings such as "1d" are not),
    or what is wrong with it."""
    value = json_integer(raw)
    if value is None:
        return "Must be a non-negative integer (a bare number of milliseconds or a count)."
    if value < 0:
        return "Must not be negative."
    if value > MAX_COUNT:
        return f"Must be at most {MAX_COUNT}."
    return value


def _number(raw: Any) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    try:
        raw = float(raw)
    except OverflowError:
        return None
    return raw if math.isfinite(raw) else None


def _as_given(raw: Any, number: float) -> int | float:
    """Keep an integer an integer, so the policy echoes back as it was sent."""
    return raw if isinstance(raw, int) else number


def _name(raw: Any) -> str | None:
    if isinstance(raw, str) and raw.strip() and len(raw) <= MAX_FIELD:
        return raw
    return None


def _checkpoint(raw: Any, path: str, errors: Errors) -> Checkpoint | None:
    if isinstance(raw, Mapping):
        if len(raw) != 1:
            errors.add(
                path,
                'A checkpoint is one of {"after_ms": n}, {"after_runs": n} or '
                '{"after_grains": n}, with exactly one key.',
            )
            return None
        ((kind, after),) = raw.items()
        if kind not in KINDS:
            errors.add(path, f"Unknown key {kind!r}; use after_ms, after_runs or after_grains.")
            return None
        count = _count(after)
        if isinstance(count, str):
            errors.add(path, f"{kind}: {count}")
            return None
        return Checkpoint.of(kind, count)
    count = _count(raw)
    if isinstance(count, str):
        errors.add(path, count)
        return None
    return Checkpoint.of("after_ms", count)


def _list(raw: Any, path: str, errors: Errors) -> list[Any] | None:
    if not isinstance(raw, list):
        errors.add(path, "Must be a list.")
        return None
    if len(raw) > MAX_SCHEDULE:
        errors.add(path, f"At most {MAX_SCHEDULE} entries.")
        return None
    return raw


def _min_effect(raw: Any, errors: Errors) -> dict[str, float] | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add("min_effect", 'Must be {"count": x} or {"points": p}.')
        return None
    for key in raw:
        if key not in ("count", "points"):
            errors.add(f"min_effect.{key}", "Unknown key; use count or points.")
    given = [key for key in ("count", "points") if key in raw]
    if len(given) != 1:
        errors.add("min_effect", 'Give exactly one of "count" and "points".')
        return None
    (key,) = given
    amount = _number(raw[key])
    if amount is None:
        errors.add(f"min_effect.{key}", "Must be a finite number.")
        return None
    if amount < 0:
        errors.add(f"min_effect.{key}", "Must not be negative.")
        return None
    return {key: _as_given(raw[key], amount)}


def _cost(raw: Any, errors: Errors) -> CostBound | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add("cost", 'Must be {"field": f, "max_increase_ratio": r}.')
        return None
    for key in raw:
        if key not in ("field", "max_increase_ratio"):
            errors.add(f"cost.{key}", "Unknown key; use field and max_increase_ratio.")
    name = _name(raw.get("field"))
    if name is None:
        errors.add("cost.field", f"Must be a summary field name of 1-{MAX_FIELD} characters.")
    ratio = _number(raw.get("max_increase_ratio"))
    if ratio is None or ratio <= 0:
        errors.add("cost.max_increase_ratio", "Must be a finite number greater than 0.")
        return None
    return CostBound(name, _as_given(raw["max_increase_ratio"], ratio)) if name else None


SIGNIFICANCE_RULE = 'Must be {"alpha": a} with a a number between 0 and 0.5 (both excluded).'


def _significance(raw: Any, errors: Errors) -> float | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        errors.add("significance", SIGNIFICANCE_RULE)
        return None
    for key in raw:
        if key != "alpha":
            errors.add(f"significance.{key}", "Unknown key; use alpha.")
    alpha = _number(raw.get("alpha"))
    if alpha is None or not 0 < alpha < 0.5:
        errors.add("significance.alpha", "Must be a number between 0 and 0.5 (both excluded).")
        return None
    return alpha


def _horizons(raw: Mapping[str, Any], errors: Errors) -> list[int]:
    horizons: list[int] = list(DEFAULT_HORIZONS_MS)
    if raw.get("horizons_ms") is not None:
        items = _list(raw["horizons_ms"], "horizons_ms", errors)
        if items is not None:
            horizons = []
            for index, item in enumerate(items):
                count = _count(item)
                if isinstance(count, str):
                    errors.add(f"horizons_ms.{index}", count)
                else:
                    horizons.append(count)
    return horizons


def _checkpoints(raw: Mapping[str, Any], errors: Errors) -> list[Checkpoint]:
    checkpoints: list[Checkpoint] = []
    if raw.get("checkpoints") is not None:
        items = _list(raw["checkpoints"], "checkpoints", errors)
        for index, item in enumerate(items or []):
            checkpoint = _checkpoint(item, f"checkpoints.{index}", errors)
            if checkpoint is not None:
                checkpoints.append(checkpoint)
    return checkpoints


def _hash(raw: Mapping[str, Any], path: str, errors: Errors) -> str | None:
    value = raw.get("hash")
    if not isinstance(value, str) or not value:
        errors.add(path, "Must be the hash of an evalset.")
        return None
    return value


def _field(raw: Mapping[str, Any], path: str, errors: Errors) -> str | None:
    name = _name(raw.get("field"))
    if name is None:
        errors.add(path, f"Must be a summary field name of 1-{MAX_FIELD} characters.")
    return name


def _higher_is_better(raw: Mapping[str, Any], path: str, errors: Errors) -> bool | None:
    value = raw.get("higher_is_better")
    if not isinstance(value, bool):
        errors.add(path, "Required: true or false (there is no default).")
        return None
    return value


def _baseline(raw: Mapping[str, Any], path: str, errors: Errors) -> str | None:
    value = raw.get("baseline")
    if value is None:
        return NEWEST_BEFORE_APPLY
    if value not in BASELINE_KINDS:
        errors.add(path, "Must be newest_before_apply or high_water.")
        return None
    return str(value)


_SCHEDULE_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}
_FIELD_NAME = {"type": "string", "maxLength": MAX_FIELD, "pattern": NOT_BLANK}
_AMOUNT = {"type": "number", "minimum": 0}
_CHECKPOINT = {
    "anyOf": [
        {**_SCHEDULE_COUNT, "description": "A bare integer is milliseconds."},
        {
            "type": "object",
            "minProperties": 1,
            "maxProperties": 1,
            "additionalProperties": False,
            "properties": {kind: _SCHEDULE_COUNT for kind in KINDS},
        },
    ]
}

#: The ``outcome_evalset`` policy (seed 003): each field's check and, beside it, its schema.
POLICY = Format(
    "OutcomeEvalsetInput",
    description="The OutcomeEvalset policy (seed 003).",
    fields=(
        Given(
            "hash",
            required=True,
            check=_hash,
            json_schema={"type": "string", "pattern": "^[0-9a-f]{1,64}$"},
        ),
        Given("field", required=True, check=_field, json_schema=_FIELD_NAME),
        Given(
            "higher_is_better",
            required=True,
            check=_higher_is_better,
            json_schema={"type": "boolean"},
        ),
        Given(
            "horizons_ms",
            check=lambda raw, path, errors: _horizons(raw, errors),
            json_schema={
                "type": ["array", "null"],
                "maxItems": MAX_SCHEDULE,
                "items": _SCHEDULE_COUNT,
            },
        ),
        Given(
            "checkpoints",
            check=lambda raw, path, errors: _checkpoints(raw, errors),
            json_schema={
                "type": ["array", "null"],
                "maxItems": MAX_SCHEDULE,
                "items": _CHECKPOINT,
            },
        ),
        Given("baseline", check=_baseline, json_schema={"enum": [*BASELINE_KINDS, None]}),
        Given(
            "min_effect",
            check=lambda raw, path, errors: _min_effect(raw.get("min_effect"), errors),
            json_schema=nullable(
                {
                    "type": "object",
                    "additionalProperties": False,
                    "minProperties": 1,
                    "maxProperties": 1,
                    "properties": {"count": _AMOUNT, "points": _AMOUNT},
                }
            ),
        ),
        Given(
            "cost",
            check=lambda raw, path, errors: _cost(raw.get("cost"), errors),
            json_schema=nullable(
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["field", "max_increase_ratio"],
                    "properties": {
                        "field": _FIELD_NAME,
                        "max_increase_ratio": {"type": "number", "exclusiveMinimum": 0},
                    },
                }
            ),
        ),
        Given(
            "significance",
            check=lambda raw, path, errors: _significance(raw.get("significance"), errors),
            json_schema=nullable(
                {
                    "type": "object",
                    "description": "Opt-in, for field passed or failed: a drop regresses only "
                    "when Fisher's exact test on the two runs' passed of total gives p < alpha; "
                    "otherwise it is inconclusive (EVALSETS.md, docs/statistics.md).",
                    "additionalProperties": False,
                    "required": ["alpha"],
                    "properties": {
                        "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5}
                    },
                }
            ),
        ),
    ),
    also={
        "allOf": [
            # An empty horizons_ms with no checkpoints leaves nothing to measure.
            {
                "if": {
                    "required": ["horizons_ms"],
                    "properties": {"horizons_ms": {"type": "array", "maxItems": 0}},
                },
                "then": {
                    "required": ["checkpoints"],
                    "properties": {"checkpoints": {"type": "array", "minItems": 1}},
                },
            },
            # The exact test reads passed of total: only passed and failed can have a
            # significance.
            {
                "if": {
                    "required": ["significance"],
                    "properties": {"significance": {"type": "object"}},
                },
                "then": {"properties": {"field": {"enum": list(COUNTED_FIELDS)}}},
            },
        ]
    },
    unknown=("Unknown key.", "invalid"),
)


def parse_policy(raw: Any) -> Policy:
    """Validate a policy as sent; raise ``Invalid`` naming every offending field."""
    if not isinstance(raw, Mapping):
        raise Invalid({"": ["Must be an object."]})
    errors = Errors()
    given = POLICY.read(raw, "", errors)
    horizons, checkpoints = given["horizons_ms"], given["checkpoints"]
    schedule_errors = any(key.startswith(("horizons_ms", "checkpoints")) for key in errors)
    if not checkpoints and not horizons and not schedule_errors:
        errors.add("horizons_ms", "The schedule is empty; omit horizons_ms for 1d, 7d and 30d.")
    field_name, alpha = given["field"], given["significance"]
    if alpha is not None and field_name is not None and field_name not in COUNTED_FIELDS:
        errors.add(
            "significance",
            "Only for field passed or failed: the test reads passed of total (passed + failed).",
        )
        alpha = None
    errors.raise_if_any()
    # Each was checked above, or ``errors`` was raised.
    evalset_hash, higher_is_better = given["hash"], given["higher_is_better"]
    assert isinstance(evalset_hash, str) and field_name is not None
    assert isinstance(higher_is_better, bool)
    return Policy(
        hash=evalset_hash,
        field=field_name,
        higher_is_better=higher_is_better,
        horizons_ms=tuple(horizons),
        checkpoints=tuple(checkpoints),
        baseline=given["baseline"],
        min_effect=given["min_effect"],
        cost=given["cost"],
        alpha=alpha,
    )
