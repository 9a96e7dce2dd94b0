"""Reads of the verify gate, shared by the REST API and the console pages."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Exists, OuterRef, QuerySet, Subquery
from django.utils import timezone

from evalsets import verdict
from evalsets.models import EvalsetRun, OutcomeResult, Proposal
from loopweb.runs.models import Run

GATE_SKIPPED = "skipped"
GATE_NOT_APPLIED = "not_applied"
GATE_MEASURING = "measuring"
GATE_COMPLETE = "complete"


def baseline_candidates(proposal: Proposal) -> QuerySet[EvalsetRun]:
    """The runs that may be the proposal's baseline: those the server recorded before the
    proposal was created. A run recorded later never is, whatever ``journaled_at`` it gives, so
    the baseline of a proposal is fixed when it is created and no checkpoint sees another."""
    return EvalsetRun.objects.filter(
        evalset_id=proposal.evalset_id, recorded_at__lt=proposal.created_at
    )


def runs_since_apply(proposal: Proposal, now: datetime) -> QuerySet[EvalsetRun]:
    """The runs journaled at or after the apply, as of ``now``: the evidence about it, and what
    an ``after_runs`` checkpoint counts. "Journaled" is what the server had recorded, so a run
    recorded before the apply is never evidence about it, whatever ``journaled_at`` it gives
    (a run dated ahead within the clock-skew allowance included); ``grains_since_apply`` counts
    by the same rule."""
    return EvalsetRun.objects.filter(
        evalset_id=proposal.evalset_id,
        journaled_at__gte=proposal.applied_at,
        journaled_at__lte=now,
        recorded_at__gte=proposal.applied_at,
    )


def grains_since_apply(proposal: Proposal, now: datetime) -> int:
    """The runs of any kind pushed at or after the apply, as of ``now``: what an
    ``after_grains`` checkpoint counts. A run's ``created_at`` is when the server recorded it."""
    return Run.objects.filter(created_at__gte=proposal.applied_at, created_at__lte=now).count()


def visible_proposals(user) -> QuerySet[Proposal]:
    """The caller's proposals (staff: everyone's), each with what its list row shows."""
    proposals = Proposal.objects.all() if user.is_staff else Proposal.objects.filter(owner=user)
    latest = OutcomeResult.objects.filter(proposal=OuterRef("pk")).order_by("-measured_at", "-id")
    return proposals.select_related("evalset", "owner", "revert_draft", "advisory_flag").annotate(
        has_baseline_run=Exists(
            EvalsetRun.objects.filter(
                evalset=OuterRef("evalset"), recorded_at__lt=OuterRef("created_at")
            )
        ),
        latest_verdict=Subquery(latest.values("verdict")[:1]),
    )


def skip_reason(proposal: Proposal) -> str | None:
    """Why the gate does not measure this proposal (needs ``has_baseline_run`` annotated)."""
    return verdict.skip_reason(
        authored_by=proposal.authored_by,
        applicable=proposal.applicable,
        has_baseline_run=proposal.has_baseline_run,
    )


def gate_status(proposal: Proposal) -> str:
    if skip_reason(proposal):
        return GATE_SKIPPED
    if proposal.applied_at is None:
        return GATE_NOT_APPLIED
    return GATE_COMPLETE if proposal.verify_complete else GATE_MEASURING


def outcome_results(proposal: Proposal) -> QuerySet[OutcomeResult]:
    return proposal.results.order_by("measured_at", "id")


@dataclass(frozen=True)
class Step:
    """One checkpoint of a proposal's schedule, as the timeline shows it."""

    checkpoint: verdict.Checkpoint
    state: str  # recorded | due | waiting
    result: OutcomeResult | None


def timeline(proposal: Proposal, *, now: datetime | None = None) -> list[Step]:
    """Every checkpoint of the schedule with its result, or whether it is due yet."""
    results = {
        verdict.Checkpoint.from_json(r.checkpoint): r
        for r in outcome_results(proposal).select_related("baseline_run", "current_run")
    }
    schedule = proposal.policy.schedule()
    progress = None
    if proposal.applied_at is not None:
        now = now or timezone.now()
        runs = runs_since_apply(proposal, now).count()
        grains = 0
        if any(c.kind == verdict.AFTER_GRAINS for c in schedule):
            grains = grains_since_apply(proposal, now)
        progress = verdict.Progress(proposal.applied_at, now, runs, grains)
    steps = []
    for checkpoint in schedule:
        result = results.get(checkpoint)
        if result is not None:
            state = "recorded"
        elif progress is not None and verdict.is_due(checkpoint, progress):
            state = "due"
        else:
            state = "waiting"
        steps.append(Step(checkpoint, state, result))
    return steps
