"""The periodic chores every task worker offers to run, and the turn that makes each run once
per period however many workers there are (``take_turn``).

| chore | what | every (default) |
|---|---|---|
| ``expire_leases`` | end attempts whose driver stopped reporting (infrastructure, retried) | 15 s |
| ``recover`` | put back dead workers' tasks; write records a failed task left unwritten | 15 s |
| ``verify_gate`` | the verify gate's sweep of due checkpoints | 60 s |
| ``prune`` | drop finished task rows and sign-in counters older than their keep | 1 h |
| ``prune_changes`` | drop change stamps older than 30 minutes (boards older recompute) | 5 min |
| ``webhooks`` | send webhook attempts no task will send; prune the delivery log | 30 s |
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError
from django.db.models import DateTimeField, ExpressionWrapper, Q, Value
from django.db.models.functions import Now
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from loopweb.ops.models import Chore, SignInCount

log = logging.getLogger("loopweb.ops")


def expire_leases() -> str:
    from loopweb.runs.services import expire_leases

    return f"expired {expire_leases()} lease(s)"


def recover() -> str:
    from loopweb.history.tasks import record_unrecorded
    from loopweb.ops.recovery import requeue_orphans

    requeued = requeue_orphans().tasks
    return f"requeued {requeued} task(s), wrote {record_unrecorded()} dispatch record(s)"


def verify_gate() -> str:
    from evalsets.services import verify_open

    return f"recorded {verify_open()} outcome result(s)"


def prune() -> str:
    """Finished task rows are kept ``LOOPWEB_KEEP_TASKS_DAYS`` (7) days, then dropped; so are
    old sign-in counters."""
    now = timezone.now()
    cutoff = now - timedelta(days=settings.LOOPWEB_KEEP_TASKS_DAYS)
    tasks, _ = DBTaskResult.objects.filter(
        Q(status=TaskResultStatus.SUCCESSFUL) | Q(status=TaskResultStatus.FAILED),
        finished_at__lt=cutoff,
    ).delete()
    counters, _ = SignInCount.objects.filter(window__lt=int(now.timestamp()) - 86400).delete()
    return f"pruned {tasks} task row(s), {counters} sign-in counter(s)"


def prune_changes() -> str:
    from loopweb.runs import changes

    return f"pruned {changes.prune()} change stamp(s)"


def webhooks() -> str:
    from loopweb.webhooks.services import prune, sweep

    return f"handled {sweep()} webhook attempt(s) no task would send, pruned {prune()}"


CHORES: dict[str, Callable[[], str]] = {
    "expire_leases": expire_leases,
    "recover": recover,
    "verify_gate": verify_gate,
    "prune": prune,
    "prune_changes": prune_changes,
    "webhooks": webhooks,
}


def every(name: str) -> float:
    return float(settings.LOOPWEB_CHORES[name])


def take_turn(name: str, worker_id: str) -> bool:
    """Take the chore's turn if it is due: one conditional UPDATE moves its next run a period
    ahead on the database's clock, so of several workers asking at once exactly one gets it."""
    period = ExpressionWrapper(
        Now() + Value(timedelta(seconds=every(name))), output_field=DateTimeField()
    )
    taken = Chore.objects.filter(name=name, next_run_at__lte=Now()).update(
        next_run_at=period, last_started_at=Now(), last_worker=worker_id
    )
    if taken:
        return True
    if not Chore.objects.filter(name=name).exists():
        with contextlib.suppress(IntegrityError):  # another worker created it first
            Chore.objects.create(
                name=name, next_run_at=timezone.now(), last_started_at=None, last_worker=""
            )
        return take_turn(name, worker_id)
    return False


def run_due(worker_id: str) -> list[tuple[str, str]]:
    """Run every chore that is due and whose turn this worker took; returns (name, result)."""
    done = []
    for name, chore in CHORES.items():
        if every(name) <= 0 or not take_turn(name, worker_id):
            continue
        result = chore()
        Chore.objects.filter(name=name).update(last_result=result[:300])
        done.append((name, result))
    return done
