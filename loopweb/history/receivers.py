"""The ladder engine's announcements (``ladders.lifecycle``), kept: each ended dispatch as a
record, each button pressed as a line of activity. Sent inside the transaction that made the
change, so a line commits or rolls back with it.

A record reads every run the dispatch paid for, too slow for the transaction that ends a
dispatch (a pass or a Stop, under the dispatch lock): that transaction queues ``record_dispatch``
with the change, and the record is written from the frozen final standing, which never changes.
It is written at once, if still missing, when a new Run is about to replace the dispatch or when
the history is read; the worker's ``recover`` chore writes any a lost task left behind."""

from django.utils import timezone

from ladders.models import DispatchStatus
from loopweb import tasking
from loopweb.history import records
from loopweb.history.models import Action, Activity
from loopweb.history.tasks import record_dispatch

CHANGES = {
    "created": Action.CREATED,
    "edited": Action.EDITED,
    "rungs reordered": Action.RUNGS_REORDERED,
}


def _activity(ladder_id: int, by, action: str, dispatch_id: str = "", **detail) -> None:
    Activity.objects.create(
        ladder_id=ladder_id,
        at=timezone.now(),
        by=by,
        by_name=by.get_username() if by is not None else "",
        action=action,
        dispatch_id=dispatch_id,
        detail=detail,
    )


def on_dispatch_started(sender, dispatch, by, previous, **kwargs) -> None:
    _activity(dispatch.ladder_id, by, Action.RUN, dispatch.dispatch_id)


def on_dispatch_ended(sender, dispatch, final, by, cancel_running, cancelled, **kwargs) -> None:
    tasking.enqueue(record_dispatch, dispatch.dispatch_id)
    if dispatch.status == DispatchStatus.STOPPED:
        action = Action.STOP_CANCEL_RUNNING if cancel_running else Action.STOP
        _activity(dispatch.ladder_id, by, action, dispatch.dispatch_id, cancelled=cancelled)


def on_dispatch_replaced(sender, dispatch, final, **kwargs) -> None:
    records.keep(dispatch, final)


def on_climber_retried(sender, dispatch, climber, by, **kwargs) -> None:
    _activity(
        dispatch.ladder_id, by, Action.RETRY, dispatch.dispatch_id, climber=climber.combination_key
    )


def on_ladder_configured(sender, ladder, by, change, **kwargs) -> None:
    _activity(ladder.pk, by, CHANGES.get(change, Action.EDITED))
