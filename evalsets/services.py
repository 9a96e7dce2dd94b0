"""Writes of the verify gate: evalsets, journaled runs, proposals, applies and measurements.

Each function is one transaction. Background work is enqueued with ``loopweb.tasking.enqueue``,
so it is stored with the change (database backend) or runs after it commits.
"""

import logging
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from evalsets import selectors, verdict
from evalsets.inputs import canonical_pins, check_summary, pins_hash
from evalsets.models import (
    GATE_OPEN,
    AdvisoryFlag,
    AuthoredBy,
    Evalset,
    EvalsetRun,
    GateOutcome,
    OutcomeResult,
    Proposal,
    RevertDraft,
)
from evalsets.policy import HIGH_WATER, Policy, parse_policy
from loopweb.database_lost import database_lost
from loopweb.runs.checks import Invalid
from loopweb.runs.errors import Conflict
from loopweb.tasking import enqueue

log = logging.getLogger("loopweb.evalsets")

#: How far ahead of the server's clock a client may date a journaled run or an apply.
CLOCK_SKEW = timedelta(minutes=5)


def _clock(message: str) -> ValidationError:
    """A moment the server's clock or the proposal's own history rules out: no schema can say
    which moments those are, so the error has a code of its own."""
    return ValidationError(message, code="clock")


def _invalid(exc: Invalid, prefix: str) -> ValidationError:
    return ValidationError(exc.prefixed(prefix))


def create_evalset(*, name: str, pins: Any, created_by: User | None = None) -> tuple[Evalset, bool]:
    """Create an evalset, or return the one with the same pins (and False)."""
    try:
        pins = canonical_pins(pins)
    except Invalid as exc:
        raise _invalid(exc, "pins") from exc
    name = (name or "").strip()
    if not name or len(name) > 200:
        raise ValidationError({"name": ["Give a name of 1-200 characters."]})
    with transaction.atomic():
        # get_or_create rides on the unique hash: a concurrent create of the same pins returns
        # the row the other transaction wrote instead of failing.
        return Evalset.objects.get_or_create(
            hash=pins_hash(pins),
            defaults={"name": name, "pins": pins, "created_by": created_by},
        )


def journal_run(
    *,
    evalset: Evalset,
    summary: Mapping[str, Any],
    journaled_at: datetime | None = None,
    journaled_by: User | None = None,
) -> EvalsetRun:
    """Journal one summary of an evalset and have the gate look at the proposals it measures.

    Safe to call inside a caller's transaction (a ladder journaling its dispatch): the gate's
    task is stored with that transaction.
    """
    try:
        summary = check_summary(summary)
    except Invalid as exc:
        raise _invalid(exc, "summary") from exc
    now = timezone.now()
    journaled_at = journaled_at or now
    if journaled_at > now + CLOCK_SKEW:
        raise ValidationError(
            {"journaled_at": [_clock("A run cannot be journaled in the future.")]}
        )
    from evalsets import tasks  # tasks import this module

    with transaction.atomic():
        run = EvalsetRun.objects.create(
            evalset=evalset,
            summary=summary,
            journaled_at=journaled_at,
            journaled_by=journaled_by,
            recorded_at=now,
        )
        enqueue(tasks.verify_evalset, evalset.pk)
    return run


def create_proposal(
    *, owner: User, title: str, authored_by: str, applicable: bool, outcome_evalset: Any
) -> Proposal:
    errors: dict[str, list[Any]] = {}
    title = (title or "").strip()
    if not title or len(title) > 300:
        errors["title"] = ["Give a title of 1-300 characters."]
    if authored_by not in AuthoredBy.values:
        errors["authored_by"] = ["Must be llm or human."]
    if not isinstance(applicable, bool):
        errors["applicable"] = ["Must be true or false."]
    policy = None
    try:
        policy = parse_policy(outcome_evalset)
    except Invalid as exc:
        errors.update(exc.prefixed("outcome_evalset"))
    evalset = None
    if policy is not None:
        evalset = Evalset.objects.filter(hash=policy.hash).first()
        if evalset is None:
            errors["outcome_evalset.hash"] = [
                ValidationError("No evalset has this hash.", code="does_not_exist")
            ]
    if errors:
        raise ValidationError(errors)
    assert policy is not None and evalset is not None  # or there were errors
    with transaction.atomic():
        return Proposal.objects.create(
            owner=owner,
            title=title,
            authored_by=authored_by,
            applicable=applicable,
            outcome_evalset=policy.as_json(),
            evalset=evalset,
            waits_on_grains=any(c.kind == verdict.AFTER_GRAINS for c in policy.schedule()),
            created_at=timezone.now(),
        )


def apply_proposal(*, proposal: Proposal, applied_at: datetime | None = None) -> Proposal:
    """Mark a proposal applied, now or at ``applied_at``; a second apply is a conflict."""
    now = timezone.now()
    applied_at = applied_at or now
    if applied_at > now + CLOCK_SKEW:
        raise ValidationError(
            {"applied_at": [_clock("A proposal cannot be applied in the future.")]}
        )
    if applied_at < proposal.created_at:
        raise ValidationError(
            {"applied_at": [_clock("A proposal cannot be applied before it existed.")]}
        )
    with transaction.atomic():
        # Compare-and-set: of two concurrent applies exactly one finds applied_at still null.
        won = Proposal.objects.filter(pk=proposal.pk, applied_at__isnull=True).update(
            applied_at=applied_at
        )
        if not won:
            raise Conflict(f"proposal {proposal.pk} is already applied")
        proposal.applied_at = applied_at
        if proposal.authored_by == AuthoredBy.LLM and proposal.applicable:
            _schedule_verification(proposal)
    return proposal


def _schedule_verification(proposal: Proposal) -> None:
    from evalsets import tasks  # tasks import this module

    enqueue(tasks.verify_proposal, proposal.pk)
    if not tasks.verify_proposal.get_backend().supports_defer:
        return  # the periodic ``verify_gate`` sweep brings time checkpoints due
    applied_at = proposal.applied_at
    assert applied_at is not None, "only an applied proposal is verified"
    moments = {verdict.due_at(checkpoint, applied_at) for checkpoint in proposal.policy.schedule()}
    for moment in sorted(m for m in moments if m is not None and m > applied_at):
        enqueue(tasks.verify_proposal.using(run_after=moment), proposal.pk)


# Measuring ------------------------------------------------------------------------------------


def _runs_before(proposal: Proposal) -> list[EvalsetRun]:
    """The baseline candidates journaled strictly before the apply, newest first."""
    return list(
        selectors.baseline_candidates(proposal)
        .filter(journaled_at__lt=proposal.applied_at)
        .only("id", "journaled_at", "summary")
        .order_by("-journaled_at", "-id")
    )


def _baseline(policy: Policy, before: list[EvalsetRun]) -> tuple[EvalsetRun, float] | None:
    """The baseline run by kind, and the best value of any run before the apply (advisory).

    None when the baseline run's value does not read — the newest run before the apply lacks
    the field, or no run before the apply has it: the baseline side is not measurable. So a
    best value exists whenever a baseline does (the baseline run is one of the runs before).
    """
    readable = [(run, run.value(policy.field)) for run in before]
    readable = [(run, value) for run, value in readable if value is not None]
    if not readable:
        return None
    best_before = verdict.best((value for _, value in readable), policy.higher_is_better)
    assert best_before is not None  # readable is not empty
    if policy.baseline == HIGH_WATER:
        # Newest first, so of equally good runs the newest is the baseline.
        run = next(run for run, value in readable if value == best_before)
    else:
        # The newest run is the baseline even when its value does not read; then there is none.
        run = before[0]
        if run.value(policy.field) is None:
            return None
    return run, best_before


def has_baseline_run(proposal: Proposal) -> bool:
    return selectors.baseline_candidates(proposal).exists()


def _close(proposal: Proposal, outcome: str, now: datetime) -> None:
    """The gate has nothing left to do for the proposal: it leaves the sweep."""
    Proposal.objects.filter(pk=proposal.pk).update(
        verify_complete=True, gate_outcome=outcome, closed_at=now
    )


def verify_proposal(*, proposal_id: int, now: datetime | None = None) -> list[OutcomeResult]:
    """Record every checkpoint of the proposal that has come due and can be measured.

    A proposal with no baseline run never gets one (see ``selectors.baseline_candidates``): it
    is closed as ``no_baseline`` once its whole schedule has come due, and measured never. One
    whose baseline candidates give no baseline value (none journaled before the apply, or none
    whose value reads as its baseline kind needs) never gets one either, since the candidates
    and the apply are fixed: it is closed as ``unmeasurable`` the same way.
    """
    now = now or timezone.now()
    with transaction.atomic(durable=True):
        # Lock the proposal: a journal task, a push task and the sweep may measure it at once,
        # and each would find the same checkpoint unrecorded.
        proposal = (
            Proposal.objects.select_for_update(no_key=True)
            .filter(GATE_OPEN, pk=proposal_id)
            .first()
        )
        if proposal is None:
            return []
        applied_at = proposal.applied_at
        assert applied_at is not None  # GATE_OPEN
        policy = proposal.policy
        schedule = policy.schedule()
        recorded = {
            verdict.Checkpoint.from_json(c)
            for c in proposal.results.values_list("checkpoint", flat=True)
        }
        waiting = [c for c in schedule if c not in recorded]
        if not waiting:
            _close(proposal, GateOutcome.MEASURED, now)
            return []
        since = selectors.runs_since_apply(proposal, now)
        grains = 0
        if any(c.kind == verdict.AFTER_GRAINS for c in waiting):
            grains = selectors.grains_since_apply(proposal, now)
        progress = verdict.Progress(applied_at, now, since.count(), grains)
        due = [c for c in waiting if verdict.is_due(c, progress)]
        if not has_baseline_run(proposal):
            if len(due) == len(waiting):
                _close(proposal, GateOutcome.NO_BASELINE, now)
            return []  # no metric, never a fabricated one
        if not due:
            return []
        baseline = _baseline(policy, _runs_before(proposal))
        if baseline is None:
            # No baseline value: nothing is written, and it stays due until the schedule is over.
            if len(due) == len(waiting):
                _close(proposal, GateOutcome.UNMEASURABLE, now)
            return []
        current = since.order_by("-journaled_at", "-id").first()
        if current is None:
            return []  # due, but nothing measured since the apply: it stays due
        baseline_run, best_before = baseline
        judgement = verdict.judge(
            field=policy.field,
            higher_is_better=policy.higher_is_better,
            baseline=baseline_run.summary,
            current=current.summary,
            min_effect=policy.min_effect,
            cost=policy.cost,
            alpha=policy.alpha,
        )
        if judgement is None:
            return []  # not measurable: nothing is written, and it stays due
        # Under the proposal's lock, ``due`` holds only checkpoints with no result yet.
        results = [
            _record(proposal, policy, c, judgement, baseline_run, best_before, current, now)
            for c in due
        ]
        if len(due) == len(waiting):
            _close(proposal, GateOutcome.MEASURED, now)
    return results


def _record(
    proposal: Proposal,
    policy: Policy,
    checkpoint: verdict.Checkpoint,
    judgement: verdict.Judgement,
    baseline_run: EvalsetRun,
    best_before: float,
    current: EvalsetRun,
    now: datetime,
) -> OutcomeResult:
    """Write one checkpoint's result, and the revert draft or advisory flag it opens (an
    inconclusive result opens neither: chance alone could explain it).

    No IntegrityError is caught: the caller holds the proposal's lock and found the checkpoint
    unrecorded, so the unique constraint on (proposal, checkpoint) is a backstop that fails
    loudly, and any other integrity error is a fault — never "recorded already".
    """
    cost = judgement.cost
    result = OutcomeResult.objects.create(
        proposal=proposal,
        checkpoint=checkpoint.as_json(),
        metric=policy.metric,
        baseline=judgement.baseline,
        current=judgement.current,
        verdict=judgement.verdict,
        baseline_kind=policy.baseline,
        baseline_run=baseline_run,
        best_before=best_before,
        tolerance=judgement.tolerance,
        current_run=current,
        cost_read=cost.status if cost else "",
        cost_baseline=cost.baseline if cost else None,
        cost_current=cost.current if cost else None,
        p_value=judgement.p_value,
        cases_needed=judgement.cases_needed,
        measured_at=now,
    )
    reason = (
        f"{policy.metric} at {checkpoint}: {judgement.current:g} against a baseline of "
        f"{judgement.baseline:g} (tolerance {judgement.tolerance:g})"
    )
    if judgement.verdict == verdict.REGRESSED:
        RevertDraft.objects.get_or_create(
            proposal=proposal, defaults={"result": result, "reason": f"Regressed: {reason}."}
        )
    elif judgement.verdict == verdict.HELD_COSTLIER:
        assert cost is not None and policy.cost is not None  # a cost bound was read
        AdvisoryFlag.objects.get_or_create(
            proposal=proposal,
            defaults={
                "result": result,
                "reason": (
                    f"Held, but {policy.cost.field} rose from {cost.baseline:g} to "
                    f"{cost.current:g}, past {policy.cost.max_increase_ratio:g}× — {reason}."
                ),
            },
        )
    return result


def verify_open(
    *, evalset_id: int | None = None, grains_only: bool = False, now: datetime | None = None
) -> int:
    """Measure every proposal the gate still watches (of one evalset, or waiting on grains).

    Each proposal is its own transaction, so one slow or failing proposal holds up no other: one
    that raises is logged and the sweep goes on; then what was raised is raised together (an
    ``ExceptionGroup``), so the task or chore reads failed and the next sweep tries it again. A
    lost database ends the sweep at once, as itself. Returns how many results were recorded.
    """
    proposals = Proposal.objects.filter(GATE_OPEN)
    if evalset_id is not None:
        proposals = proposals.filter(evalset_id=evalset_id)
    if grains_only:
        proposals = proposals.filter(waits_on_grains=True)
    recorded, failed = 0, []
    for proposal_id in proposals.order_by("id").values_list("id", flat=True):
        try:
            recorded += len(verify_proposal(proposal_id=proposal_id, now=now))
        except Exception as exc:
            if database_lost(exc):
                raise
            log.exception(
                "verify gate: proposal %s could not be measured",
                proposal_id,
                extra={"event": "verify.failed", "proposal": proposal_id},
            )
            failed.append((proposal_id, exc))
    if failed:
        ids = ", ".join(str(proposal_id) for proposal_id, _ in failed)
        raise ExceptionGroup(
            f"verify gate: proposal{'s' if len(failed) > 1 else ''} {ids} could not be measured"
            f" ({recorded} result(s) recorded for the others)",
            [exc for _, exc in failed],
        )
    return recorded
