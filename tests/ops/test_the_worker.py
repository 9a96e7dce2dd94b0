"""The worker is the worker: the one command the Procfile names does start-up recovery, the
periodic chores and the tasks, with any number of worker processes, and rides out a lost
database (reached here through a proxy the test cuts, so the real server is never restarted)."""

import datetime as dt
import json
import shlex
import sys
import threading

import pytest
from django.db import connection
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from ladders import services
from ladders.tasks import launch_pass
from loopweb.ops import chores
from loopweb.ops.models import Chore, WorkerProcess
from loopweb.runs.models import Job, Run
from tests.ladders.builders import climbers, dispatch_of, make_ladder, outside, versions
from tests.ops.proxy import Proxy
from tests.support.processes import BASE_DIR, Process, env, url_through, wait_until
from tests.support.threads import HeldRow, succeeded, together

pytestmark = [pytest.mark.django_db(transaction=True)]


def procfile_command(kind: str) -> list[str]:
    for line in (BASE_DIR / "Procfile").read_text().splitlines():
        name, _, command = line.partition(":")
        if name.strip() == kind:
            args = shlex.split(command)
            return [sys.executable, *args[1:]] if args[0] == "python" else args
    raise AssertionError(f"the Procfile names no {kind!r} process")


def start_worker(*extra: str, database_url: str | None = None, **extra_env: str) -> Process:
    args = [*procfile_command("worker"), "--interval", "0.1", *extra]
    environment = env(LOOPWEB_EXPIRE_LEASES_EVERY="0.5", **extra_env)
    if database_url:
        environment["DATABASE_URL"] = database_url
    return Process(args, environment)


@pytest.fixture
def climb(owner, driver):
    """A running dispatch of two rungs whose first rung an existing run passes; its pass task is
    queued, so the first pass records the verdict and launches the second rung."""
    first, second = versions(2)
    [combo] = climbers(1)
    run = outside(driver, first, combo)
    ladder = make_ladder(owner, [first, second], [combo])
    services.start_dispatch(ladder=ladder, run_pass=False)
    [task] = DBTaskResult.objects.filter(task_path=launch_pass.module_path)
    return {"ladder": ladder, "run": run, "task": task}


def ladder_jobs(ladder):
    return list(Job.objects.filter(origin__startswith=f"ladder:{ladder.pk}/"))


@pytest.mark.postgres  # the Procfile's production shape (the demo's worker has tests of its own)
def test_the_procfile_worker_recovers_a_pass_a_killed_worker_left_running_and_runs_the_chores(
    climb, driver
):
    """What the README's production section left out: a worker started as the Procfile says puts
    back the pass a killed worker left running, runs it, and expires leases by itself."""
    task = climb["task"]
    long_ago = timezone.now() - dt.timedelta(minutes=5)
    DBTaskResult.objects.filter(pk=task.pk).update(
        status=TaskResultStatus.RUNNING, worker_ids=["killed"], started_at=long_ago
    )
    # A driver vanished holding a hand-launched job: its lease ran out a minute ago.
    vanished = outside_job_leased_until(driver, timezone.now() - dt.timedelta(minutes=1))

    worker = start_worker()
    try:
        wait_until(
            lambda: DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.SUCCESSFUL,
            60,
            "the interrupted pass ran again",
            worker,
        )
        wait_until(
            lambda: Job.objects.get(pk=vanished.pk).status == "failed",
            30,
            "the expired lease ended its attempt",
            worker,
        )
    finally:
        worker.stop()
    [job] = ladder_jobs(climb["ladder"])
    assert job.attempt == 1
    assert DBTaskResult.objects.get(pk=task.pk).worker_ids[0] == "killed"
    assert Job.objects.get(pk=vanished.pk).failure_detail == "lease expired"
    assert worker.matching("put 1 task(s) back in the queue, left running by killed")
    assert not WorkerProcess.objects.exists()  # it said goodbye
    # Readable: no line per task at the default level, one line per event.
    assert not worker.matching("Task id="), worker.output
    assert len(worker.lines) <= 6, worker.output


def outside_job_leased_until(driver, when) -> Job:
    from loopweb.runs import services as run_services
    from loopweb.runs.cells import CasePin
    from tests.factories import UserFactory

    [version] = versions(1, prefix="hand")
    [combo] = climbers(1, prefix="hand")
    owner = UserFactory(username="hand-owner", role="owner")
    job = run_services.launch_by_hand(
        owner=owner,
        pin=CasePin(version.case.slug, version.version, "default"),
        combination=combo,
    )
    Job.objects.filter(pk=job.pk).update(
        status="running", lease_holder=driver, lease_expires_at=when
    )
    return job


@pytest.mark.postgres  # several worker processes: PostgreSQL's shape, not the demo's database
def test_two_workers_started_at_once_launch_every_slot_once(climb):
    workers = [start_worker(LOG_FORMAT="json"), start_worker(LOG_FORMAT="json")]
    try:
        wait_until(
            lambda: (
                not DBTaskResult.objects.exclude(status=TaskResultStatus.SUCCESSFUL).exists()
                and len(ladder_jobs(climb["ladder"])) == 1
                and all(w.matching("start-up recovery") for w in workers)
            ),
            60,
            "both workers started and the queue drained",
        )
    finally:
        for worker in workers:
            worker.stop()
    assert len(ladder_jobs(climb["ladder"])) == 1
    assert dispatch_of(climb["ladder"]).passes >= 1
    assert all(w.popen.returncode == 0 for w in workers), [w.output for w in workers]
    # LOG_FORMAT=json: every line one JSON object.
    for worker in workers:
        lines = [json.loads(line) for line in worker.lines]
        assert {"worker.started", "worker.recovered", "worker.stopped"} <= {
            line.get("event") for line in lines
        }


def test_a_chore_is_run_by_one_worker_per_period_however_many_ask(settings):
    settings.LOOPWEB_CHORES = {**settings.LOOPWEB_CHORES, "expire_leases": 60}
    results = succeeded(together(8, lambda i: chores.take_turn("expire_leases", f"w{i}")))
    assert sorted(results) == [False] * 7 + [True]
    assert chores.take_turn("expire_leases", "late") is False  # not due again for a minute
    Chore.objects.filter(name="expire_leases").update(next_run_at=timezone.now())
    assert chores.take_turn("expire_leases", "later") is True


@pytest.mark.postgres  # a TCP proxy in front of PostgreSQL is cut and restored
@pytest.mark.parametrize("pool", ["0", "1"], ids=["own connections", "pooled connections"])
def test_a_worker_waits_for_a_lost_database_and_recovers_when_it_is_back(owner, driver, pool):
    """The database goes away while the worker runs a pass (blocked on a row lock): the worker
    says so once, waits, says when it is back, puts the interrupted pass back in the queue and
    runs it. It never exits."""
    first, second = versions(2)
    [combo] = climbers(1)
    run = outside(driver, first, combo)
    ladder = make_ladder(owner, [first, second], [combo])
    proxy = Proxy(("127.0.0.1", connection.settings_dict.get("PORT") or 5432))
    worker = start_worker(database_url=url_through(proxy.port), DB_POOL=pool)
    try:
        worker.wait_for_line("start-up recovery")
        with HeldRow(Run, pk=run.pk):  # the pass blocks when it publishes the run
            services.start_dispatch(ladder=ladder, run_pass=False)
            [task] = DBTaskResult.objects.filter(task_path=launch_pass.module_path)
            climb = {"ladder": ladder, "task": task}
            wait_until(
                lambda: (
                    DBTaskResult.objects.get(pk=climb["task"].pk).status == TaskResultStatus.RUNNING
                ),
                60,
                "the worker took the pass",
                worker,
            )
            proxy.cut()
            worker.wait_for_line("database unreachable", timeout=30)
        threading.Event().wait(2.5)  # a few reconnection attempts, all refused
        assert worker.alive(), worker.output
        assert DBTaskResult.objects.get(pk=climb["task"].pk).status == TaskResultStatus.RUNNING
        assert ladder_jobs(climb["ladder"]) == []

        proxy.open()
        worker.wait_for_line("database reachable again", timeout=30)
        wait_until(
            lambda: (
                DBTaskResult.objects.get(pk=climb["task"].pk).status == TaskResultStatus.SUCCESSFUL
            ),
            60,
            "the interrupted pass ran again",
            worker,
        )
    finally:
        worker.stop()
        proxy.close()
    [job] = ladder_jobs(climb["ladder"])
    assert job.attempt == 1
    assert len(worker.matching("database unreachable")) == 1, worker.output
    assert len(worker.matching("database reachable again")) == 1, worker.output
    assert worker.matching("database back recovery: 1 interrupted task(s)"), worker.output
    assert worker.popen.returncode == 0, worker.output
