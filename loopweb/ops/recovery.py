"""Putting back in the queue the tasks a dead worker left running, and start-up recovery.

A task row a worker took stays ``RUNNING`` if the worker dies (SIGKILL, a lost machine) or
loses the database mid-task; nothing would run it again. Every task here is idempotent (a launch
pass, a lease sweep, a verification), so running one again is safe: a task interrupted anywhere
is simply queued again. Whose tasks count as interrupted:

* a worker whose heartbeat is older than ``LOOPWEB_WORKER_DEAD_AFTER`` seconds, or which ran on
  this host (same process namespace) under a process id that no longer exists;
* the worker recovering itself (it holds no task while it recovers);
* a worker id no live worker has, on a task taken more than ``LOOPWEB_WORKER_DEAD_AFTER``
  seconds ago (a plain ``db_worker``, or a row already cleaned up).

Recovery is safe when several workers run it at once: each task is put back with one
compare-and-set UPDATE, and the launch passes that follow are idempotent and serialised per
ladder by the dispatch's row lock.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Q
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from loopweb.ops.models import WorkerProcess

log = logging.getLogger("loopweb.ops")


def host_key() -> str:
    """This host, and the process-id namespace, so a pid is only compared where it means the
    same process (two containers may share a host name)."""
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return f"{socket.gethostname()}:{namespace}"[:255]


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a killed process its parent has not reaped yet is a zombie: dead
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in {"Z", "X"}


def dead_after() -> timedelta:
    return timedelta(seconds=settings.LOOPWEB_WORKER_DEAD_AFTER)


def live_workers(*, exclude: str = "") -> set[str]:
    """Ids of the workers that are alive, as far as their heartbeats and this host can tell."""
    fresh_since = timezone.now() - dead_after()
    here = host_key()
    alive = set()
    for worker_id, host, pid in WorkerProcess.objects.filter(beat_at__gte=fresh_since).values_list(
        "worker_id", "host", "pid"
    ):
        if worker_id == exclude:
            continue
        if host == here and not pid_alive(pid):
            continue
        alive.add(worker_id)
    return alive


@dataclass
class Requeued:
    tasks: int
    workers: list[str]


def requeue_orphans(*, me: str = "") -> Requeued:
    """Put back in the queue every task left running by a worker that is gone (or by ``me``),
    and forget the dead workers. Returns what it did."""
    alive = live_workers(exclude=me)
    old = timezone.now() - dead_after()
    known = set(WorkerProcess.objects.values_list("worker_id", flat=True))
    requeued, owners = 0, set()
    for task_id, worker_ids, started_at in DBTaskResult.objects.filter(
        status=TaskResultStatus.RUNNING
    ).values_list("id", "worker_ids", "started_at"):
        last = worker_ids[-1] if worker_ids else ""
        if last in alive:
            continue
        if last != me and last not in known and started_at is not None and started_at > old:
            continue  # an unregistered runner's task, not old enough to call it lost
        # Compare-and-set: a task another recovering worker already put back, or that its
        # worker finished meanwhile, is left as it is.
        requeued += DBTaskResult.objects.filter(
            pk=task_id, status=TaskResultStatus.RUNNING, started_at=started_at
        ).update(status=TaskResultStatus.READY)
        owners.add(last)
    dead = (
        WorkerProcess.objects.exclude(worker_id__in=alive | {me})
        .filter(Q(beat_at__lt=old) | Q(host=host_key()))
        .values_list("worker_id", flat=True)
    )
    dead = list(dead)
    if dead:
        WorkerProcess.objects.filter(worker_id__in=dead).delete()
    if requeued:
        log.warning(
            "put %d task(s) back in the queue, left running by %s",
            requeued,
            ", ".join(sorted(o or "an unknown worker" for o in owners)),
            extra={"event": "tasks.requeued", "tasks": requeued},
        )
    return Requeued(requeued, sorted(owners))


def recover(*, me: str) -> tuple[Requeued, int]:
    """What a worker does when it starts and when the database comes back: its own and the
    dead workers' interrupted tasks back in the queue, then one launch pass for every running
    dispatch (which also puts back any launch pass left running, and launches what a lost task
    would have)."""
    from ladders.services import launch_passes_for_running

    requeued = requeue_orphans(me=me)
    passes = launch_passes_for_running()
    return requeued, passes
