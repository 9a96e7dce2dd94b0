"""The task worker: recovery at start-up, the periodic chores, the task queue, and riding out a
lost database.

    python manage.py run_worker

runs, in one process:

* **a heartbeat** (a thread): the worker's row in ``ops_workerprocess`` is refreshed every few
  seconds, so the other workers and ``/readyz`` know it is alive;
* **start-up recovery**: tasks left running by dead workers are put back in the queue, and one
  launch pass runs for every running dispatch (``loopweb.ops.recovery``);
* **the chores** (a thread): lease expiry, recovery of dead workers' tasks, the verify gate's
  sweep, pruning; each turn taken in the database, so it runs once per period whatever the number
  of workers (``loopweb.ops.chores``);
* **the queue**: ``django-tasks-db``'s worker loop, taking tasks under ``SKIP LOCKED``;
* **webhook deliveries** (a thread): the same loop over the ``webhooks`` queue, so a receiver
  that hangs (up to ``LOOPWEB_WEBHOOK_TIMEOUT``) never holds up a launch pass.

When the database goes away the worker does not exit: it logs one line, waits and reconnects
with backoff, logs one line when it is back, then recovers as at start-up (a task it was running
is queued again). SIGINT or SIGTERM stops it after the task in hand (a second one at once).
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

from django.db import DatabaseError, close_old_connections, connection
from django.db.models.functions import Now
from django.tasks.signals import task_finished, task_started
from django.utils import timezone
from django.utils.crypto import get_random_string
from django_tasks_db.compat import TaskContext
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from loopweb.database_lost import database_lost
from loopweb.ops import chores
from loopweb.ops.database import summary, wait_until_reachable
from loopweb.ops.models import WorkerProcess
from loopweb.ops.recovery import host_key, recover

log = logging.getLogger("loopweb.ops")

HEARTBEAT_SECONDS = 5.0
DELIVERIES_POLL = 1.0


class DatabaseLost(Exception):  # noqa: N818 - it names what happened
    """The database went away while the worker was using it."""


def new_worker_id() -> str:
    return f"{os.uname().nodename[:40]}-{os.getpid()}-{get_random_string(6)}"[:64]


class TaskWorker(Worker):
    """``db_worker``'s loop, except that a task interrupted by the loss of the database, or by
    a forced stop, is left running for recovery to queue again, instead of being recorded as a
    failure of the task."""

    @classmethod
    def of(cls, queue: str, *, worker_id: str, interval: float) -> TaskWorker:
        return cls(
            queue_names=[queue],
            interval=interval,
            batch=False,
            backend_name="default",
            startup_delay=False,
            max_tasks=None,
            worker_id=worker_id,
            excluded_queue_names=[],
        )

    def run_task(self, db_task_result: DBTaskResult) -> None:
        try:
            self.running_task = True
            task = db_task_result.task
            task_result = db_task_result.task_result
            backend_type = task.get_backend()
            task_started.send(sender=backend_type, task_result=task_result)
            try:
                if task.takes_context:
                    value = task.call(
                        TaskContext(task_result=task_result),
                        *task_result.args,
                        **task_result.kwargs,
                    )
                else:
                    value = task.call(*task_result.args, **task_result.kwargs)
            except (KeyboardInterrupt, SystemExit):
                raise  # stopped by force: recovery queues it again
            except Exception as exc:
                if database_lost(exc):
                    raise DatabaseLost(summary(exc)) from exc
                self._record_failure(db_task_result, exc)
                return
            try:
                db_task_result.set_successful(value)
            except Exception as exc:
                if database_lost(exc):
                    raise DatabaseLost(summary(exc)) from exc
                self._record_failure(db_task_result, exc)
                return
            task_finished.send(sender=backend_type, task_result=db_task_result.task_result)
        finally:
            self.running_task = False
            self._run_tasks += 1

    def _record_failure(self, db_task_result: DBTaskResult, exc: Exception) -> None:
        db_task_result.set_failed(exc)
        try:
            sender = type(db_task_result.task.get_backend())
            result = db_task_result.task_result
        except Exception:  # noqa: BLE001 - the task's path no longer imports
            log.warning("task %s failed (%s)", db_task_result.id, summary(exc))
            return
        task_finished.send(sender=sender, task_result=result, exception=exc)


class Heartbeat(threading.Thread):
    def __init__(self, worker_id: str, stop: threading.Event):
        super().__init__(name="heartbeat", daemon=True)
        self.worker_id, self.stop = worker_id, stop

    def run(self) -> None:
        while not self.stop.wait(HEARTBEAT_SECONDS):
            try:
                beat(self.worker_id)
            except DatabaseError:
                pass  # the main loop reports a lost database; the next beat tries again
            finally:
                _release_connection()


def register(worker_id: str) -> None:
    WorkerProcess.objects.update_or_create(
        worker_id=worker_id,
        defaults={
            "host": host_key(),
            "pid": os.getpid(),
            "started_at": timezone.now(),
            "beat_at": timezone.now(),
        },
    )


def beat(worker_id: str) -> None:
    if not WorkerProcess.objects.filter(worker_id=worker_id).update(beat_at=Now()):
        register(worker_id)  # taken for dead during a long outage: here again


class Chores(threading.Thread):
    def __init__(self, worker_id: str, stop: threading.Event, tick: float = 1.0):
        super().__init__(name="chores", daemon=True)
        self.worker_id, self.stop, self.tick = worker_id, stop, tick

    def run(self) -> None:
        pause = self.tick
        while not self.stop.wait(pause):
            pause = self.tick
            try:
                for name, result in chores.run_due(self.worker_id):
                    log.debug("chore %s: %s", name, result)
            except Exception as exc:  # noqa: BLE001 - a chore's failure must not end the worker
                if database_lost(exc):
                    pause = 5.0  # the main loop reports it and waits; try again later
                else:
                    log.warning(
                        "a periodic chore failed (%s); it runs again when next due",
                        summary(exc),
                        extra={"event": "chore.failed"},
                    )
            finally:
                _release_connection()


class Deliveries(threading.Thread):
    """The ``webhooks`` queue, beside the main one: an attempt waits on someone else's server.
    It looks for work at most once a second (``DELIVERIES_POLL``): a webhook a second late is
    on time, and on SQLite every look takes the database's write lock."""

    def __init__(self, worker_id: str, stop: threading.Event, interval: float):
        super().__init__(name="webhooks", daemon=True)
        self.stop = stop
        self.queue = TaskWorker.of(
            "webhooks", worker_id=worker_id, interval=max(interval, DELIVERIES_POLL)
        )

    def run(self) -> None:
        while self.queue.running and not self.stop.is_set():
            try:
                self.queue.run()
            except Exception as exc:  # noqa: BLE001 - a delivery's failure must not end the worker
                if not database_lost(exc):
                    log.warning("webhook deliveries stopped (%s); starting again", summary(exc))
                self.stop.wait(5.0)
            finally:
                _release_connection()

    def halt(self) -> None:
        self.queue.running = False


def _release_connection() -> None:
    try:
        connection.close()
    except DatabaseError:
        connection.connection = None


def run(*, interval: float = 0.5, worker_id: str | None = None, chores_tick: float = 1.0) -> None:
    """Run the worker until it is told to stop."""
    worker_id = worker_id or new_worker_id()
    queue = TaskWorker.of("default", worker_id=worker_id, interval=interval)
    queue.configure_signals()
    stop = threading.Event()
    threads: list[threading.Thread] = []
    try:
        _start(worker_id)
        deliveries = Deliveries(worker_id, stop, interval)
        threads = [Heartbeat(worker_id, stop), Chores(worker_id, stop, chores_tick), deliveries]
        for thread in threads:
            thread.start()
        while queue.running:
            try:
                queue.run()
            except Exception as exc:
                if not database_lost(exc):
                    raise
                wait_until_reachable(exc)
                _recovered(worker_id, "database back")
    finally:
        stop.set()
        for thread in threads:
            if isinstance(thread, Deliveries):
                thread.halt()
            thread.join(timeout=2)
        _unregister(worker_id)


def _start(worker_id: str) -> None:
    started = time.monotonic()
    while True:
        try:
            register(worker_id)
            break
        except DatabaseError as exc:
            if not database_lost(exc):
                raise
            wait_until_reachable(exc)
    log.info(
        "worker %s started (pid %d)",
        worker_id,
        os.getpid(),
        extra={"event": "worker.started", "worker": worker_id},
    )
    _recovered(worker_id, "start-up", started)


def _recovered(worker_id: str, why: str, started: float | None = None) -> None:
    started = started or time.monotonic()
    while True:
        try:
            requeued, passes = recover(me=worker_id)
            break
        except Exception as exc:
            if not database_lost(exc):
                raise
            wait_until_reachable(exc)
    log.info(
        "%s recovery: %d interrupted task(s) queued again, launch passes for %d running "
        "dispatch(es) (%.1f s)",
        why,
        requeued.tasks,
        passes,
        time.monotonic() - started,
        extra={"event": "worker.recovered", "worker": worker_id},
    )
    close_old_connections()


def _unregister(worker_id: str) -> None:
    # The database may be away: the row then goes stale and another worker cleans it up.
    with contextlib.suppress(DatabaseError):
        WorkerProcess.objects.filter(worker_id=worker_id).delete()
    log.info("worker %s stopped", worker_id, extra={"event": "worker.stopped", "worker": worker_id})
