"""Reads of signals and outcomes, shared by the REST API and the console page."""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import QuerySet
from django.http import Http404

from loopweb.runs.access import visible_runs
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Run
from signals_app import acceptance, outcome
from signals_app.models import Signal
from signals_app.services import current_rule_of, rule_owner_id


def visible_run_or_404(user, pk: int) -> Run:
    # first(), not get(): a visibility rule that joins could list a run twice.
    run = visible_runs(user).filter(pk=pk).select_related("job").first()
    if run is None:
        raise Http404
    return run


def run_signals(run: Run) -> QuerySet[Signal]:
    """A run's signals in the order they were added."""
    return Signal.objects.filter(run=run).select_related("recorded_by").order_by("id")


@dataclass(frozen=True)
class RunOutcome:
    outcome: outcome.Outcome
    rule: dict
    #: "run" when the run stored the rule in effect when it was recorded; "owner" when it stored
    #: none and the owner's current rule (or the default rule) was read instead.
    rule_source: str

    def as_json(self) -> dict:
        return {
            "result": self.outcome.result,
            "tier": self.outcome.tier,
            "rule": self.rule,
            "rule_source": self.rule_source,
            "parts": [
                {
                    "part": part.part,
                    "name": part.name,
                    "state": part.state,
                    "signal": part.signal,
                    "reason": part.reason,
                }
                for part in self.outcome.parts
            ],
        }


def rule_in_effect(run: Run) -> tuple[dict, str]:
    if run.acceptance_rule is None:
        return current_rule_of(rule_owner_id(run)), "owner"
    try:
        return acceptance.parse_rule(run.acceptance_rule, check_recommended=False), "run"
    except ValidationError as exc:
        raise Conflict(
            f"run {run.pk} stores an acceptance rule that cannot be read: {exc}"
        ) from exc


def observations(signals) -> list[outcome.Observation]:
    """Stored signals as the outcome reader sees them."""
    return [
        outcome.Observation(
            id=s.signal_id,
            kind=s.kind,
            name=s.name,
            value=s.value,
            observed_at=s.observed_at,
            tier=s.tier,
        )
        for s in signals
    ]


def read_run(run: Run, rule: dict, signals) -> outcome.Outcome:
    """How ``rule`` reads ``run`` given its ``signals``."""
    return outcome.read_outcome(
        outcome.Rule.from_json(rule), observations(signals), run.finished_at
    )


def run_outcome(run: Run, signals: list[Signal] | None = None) -> RunOutcome:
    rule, source = rule_in_effect(run)
    if signals is None:
        signals = list(run_signals(run))
    return RunOutcome(outcome=read_run(run, rule, signals), rule=rule, rule_source=source)
