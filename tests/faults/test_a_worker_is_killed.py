"""Fault: the worker is killed (SIGKILL) in the middle of a launch pass.

A real ``db_worker`` process claims the pass's task and is held at a known point by a row lock
the test takes, then killed. Killed before its transaction commits, the pass leaves nothing
behind; killed after it commits but before its task is marked done, it leaves its work. Either
way the task row is left ``running``; the next start-up (``manage.py launch_passes``, which the
worker runs when it starts) puts it back in the queue and runs a pass, and the worker retries
the task. Passes are idempotent: the rung is launched exactly once.
"""

import io
import signal

import pytest
from django.core.management import call_command
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from ladders import services
from ladders.models import DispatchClimber
from ladders.tasks import launch_pass
from loopweb.runs.models import Job, Run
from tests.ladders.builders import climbers, dispatch_of, make_ladder, outside, versions
from tests.support import processes
from tests.support.threads import HeldRow

# PostgreSQL: the worker is killed while it waits on a row lock the test holds.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("faults"),
    pytest.mark.postgres,
]

RUNS = Run._meta.db_table
TASKS = DBTaskResult._meta.db_table


@pytest.fixture
def climb(owner, driver):
    """A ladder of two rungs whose first rung an existing (unpublished) run already passes: its
    first pass records the verdict, publishes that run and launches the second rung."""
    first, second = versions(2)
    [combo] = climbers(1)
    run = outside(driver, first, combo)
    ladder = make_ladder(owner, [first, second], [combo])
    services.start_dispatch(ladder=ladder, run_pass=False)
    [task] = DBTaskResult.objects.filter(task_path=launch_pass.module_path)
    return {"ladder": ladder, "run": run, "task": task}


def start_worker(worker_id: str) -> processes.Process:
    return processes.Process.manage(
        "db_worker", "--batch", "--no-reload", "--interval", "0", "--no-startup-delay",
        "--worker-id", worker_id, "--skip-checks",
    )  # fmt: skip


def kill(worker: processes.Process, backend: int) -> None:
    worker.signal(signal.SIGKILL)
    worker.stop(10)
    processes.terminate_backend(backend)


def restart_and_retry() -> None:
    """What a restarted worker does: the start-up passes, then the queue."""
    out = processes.run("launch_passes", "--skip-checks")
    assert "ran launch passes for 1 running dispatch" in out
    processes.run("db_worker", "--batch", "--no-reload", "--interval", "0", "--no-startup-delay",
                  "--worker-id", "reborn", "--skip-checks")  # fmt: skip


def ladder_jobs(ladder):
    return list(Job.objects.filter(origin__startswith=f"ladder:{ladder.pk}/"))


def test_a_worker_killed_before_its_pass_commits_leaves_nothing_and_the_pass_is_retried(climb):
    ladder, run, task = climb["ladder"], climb["run"], climb["task"]

    with HeldRow(Run, pk=run.pk):  # the pass blocks when it publishes the run
        worker = start_worker("doomed")
        backend = processes.wait_for_lock_wait(RUNS, worker)
        kill(worker, backend)
    processes.wait_until_gone(backend)

    # Nothing the pass did survived: no verdict, no publication, no launch, no pass counted.
    assert DispatchClimber.objects.get(dispatch__ladder=ladder).verdicts == {}
    assert Run.objects.get(pk=run.pk).published is False
    assert ladder_jobs(ladder) == []
    assert dispatch_of(ladder).passes == 0
    task.refresh_from_db()
    assert (task.status, task.worker_ids) == (TaskResultStatus.RUNNING, ["doomed"])

    restart_and_retry()

    task.refresh_from_db()
    assert (task.status, task.worker_ids) == (TaskResultStatus.SUCCESSFUL, ["doomed", "reborn"])
    [job] = ladder_jobs(ladder)
    assert job.attempt == 1 and job.status == "queued"
    assert list(DispatchClimber.objects.get(dispatch__ladder=ladder).verdicts.values()) == [
        "passed"
    ]
    assert Run.objects.get(pk=run.pk).published is True

    call_command("launch_passes", stdout=io.StringIO())  # and again: still one launch
    assert len(ladder_jobs(ladder)) == 1


def test_a_worker_killed_after_its_pass_commits_is_retried_without_launching_twice(climb):
    ladder, run, task = climb["ladder"], climb["run"], climb["task"]

    held_run = HeldRow(Run, pk=run.pk).__enter__()
    try:
        worker = start_worker("doomed")
        processes.wait_for_lock_wait(RUNS, worker)
        # The task is claimed (running): hold its row, so marking it done will wait, then let
        # the pass go on and commit.
        with HeldRow(DBTaskResult, pk=task.pk):
            held_run.__exit__(None, None, None)
            backend = processes.wait_for_lock_wait(TASKS, worker)
            kill(worker, backend)
        processes.wait_until_gone(backend)
    finally:
        held_run.__exit__(None, None, None)

    # The pass committed its launch; its task is still marked running.
    [job] = ladder_jobs(ladder)
    assert dispatch_of(ladder).passes == 1
    task.refresh_from_db()
    assert task.status == TaskResultStatus.RUNNING

    restart_and_retry()

    task.refresh_from_db()
    assert (task.status, task.worker_ids) == (TaskResultStatus.SUCCESSFUL, ["doomed", "reborn"])
    assert ladder_jobs(ladder) == [job]
    assert dispatch_of(ladder).passes == 3  # the killed one, the start-up one, the retried task
