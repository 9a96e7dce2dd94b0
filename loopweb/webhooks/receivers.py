"""What webhooks do when the ladder engine or the verify gate announces something: inside the
announcing transaction, record the events (the outbox) for the subscriptions that want them.
No HTTP here: the task worker sends. With no subscription interested, one query and nothing
else."""

from django.db.models import F

from evalsets.verdict import INCONCLUSIVE
from ladders import origins, statuses
from ladders.models import DispatchClimber, Ladder
from loopweb.runs.models import Job, JobStatus
from loopweb.webhooks import events as e
from loopweb.webhooks import payloads
from loopweb.webhooks.services import News, interested, record


def _wanting(to, *types: str) -> bool:
    return any(s.wants(t) for s in to for t in types)


def _ladder(dispatch) -> Ladder:
    return Ladder.objects.select_related("owner").get(pk=dispatch.ladder_id)


def dispatch_started(sender, dispatch, by, previous, **kwargs) -> None:
    to = interested(ladder_id=dispatch.ladder_id)
    if not _wanting(to, e.DISPATCH_STARTED):
        return
    ladder = _ladder(dispatch)
    climbers = DispatchClimber.objects.filter(dispatch=dispatch).count()
    data, text = payloads.dispatch_started(ladder, dispatch, by, previous, climbers)
    record([News(e.DISPATCH_STARTED, data, text)], owner_id=ladder.owner_id, to=to)


def dispatch_ended(sender, dispatch, final, by, cancel_running, cancelled, **kwargs) -> None:
    to = interested(ladder_id=dispatch.ladder_id)
    if not _wanting(to, e.DISPATCH_FINISHED, e.DISPATCH_STOPPED):
        return
    ladder = _ladder(dispatch)
    kind, data, text = payloads.dispatch_ended(
        ladder, dispatch, final, by, cancel_running, cancelled
    )
    record([News(kind, data, text)], owner_id=ladder.owner_id, to=to)


def climbers_blocked(sender, dispatch, climbers, **kwargs) -> None:
    """One ``climber.blocked`` per newly blocked climber, at the moment of the block (the
    dispatch may still be running its other climbers)."""
    to = interested(ladder_id=dispatch.ladder_id)
    if not _wanting(to, e.CLIMBER_BLOCKED):
        return
    ladder = _ladder(dispatch)
    news = [
        News(e.CLIMBER_BLOCKED, *payloads.climber_blocked(ladder, dispatch, c))
        for c in _blocked_parts(dispatch, climbers)
    ]
    record(news, owner_id=ladder.owner_id, to=to)


def dispatch_needs_attention(sender, dispatch, climbers, **kwargs) -> None:
    """``dispatch.needs_attention`` when the dispatch has come to read Needs attention (nothing
    it launched in flight, every climber completed, failed or blocked, at least one blocked),
    listing every climber blocked then."""
    to = interested(ladder_id=dispatch.ladder_id)
    if not _wanting(to, e.DISPATCH_NEEDS_ATTENTION):
        return
    ladder = _ladder(dispatch)
    blocked = _blocked_parts(dispatch, climbers)
    data, text = payloads.needs_attention(ladder, dispatch, blocked, len(blocked))
    record([News(e.DISPATCH_NEEDS_ATTENTION, data, text)], owner_id=ladder.owner_id, to=to)


def _blocked_parts(dispatch, climbers) -> list[dict]:
    """The payload part of each blocked climber, with its failing slot's last attempt."""
    rungs = dispatch.snapshot.get("rungs", [])
    failures = _failures(dispatch, climbers)
    parts = []
    for row, standing in climbers:
        slot = next((s for s in standing.slots if s.status == statuses.BLOCKED), None)
        failure = failures.get((slot.rung, slot.cell_key)) if slot is not None else None
        parts.append(payloads.blocked_climber(row, standing, rungs, failure))
    return parts


def _failures(dispatch, climbers) -> dict[tuple[str, str], dict]:
    """The last exhausted attempt of each failing climber's blocked slot (one query)."""
    slots = {
        (slot.rung, slot.cell_key)
        for _, standing in climbers
        if standing.blocked_reason == statuses.FAILING
        for slot in standing.slots
        if slot.status == statuses.BLOCKED and slot.cell_key
    }
    if not slots:
        return {}
    jobs = (
        Job.objects.filter(
            origin__in={dispatch.origin_for(rung) for rung, _ in slots},
            cell_key__in={cell for _, cell in slots},
            status=JobStatus.FAILED,
            retry__isnull=True,
        )
        .order_by("finished_at", "id")  # the last of a slot wins below
        .values("id", "origin", "cell_key", "attempt", "failure", "failure_detail", "finished_at")
        .annotate(run_id=F("run__id"))
    )
    latest = {(origins.parse(job["origin"]).rung_id, job["cell_key"]): job for job in jobs}
    return {slot: payloads.failure_part(job) for slot, job in latest.items() if slot in slots}


def revert_draft_saved(sender, instance, created, **kwargs) -> None:
    if created:
        _proposal_news(e.PROPOSAL_REGRESSED, instance, payloads.proposal_regressed)


def advisory_flag_saved(sender, instance, created, **kwargs) -> None:
    if created:
        _proposal_news(e.PROPOSAL_HELD_COSTLIER, instance, payloads.proposal_held_costlier)


def outcome_result_saved(sender, instance, created, **kwargs) -> None:
    if created and instance.verdict == INCONCLUSIVE:
        _proposal_news(e.PROPOSAL_INCONCLUSIVE, instance, payloads.proposal_inconclusive)


def _proposal_news(kind: str, opened, build) -> None:
    owner_id = opened.proposal.owner_id
    to = interested(owner_id=owner_id)
    if not _wanting(to, kind):
        return
    record([News(kind, *build(opened))], owner_id=owner_id, to=to)
