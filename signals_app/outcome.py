"""How loopmath reads a run's outcome through an acceptance rule (seed 000). Pure: no ORM.

Each part of the rule reads as ``pass``, ``fail`` or ``unknown`` and names the signal that
decided it. A failing part makes the whole a failure; otherwise an unknown part makes it unknown;
otherwise success. The result is only as trustworthy as the weakest tier among the signals it
used; when it used none, nothing backs it and its tier is ``asserted``.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, cast

State = Literal["pass", "fail", "unknown"]
Result = Literal["success", "failure", "unknown"]

#: Strongest first.
TIERS = ("verified", "measured", "reported", "asserted")
VERDICT_STATES: Mapping[str, State] = {
    "accept": "pass",
    "pass": "pass",
    "reject": "fail",
    "fail": "fail",
    "error": "unknown",
}


@dataclass(frozen=True)
class Observation:
    """A signal as the reader sees it. A run's signals are given in the order they were added."""

    id: str
    kind: str
    name: str
    value: str | int | float | None
    observed_at: datetime
    tier: str


@dataclass(frozen=True)
class ScoreTarget:
    name: str
    target: float
    better: Literal["higher", "lower"]
    scale: str = "linear"


@dataclass(frozen=True)
class Rule:
    requires: tuple[str, ...] = ()
    score: ScoreTarget | None = None
    excludes_events: tuple[str, ...] = ("revert", "incident")
    window_days: int = 14

    @classmethod
    def from_json(cls, rule: Mapping[str, Any]) -> "Rule":
        """A rule already normalized by ``signals_app.acceptance.parse_rule``."""
        score = rule.get("score")
        return cls(
            requires=tuple(rule.get("requires") or ()),
            score=ScoreTarget(
                name=score["name"],
                target=score["target"],
                better=score["better"],
                scale=score.get("scale") or "linear",
            )
            if score
            else None,
            excludes_events=tuple(rule.get("excludes_events") or ()),
            window_days=rule.get("window_days", 14),
        )


@dataclass(frozen=True)
class Part:
    part: Literal["requires", "score", "excludes_events"]
    name: str | None
    state: State
    signal: str | None
    reason: str
    tier: str | None = None


@dataclass(frozen=True)
class Outcome:
    result: Result
    tier: str
    parts: tuple[Part, ...]


def latest(signals: Sequence[Observation], kind: str, name: str) -> Observation | None:
    """The latest signal of a name and kind by observed_at; of equal times, the last added."""
    found = None
    for signal in signals:
        later = found is None or signal.observed_at >= found.observed_at
        if signal.kind == kind and signal.name == name and later:
            found = signal
    return found


def read_verdict(signals: Sequence[Observation], name: str) -> Part:
    signal = latest(signals, "verdict", name)
    if signal is None:
        return Part("requires", name, "unknown", None, f"no {name} verdict yet")
    value = signal.value
    state: State = VERDICT_STATES.get(value, "unknown") if isinstance(value, str) else "unknown"
    return Part(
        "requires", name, state, signal.id, f"latest {name} verdict is {signal.value}", signal.tier
    )


def read_score(signals: Sequence[Observation], target: ScoreTarget) -> Part:
    signal = latest(signals, "score", target.name)
    if signal is None:
        return Part("score", target.name, "unknown", None, f"no {target.name} score yet")
    if signal.value is None:
        return Part(
            "score",
            target.name,
            "unknown",
            signal.id,
            f"{target.name} is declared but not measured yet",
            signal.tier,
        )
    value = cast(float, signal.value)  # a score's value is a number (``rules`` checks it)
    if target.better == "higher":
        reached = value >= target.target
        sign = "≥" if reached else "<"
    else:
        reached = value <= target.target
        sign = "≤" if reached else ">"
    return Part(
        "score",
        target.name,
        "pass" if reached else "fail",
        signal.id,
        f"{target.name} {signal.value} {sign} target {target.target} ({target.better} is better)",
        signal.tier,
    )


def in_window(observed_at: datetime, finished_at: datetime, window_days: int) -> bool:
    """From the run's end to exactly ``window_days`` later, both ends included.

    Events observed before the run's end are not late: they cannot be about its result.
    """
    after = observed_at - finished_at
    return timedelta(0) <= after <= timedelta(days=window_days)


def read_late_events(signals: Sequence[Observation], rule: Rule, finished_at: datetime) -> Part:
    excluded = set(rule.excludes_events)
    first = None
    for signal in signals:
        if (
            signal.kind == "event"
            and signal.name in excluded
            and in_window(signal.observed_at, finished_at, rule.window_days)
            and (first is None or signal.observed_at < first.observed_at)
        ):
            first = signal
    names = " or ".join(rule.excludes_events)
    if first is None:
        return Part(
            "excludes_events",
            None,
            "pass",
            None,
            f"no {names} within {rule.window_days} days of the run's end",
        )
    days = (first.observed_at - finished_at) / timedelta(days=1)
    return Part(
        "excludes_events",
        first.name,
        "fail",
        first.id,
        f"{first.name} {first.value} observed {days:.1f} days after the run's end",
        first.tier,
    )


def weakest(tiers: Sequence[str]) -> str:
    if not tiers:
        return "asserted"
    return max(tiers, key=TIERS.index)


def read_outcome(rule: Rule, signals: Sequence[Observation], finished_at: datetime) -> Outcome:
    parts = [read_verdict(signals, name) for name in rule.requires]
    if rule.score is not None:
        parts.append(read_score(signals, rule.score))
    if rule.excludes_events:
        parts.append(read_late_events(signals, rule, finished_at))
    states = {part.state for part in parts}
    if "fail" in states:
        result: Result = "failure"
    elif "unknown" in states:
        result = "unknown"
    else:
        result = "success"
    tier = weakest([part.tier for part in parts if part.tier is not None])
    return Outcome(result=result, tier=tier, parts=tuple(parts))


def against_threshold(
    kind: str, value: object, threshold: float | None, better: str | None
) -> State | None:
    """A score read against its own ``threshold`` ("turns a score into pass or fail").

    ``pass`` when the value reaches the threshold in the score's ``better`` direction (at least
    it when higher is better, at most when lower; equal passes), else ``fail``. None when there
    is nothing to read: not a score, no threshold, no direction, or a score not measured yet.
    The acceptance rule never reads this: its score part compares with the rule's own target.
    """
    if kind != "score" or threshold is None or better not in ("higher", "lower"):
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    reached = value >= threshold if better == "higher" else value <= threshold
    return "pass" if reached else "fail"
