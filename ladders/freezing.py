"""An ended dispatch's standing, frozen: the one document (``ladders.document``) written in the
transaction that ends it, and the dispatch's head as that document holds it."""

from ladders import document, progress
from ladders.models import Dispatch, FinalStanding
from ladders.standing import Standing


def moment(value) -> str | None:
    """A moment as a document holds it: ISO 8601 with its microseconds and time zone, read back
    exactly by ``datetime.fromisoformat``."""
    return value.isoformat() if value is not None else None


def dispatch_head(
    dispatch: Dispatch,
    *,
    status: str,
    slot_counts: dict,
    runs: dict,
    names: tuple[str, str],
    cancel_running: bool = False,
    cancelled: int = 0,
) -> dict:
    """The dispatch as its standing's document holds it."""
    return {
        "id": dispatch.dispatch_id,
        "ladder": dispatch.ladder_id,
        "status": status,
        "snapshot": dispatch.snapshot,
        "startedAt": moment(dispatch.started_at),
        "endedAt": moment(dispatch.ended_at),
        "startedBy": names[0] or None,
        "stoppedBy": names[1] or None,
        "cancelRunning": cancel_running,
        "cancelled": cancelled,
        "slotCounts": slot_counts,
        "runs": runs,
    }


def freeze(
    dispatch: Dispatch, standing: Standing, *, cancel_running: bool = False, cancelled: int = 0
) -> FinalStanding:
    """Write the final standing of a dispatch that is ending, in the transaction that ends it
    (under the dispatch lock, so once), from its ``standing`` evaluated as ended."""
    parts = [progress.live_part(c) for c in standing.climbers]
    climbers = [
        {
            "body": part.body,
            "runs": [list(ids) for ids in part.runs],
            "completed": progress.completed_runs(c),
            "skippedByStop": c.skipped_by_stop,
        }
        for part, c in zip(parts, standing.climbers, strict=True)
    ]
    known = progress.user_names(dispatch.started_by_id, dispatch.stopped_by_id)
    head = dispatch_head(
        dispatch,
        status=dispatch.status,
        slot_counts=standing.slot_counts(),
        runs=progress.runs_of(parts, dispatch),
        names=(known.get(dispatch.started_by_id, ""), known.get(dispatch.stopped_by_id, "")),
        cancel_running=cancel_running,
        cancelled=cancelled,
    )
    head, bodies, slots = document.compose(head, climbers)
    return FinalStanding.objects.create(
        ladder_id=dispatch.ladder_id, dispatch=dispatch, head=head, bodies=bodies, slots=slots
    )
