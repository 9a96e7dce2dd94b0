"""The verify gate's verdict as pure functions (EVALSETS.md "Reading values", "The verdict").

Nothing here touches the ORM: a summary is a plain mapping, a checkpoint a small dataclass. A
value that cannot be read is ``None`` (not measurable) — never 0, never infinity — and every
caller treats ``None`` as "write nothing".
"""

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from loopweb import stats

#: Floating-point slack of every comparison that decides a regression.
SLACK = 1e-9

#: The older, time-only spelling of the schedule: 1 d, 7 d, 30 d.
DEFAULT_HORIZONS_MS = (86_400_000, 604_800_000, 2_592_000_000)

#: Fields whose ``min_effect.points`` scale with the baseline run's total.
COUNT_FIELDS = frozenset({"passed", "failed", "total"})

HELD = "held"
REGRESSED = "regressed"
HELD_COSTLIER = "held_costlier"
#: Worse by more than the tolerance, but not by more than chance explains (the opt-in
#: significance policy): no revert draft, no advisory flag.
INCONCLUSIVE = "inconclusive"
#: A result's verdict: one of these (the model's choices).
VERDICTS = (HELD, REGRESSED, HELD_COSTLIER, INCONCLUSIVE)

WITHIN = "within"
BREACHED = "breached"
NOT_MEASURABLE = "not_measurable"
#: A result's cost read, when its policy bounds the cost: one of these.
COST_STATUSES = (WITHIN, BREACHED, NOT_MEASURABLE)

Summary = Mapping[str, Any]


def number(raw: Any) -> float | int | None:
    """A finite JSON number, or None. A boolean is not a number."""
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        return None
    if isinstance(raw, float) and not math.isfinite(raw):
        return None
    return raw


def _finite(result: float) -> float | None:
    return result if math.isfinite(result) else None


def value(summary: Summary, field: str) -> float | int | None:
    """Read ``field`` from a run summary; None when it is missing or undefined."""
    if not isinstance(summary, Mapping):
        return None
    if field in ("total", "error_rate"):
        passed, failed = number(summary.get("passed")), number(summary.get("failed"))
        if passed is None or failed is None:
            return None
        total = _finite(passed + failed)  # two huge counts overflow to infinity
        if field == "total" or total is None:
            return total
        return _finite(failed / total) if total else None
    if field == "tokens":
        tokens_in = number(summary.get("input_tokens"))
        tokens_out = number(summary.get("output_tokens"))
        if tokens_in is None or tokens_out is None:
            return None
        return _finite(tokens_in + tokens_out)
    if field in ("usd", "cost_per_pass"):
        micros = number(summary.get("usd_micros"))
        if micros is None:
            return None
        usd = micros / 1e6
        if field == "usd":
            return usd
        passed = number(summary.get("passed"))
        return _finite(usd / passed) if passed else None
    return number(summary.get(field))


def tolerance(
    min_effect: Mapping[str, float] | None, field: str, baseline: Summary
) -> float | None:
    """How far a value may move the wrong way before it is a regression (None: unreadable)."""
    if not min_effect:
        return 0.0
    if "count" in min_effect:
        return float(min_effect["count"])
    points = float(min_effect["points"])
    if field in COUNT_FIELDS:
        total = value(baseline, "total")
        if total is None:
            return None
        return points / 100 * total
    return points / 100


def regressed(baseline: float, current: float, tol: float, higher_is_better: bool) -> bool:
    """Worse by more than the tolerance plus floating-point slack; equal is never worse."""
    if higher_is_better:
        return current < baseline - tol - SLACK
    return current > baseline + tol + SLACK


@dataclass(frozen=True, slots=True)
class CostBound:
    field: str
    max_increase_ratio: float


@dataclass(frozen=True, slots=True)
class CostRead:
    status: str  # within | breached | not_measurable
    baseline: float | None
    current: float | None


def _cost(summary: Summary, field: str) -> float | None:
    # A cost below zero is malformed: a ratio bound over it would mean nothing.
    cost = value(summary, field)
    return None if cost is None or cost < 0 else cost


def read_cost(bound: CostBound, baseline: Summary, current: Summary) -> CostRead:
    """Compare the current run's cost with ``ratio × `` the baseline run's cost."""
    before, after = _cost(baseline, bound.field), _cost(current, bound.field)
    if before is None or after is None:
        return CostRead(NOT_MEASURABLE, before, after)
    status = BREACHED if after > bound.max_increase_ratio * before else WITHIN
    return CostRead(status, before, after)


@dataclass(frozen=True, slots=True)
class Judgement:
    baseline: float
    current: float
    tolerance: float
    verdict: str
    cost: CostRead | None
    # With a significance policy: Fisher's exact p-value of the two runs' passed of total, and
    # the cases per run that would tell their two pass rates apart at 80 % power.
    p_value: float | None = None
    cases_needed: int | None = None


def _count(summary: Summary, key: str) -> int | None:
    raw = number(summary.get(key)) if isinstance(summary, Mapping) else None
    if raw is None or raw < 0 or raw != int(raw):
        return None
    return int(raw)


def passes(summary: Summary) -> tuple[int, int] | None:
    """A run's ``(passed, total)``, None unless both counts read as whole numbers."""
    passed, failed = _count(summary, "passed"), _count(summary, "failed")
    if passed is None or failed is None:
        return None
    return passed, passed + failed


def significance(
    baseline: Summary, current: Summary, alpha: float
) -> tuple[float, int | None] | None:
    """Fisher's exact test (two-sided) of the baseline run's passed of total against the current
    run's, and the cases per run a test needs to tell their rates apart (``loopweb.stats``);
    None when either run's counts do not read."""
    before, after = passes(baseline), passes(current)
    if before is None or after is None:
        return None
    p = stats.fisher(*before, *after)
    rates = [passed / total for passed, total in (before, after) if total]
    needed = stats.runs_needed(rates[0], rates[1], alpha) if len(rates) == 2 else None
    return p, needed


def judge(
    *,
    field: str,
    higher_is_better: bool,
    baseline: Summary,
    current: Summary,
    min_effect: Mapping[str, float] | None = None,
    cost: CostBound | None = None,
    alpha: float | None = None,
) -> Judgement | None:
    """One checkpoint's verdict, or None when either side is not measurable.

    With ``alpha`` (a significance policy, on ``passed`` or ``failed``), a drop past the
    tolerance is regressed only when Fisher's exact p-value is below ``alpha``, else
    inconclusive; a run whose counts do not read is not measurable.
    """
    before, after = value(baseline, field), value(current, field)
    tol = tolerance(min_effect, field, baseline)
    if before is None or after is None or tol is None:
        return None
    tested = significance(baseline, current, alpha) if alpha is not None else None
    if alpha is not None and tested is None:
        return None
    p_value, needed = tested if tested is not None else (None, None)
    cost_read = read_cost(cost, baseline, current) if cost else None
    if regressed(before, after, tol, higher_is_better):
        verdict = REGRESSED if p_value is None or alpha is None or p_value < alpha else INCONCLUSIVE
    elif cost_read is not None and cost_read.status == BREACHED:
        verdict = HELD_COSTLIER
    else:
        verdict = HELD
    return Judgement(before, after, tol, verdict, cost_read, p_value, needed)


def best(values: Iterable[float], higher_is_better: bool) -> float | None:
    """The best of some values (max when higher is better, else min); None when empty."""
    values = list(values)
    if not values:
        return None
    return max(values) if higher_is_better else min(values)


# The schedule ---------------------------------------------------------------------------------

AFTER_MS = "after_ms"
AFTER_RUNS = "after_runs"
AFTER_GRAINS = "after_grains"
#: Time checkpoints first, then runs, then grains.
KINDS = (AFTER_MS, AFTER_RUNS, AFTER_GRAINS)


@dataclass(frozen=True, slots=True, order=True)
class Checkpoint:
    rank: int  # position of ``kind`` in KINDS: orders the schedule
    after: int

    @classmethod
    def of(cls, kind: str, after: int) -> "Checkpoint":
        return cls(KINDS.index(kind), after)

    @classmethod
    def from_json(cls, data: Mapping[str, int]) -> "Checkpoint":
        ((kind, after),) = data.items()
        return cls.of(kind, after)

    @property
    def kind(self) -> str:
        return KINDS[self.rank]

    def as_json(self) -> dict[str, int]:
        return {self.kind: self.after}

    def __str__(self) -> str:
        return f"{self.kind}: {self.after}"


def effective_schedule(
    checkpoints: Iterable[Checkpoint], horizons_ms: Iterable[int] = DEFAULT_HORIZONS_MS
) -> list[Checkpoint]:
    """Checkpoints when any are given, else the horizons as time checkpoints; sorted, unique."""
    chosen = list(checkpoints) or [Checkpoint.of(AFTER_MS, ms) for ms in horizons_ms]
    return sorted(set(chosen))


@dataclass(frozen=True, slots=True)
class Progress:
    """What has happened since the apply, as of the moment of measuring."""

    applied_at: datetime
    now: datetime
    runs: int  # evalset runs journaled at or after the apply
    grains: int  # runs of any kind pushed to Loopweb at or after the apply


def is_due(checkpoint: Checkpoint, progress: Progress) -> bool:
    if checkpoint.kind == AFTER_MS:
        elapsed = progress.now - progress.applied_at
        return elapsed >= timedelta(0) and elapsed // timedelta(milliseconds=1) >= checkpoint.after
    if checkpoint.kind == AFTER_RUNS:
        return progress.runs >= checkpoint.after
    return progress.grains >= checkpoint.after


def due_at(checkpoint: Checkpoint, applied_at: datetime) -> datetime | None:
    """When a time checkpoint comes due (None for the others, or past the calendar's end)."""
    if checkpoint.kind != AFTER_MS:
        return None
    try:
        return applied_at + timedelta(milliseconds=checkpoint.after)
    except OverflowError:
        return None


# Who the gate measures ------------------------------------------------------------------------

SKIP_HUMAN = "authored_by_human"
SKIP_NOT_APPLICABLE = "not_applicable"
SKIP_NO_BASELINE = "no_baseline_run"

SKIP_REASONS = {
    SKIP_HUMAN: "The gate measures only LLM-authored proposals.",
    SKIP_NOT_APPLICABLE: "The gate measures only applicable proposals.",
    SKIP_NO_BASELINE: (
        "No run of the evalset was journaled before the proposal was created, so it carries "
        "no metric."
    ),
}


def skip_reason(*, authored_by: str, applicable: bool, has_baseline_run: bool) -> str | None:
    """Why the gate does not measure a proposal, or None when it does."""
    if authored_by != "llm":
        return SKIP_HUMAN
    if not applicable:
        return SKIP_NOT_APPLICABLE
    if not has_baseline_run:
        return SKIP_NO_BASELINE
    return None
