"""One log line per meaningful event, and the counters that go with them.

The lines are written once the change that made the event commits (a rolled-back Stop logs
nothing). They come from what the other apps already announce, so no service holds a log call:

* dispatch started, stopped, finished: the dispatch row's saves (``post_save``);
* climber blocked: a ladder job that ended with its retries used up and no counted run
  (``jobs_ended``); a climber blocked as unlaunchable or unrated is a state the board shows, read
  live at each pass, not an event;
* lease expired: an attempt ended by the lease sweep (``retry_enqueued`` / ``jobs_ended``);
* pass failed, task failed: a background task that ended ``FAILED`` (``task_finished``).
"""

from __future__ import annotations

import logging
from functools import partial

from django.db import transaction
from django.db.models.signals import post_save
from django.tasks import TaskResultStatus
from django.tasks.signals import task_finished

from loopweb import telemetry
from loopweb.runs.cells import combination_key_of

log = logging.getLogger("loopweb.events")

LEASE_EXPIRED = "lease expired"


def _later(fn, *args, **kwargs) -> None:
    transaction.on_commit(partial(fn, *args, **kwargs))


def _info(message: str, *args, **extra) -> None:
    log.info(message, *args, extra=extra)


def _warning(message: str, *args, **extra) -> None:
    log.warning(message, *args, extra=extra)


# Dispatches -----------------------------------------------------------------------------------


def on_dispatch_saved(sender, instance, update_fields=None, **kwargs) -> None:
    from ladders.models import DispatchStatus

    fields = set(update_fields) if update_fields is not None else None
    ladder, dispatch = instance.ladder_id, instance.dispatch_id
    snapshot = instance.snapshot or {}
    name = snapshot.get("name", "")
    if instance.status == DispatchStatus.RUNNING and fields is None:
        _later(
            _info,
            "dispatch %s of ladder %s (%s) started: %d rung(s)",
            dispatch,
            ladder,
            name,
            len(snapshot.get("rungs", ())),
            event="dispatch.started",
            ladder=ladder,
            dispatch=dispatch,
        )
    elif instance.status == DispatchStatus.STOPPED and (fields is None or "status" in fields):
        _later(
            _info,
            "dispatch %s of ladder %s (%s) stopped",
            dispatch,
            ladder,
            name,
            event="dispatch.stopped",
            ladder=ladder,
            dispatch=dispatch,
        )
    elif instance.status == DispatchStatus.FINISHED and (fields is None or "status" in fields):
        _later(
            _info,
            "dispatch %s of ladder %s (%s) finished after %d pass(es)",
            dispatch,
            ladder,
            name,
            instance.passes,
            event="dispatch.finished",
            ladder=ladder,
            dispatch=dispatch,
        )


# Jobs -----------------------------------------------------------------------------------------


def on_jobs_ended(sender, jobs, **kwargs) -> None:
    from ladders import origins
    from loopweb.runs.models import Run

    for job in jobs:
        _later(telemetry.JOBS_ENDED.labels(job.status).inc)
        if job.failure_detail == LEASE_EXPIRED:
            _lease_expired(job, retry=None)
        if job.status != "failed":
            continue
        origin = origins.parse(job.origin)
        if origin is None or Run.objects.filter(job_id=job.pk, counted=True).exists():
            continue
        ladder, rung = str(origin.ladder_id), origin.rung_id
        climber = combination_key_of(job.cell_key)
        _later(
            _warning,
            "climber %s of ladder %s blocked at rung %s: attempt %d ended %s%s with no retry left",
            climber,
            ladder,
            rung,
            job.attempt,
            job.failure or "failed",
            f" ({job.failure_detail})" if job.failure_detail else "",
            event="climber.blocked",
            ladder=ladder,
            rung=rung,
            climber=climber,
            job=job.pk,
        )


def on_retry_enqueued(sender, retry, attempt, **kwargs) -> None:
    _later(telemetry.JOBS_ENDED.labels(attempt.status).inc)
    if attempt.failure_detail == LEASE_EXPIRED:
        _lease_expired(attempt, retry=retry)


def _lease_expired(job, retry) -> None:
    _later(telemetry.LEASE_EXPIRIES.inc)
    _later(
        _warning,
        "lease expired: job %s (attempt %d, %s) ended as infrastructure; %s",
        job.pk,
        job.attempt,
        job.cell_key,
        f"retried as job {retry.pk}" if retry is not None else "no retry left",
        event="lease.expired",
        job=job.pk,
    )


def on_run_pushed(sender, run, created, **kwargs) -> None:
    _later(telemetry.RUNS_PUSHED.labels("created" if created else "re-pushed").inc)


# Tasks ----------------------------------------------------------------------------------------


def on_task_finished(sender, task_result, **kwargs) -> None:
    path = task_result.task.module_path
    status = task_result.status
    telemetry.TASKS.labels(path.rsplit(".", 1)[-1], status.lower()).inc()
    passed = status == TaskResultStatus.SUCCESSFUL and task_result.started_at
    if path == "ladders.tasks.launch_pass" and passed:
        value = getattr(task_result, "_return_value", None)
        if not (isinstance(value, dict) and value.get("coalesced")):
            seconds = (task_result.finished_at - task_result.started_at).total_seconds()
            telemetry.LAUNCH_PASS_SECONDS.observe(seconds)
    if status != TaskResultStatus.FAILED:
        return
    exc = kwargs.get("exception")
    reason = f"{type(exc).__name__}: {exc}" if exc is not None else "see the task's traceback"
    if path == "ladders.tasks.launch_pass":
        _warning(
            "launch pass of ladder %s failed (%s); the next trigger or the worker's recovery runs "
            "it again",
            (task_result.args or ["?"])[0],
            reason,
            event="pass.failed",
            task=str(task_result.id),
        )
    else:
        _warning("task %s failed (%s)", path, reason, event="task.failed", task=str(task_result.id))


def connect() -> None:
    """Django's signals these lines follow. The consumers of the substrate's hooks above
    (``on_jobs_ended``, ``on_retry_enqueued``, ``on_run_pushed``) are connected, in order, by
    loopweb.pipeline.consumers."""
    from ladders.models import Dispatch

    post_save.connect(on_dispatch_saved, sender=Dispatch, dispatch_uid="ops-events")
    task_finished.connect(on_task_finished, dispatch_uid="ops-events")
