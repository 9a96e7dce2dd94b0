"""Seed 000's formats, checked in one place: the words and limits (here), signals and late events
(``signals_app.signal_checks``), acceptance rules (``signals_app.acceptance``), with the field
checks of the validation kit (``loopweb.runs.checks``).

The checks take decoded JSON and return normalized values, or raise a Django ``ValidationError``
whose keys are dotted field paths (``value``, ``0.value``, ``signals.1.kind``,
``acceptance_rule.score.target``). The API, the push receiver, the late-event endpoint and the
admin all validate through them, so a rule is written once.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError

from loopweb.runs import checks

E195 = "E195"

KINDS = ("verdict", "score", "event")
VERDICT_VALUES = ("accept", "reject", "pass", "fail", "error")
BETTER = ("higher", "lower")
SCALES = ("linear", "log", "fraction")
#: Strongest first (SPEC §7).
TIERS = ("verified", "measured", "reported", "asserted")

#: Seed 000's recommended names; an acceptance rule is checked against them.
RECOMMENDED = {
    "verdict": frozenset({"tests", "referee", "pair_referee", "merge", "ci"}),
    "score": frozenset({"bench_score", "runtime_s", "quality"}),
    "event": frozenset({"issue", "incident", "revert", "hotfix"}),
}

DEFAULT_EXCLUDES_EVENTS = ("revert", "incident")
DEFAULT_WINDOW_DAYS = 14
#: A hundred years: wide enough for any real window, small enough that date arithmetic holds.
MAX_WINDOW_DAYS = 36_500
MAX_SIGNALS_PER_REQUEST = 1000
#: The longest id or name a signal, a rule or a late event may give.
MAX_NAME = 200

#: A signal's fields, in the order the API shows them.
SIGNAL_FIELDS = (
    "id",
    "kind",
    "name",
    "value",
    "unit",
    "better",
    "threshold",
    "scale",
    "at_attempt",
    "observed_at",
    "tier",
    "ext",
)
#: An acceptance rule's fields, in the order the API and the admin show them.
RULE_FIELDS = ("name", "description", "requires", "score", "excludes_events", "window_days", "ext")


@dataclass(frozen=True)
class SignalData:
    """A validated signal, ready to store."""

    id: str
    kind: str
    name: str
    value: str | int | float | None
    observed_at: datetime
    tier: str
    unit: str | None = None
    better: str | None = None
    threshold: float | None = None
    scale: str | None = None
    at_attempt: str | None = None
    ext: dict | None = None

    def same_as(self, other: "SignalData") -> bool:
        """Whether two signals with one id say the same thing (a client re-sending one).

        Numbers compare by value: jsonb gives ``1e300`` back as the integer it equals.
        """
        return canonical(self) == canonical(other)


def canonical(value: Any) -> Any:
    if isinstance(value, SignalData):
        return tuple(canonical(getattr(value, f)) for f in value.__dataclass_fields__)
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        try:
            return float(value)
        except OverflowError:
            return value
    if isinstance(value, Mapping):
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


class Errors(checks.Errors):
    """The kit's field errors, raised as a Django ``ValidationError`` (each message keeps its
    code, E195 among them)."""

    def raise_if_any(self) -> None:
        if self.by_path:
            raise ValidationError(
                {
                    path: [ValidationError(message, code=code) for message, code in found]
                    for path, found in self.by_path.items()
                }
            )


def a(kind: str) -> str:
    """A kind with its article: "a verdict", "an event"."""
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"
