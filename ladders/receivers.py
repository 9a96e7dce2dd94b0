"""How ladders follow the run substrate's hooks. The subscribers lock (a dispatch and climber
row before a job is ended), enqueue launch passes, publish a completed run a dispatch launched,
and cancel a retry its stopped dispatch (or its slot, decided early) no longer wants; none
computes a standing. ``loopweb.pipeline.consumers`` connects them, each in its declared place
among a hook's consumers."""

from django.db import connection
from django.db.models import Q

from ladders import origins
from ladders.models import Dispatch, DispatchCell, DispatchClimber, DispatchStatus
from ladders.tasks import launch_pass
from loopweb import tasking
from loopweb.runs.cells import combination_key_of
from loopweb.runs.models import CancelCause, Outcome
from loopweb.runs.services import mark_canceled

COMPLETED = Outcome.COMPLETED.value


def lock_dispatch_of_origin(sender, origin: str, cell_key: str = "", **kwargs) -> None:
    """Before a ladder's job is ended, share its dispatch's row: a retry enqueued now is then
    ordered strictly before or after a Stop's sweep (which holds the row exclusively), never
    beside it. Pushes and launch passes do not hold the row against each other, so the drivers
    of one busy dispatch never queue on it.

    When the dispatch stops early, the row of the climber holding the job's cell is shared too:
    a pass recording that climber's verdicts waits for this attempt's end, and so sees (and
    cancels) a retry it enqueues; or it has recorded them, and the retry's check sees them."""
    ladder_id = origins.ladder_id_of(origin)
    if ladder_id is None or connection.vendor != "postgresql":
        return  # SQLite runs one writer at a time
    dispatches, climbers = Dispatch._meta.db_table, DispatchClimber._meta.db_table
    # Dispatch before climber before job: the order Stop and the launch pass take their locks in.
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, dispatch_id, (snapshot->'gate'->>'earlyStop')::boolean"  # noqa: S608
            f" FROM {dispatches} WHERE ladder_id = %s FOR KEY SHARE",
            [ladder_id],
        )
        row = cursor.fetchone()
        if (
            row is None
            or not row[2]
            or not origin.startswith(origins.dispatch_prefix(ladder_id, row[1]))
        ):
            return
        cursor.execute(
            f"SELECT id FROM {climbers}"  # noqa: S608
            " WHERE dispatch_id = %s AND pinned_key = %s FOR SHARE",
            [row[0], combination_key_of(cell_key)],
        )


def cancel_retry_of_stopped_dispatch(sender, retry, **kwargs) -> None:
    """A retry is checked like a launch pass: its dispatch must still be the ladder's running
    one. A retry of a job a stopped (or since replaced) dispatch launched is cancelled; the jobs
    of a deleted ladder are left alone."""
    ladder_id = origins.ladder_id_of(retry.origin)
    if ladder_id is None:
        return
    current = (
        Dispatch.objects.filter(ladder_id=ladder_id).values_list("dispatch_id", "status").first()
    )
    if current is None:
        return
    dispatch_id, status = current
    own = retry.origin.startswith(origins.dispatch_prefix(ladder_id, dispatch_id))
    if status != DispatchStatus.RUNNING or not own:
        mark_canceled([retry], cause=CancelCause.STOP)
    elif _slot_decided_early(retry):
        mark_canceled([retry], cause=CancelCause.DECISION)  # its attempt's run is kept


def _slot_decided_early(retry) -> bool:
    """With earlyStop, a slot decided while an attempt was under way needs no retry of it. (Its
    climber's row was locked before the attempt's job: see ``lock_dispatch_of_origin``.) The
    retry's origin is its running dispatch's."""
    origin = origins.parse(retry.origin)
    if origin is None:
        return False
    dispatch = Dispatch.objects.filter(dispatch_id=origin.dispatch_id).only("snapshot").first()
    if dispatch is None or not dispatch.snapshot["gate"].get("earlyStop"):
        return False
    verdicts = (
        DispatchClimber.objects.filter(
            dispatch=dispatch, pinned_key=combination_key_of(retry.cell_key)
        )
        .values_list("verdicts", flat=True)
        .first()
    )
    return origin.rung_id in (verdicts or {})


def feed_dispatches(cell_keys: set[str]) -> None:
    """Enqueue a launch pass for every running dispatch that holds one of these cells."""
    if not cell_keys:
        return
    ladder_ids = (
        DispatchCell.objects.filter(cell_key__in=cell_keys, dispatch__status=DispatchStatus.RUNNING)
        .values_list("dispatch__ladder_id", flat=True)
        .distinct()
    )
    for ladder_id in sorted(set(ladder_ids)):
        tasking.enqueue(launch_pass, ladder_id)


def on_catalog_changed(sender, **kwargs) -> None:
    """A catalog entry changed (a model made launchable or not, added or removed; a gg
    configuration edited or deleted): every running dispatch gets a pass, so a climber whose
    cause of being unlaunchable is fixed climbs on by itself, and one that became unlaunchable
    reads blocked, never "running" with nothing launched and nothing scheduled."""
    running = Dispatch.objects.filter(status=DispatchStatus.RUNNING).values_list(
        "ladder_id", flat=True
    )
    for ladder_id in sorted(running):
        tasking.enqueue(launch_pass, ladder_id)


def on_jobs_ended(sender, jobs, **kwargs) -> None:
    """Jobs ended, however (a push, a failure, a cancel, a lease expired): feed the dispatches
    holding their cells. A push feeds them here when it ended its attempt for good
    (``ended_its_attempt``), and through ``on_run_pushed`` when it did not."""
    feed_dispatches({job.cell_key for job in jobs})


def publish_on_completion(sender, run, **kwargs) -> None:
    """ "A run a dispatch launches publishes itself when it completes": in the push that stores
    it, whether or not its dispatch is still running."""
    job = run.job
    if (
        job is not None
        and origins.ladder_id_of(job.origin) is not None
        and run.outcome == COMPLETED
    ):
        run.published = True


def ended_its_attempt(run, created: bool) -> bool:
    """Whether the push that stored ``run`` ended its job's attempt, so the substrate announced
    that end (``retry_enqueued`` or ``jobs_ended``) before ``run_pushed``: a new run of a job
    that was still in flight. (A new run of a job cancelled earlier ended nothing.)"""
    return created and run.job is not None and run.job.status != "canceled"


def on_run_pushed(sender, run, created, **kwargs) -> None:
    """Publish a re-pushed completed run (a new one was published before it was saved, by
    ``publish_on_completion``). Feed the dispatches for a push whose end of its attempt did not:
    a run without a job, a re-push, a run for a job cancelled earlier; never for a retried
    attempt, whose run does not count."""
    if not created and not run.published:
        publish_on_completion(sender, run)
        if run.published:
            type(run).objects.filter(pk=run.pk).update(published=True)
    retried = run.job is not None and run.job.retry_id is not None
    if not ended_its_attempt(run, created) and not retried:
        feed_dispatches({run.cell_key})


def visible_through_ladders(user) -> Q:
    """A run is readable by the owners and reviewers of ladders whose slots read it."""
    cells = DispatchCell.objects.filter(
        Q(dispatch__ladder__owner=user) | Q(dispatch__ladder__reviewers=user)
    ).values("cell_key")
    return Q(cell_key__in=cells)
