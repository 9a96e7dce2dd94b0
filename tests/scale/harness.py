"""The production shape under load, with faults: ``scripts/serve`` (gunicorn and task workers)
on the test database, seeded simulated drivers (``loopweb-driver``) over HTTP, and the faults a
deployment meets: a web process killed, a task worker killed in the middle of a launch pass, the
database restarted (``make scale`` only) or every connection to it cut.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from django.db import connection
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from ladders import services
from ladders.bodies import ladder_body, rung_body
from ladders.models import Dispatch
from ladders.tasks import launch_pass
from loopweb.ops.models import WorkerProcess
from loopweb.runs.models import (
    Case,
    CaseVersion,
    Combination,
    Job,
    ModelEntry,
    ProviderBudget,
    Role,
)
from tests.support.processes import BASE_DIR, Process, env, free_port, wait_until, watcher
from tests.support.threads import HeldRow

CHECKLIST = [
    {"id": "boots", "text": "The game starts", "critical": True},
    {"id": "controls", "text": "The player moves", "critical": True},
    {"id": "goal", "text": "The level can be completed", "critical": True},
    {"id": "feedback", "text": "Score is shown", "critical": False},
    {"id": "polish", "text": "Sound or animation", "critical": False},
    {"id": "restart", "text": "The level restarts", "critical": False},
]


@dataclass(frozen=True)
class Size:
    climbers: int
    rungs: int
    driver_processes: int
    drivers_per_process: int
    web: int
    threads: int
    workers: int
    speed: float
    lease: int
    restart_database: bool
    deadline: float  # seconds the climb may take
    budget: int  # the in-flight cap of the provider budget on half the climbers (CAPPED)

    @property
    def drivers(self) -> int:
        return self.driver_processes * self.drivers_per_process


SMOKE = Size(
    climbers=8, rungs=6, driver_processes=1, drivers_per_process=4, web=2, threads=2, workers=2,
    speed=15, lease=8, restart_database=False, deadline=240, budget=2,
)  # fmt: skip
FULL = Size(
    climbers=100, rungs=20, driver_processes=4, drivers_per_process=8, web=3, threads=4,
    workers=2, speed=20, lease=20, restart_database=True, deadline=1800, budget=12,
)  # fmt: skip

#: The provider of every other climber, under a budget of ``Size.budget`` jobs in flight; the
#: others' provider has none.
CAPPED = "sim-capped"


def provider_of(index: int) -> str:
    return CAPPED if index % 2 == 0 else "sim"


class CapWatch(threading.Thread):
    """Reads the capped provider's jobs in flight from the job rows every few milliseconds
    while the climb runs (a read the faults cut short is skipped)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.seen: list[int] = []
        self.stopping = threading.Event()

    def run(self):
        try:
            while not self.stopping.wait(0.02):
                try:
                    self.seen.append(capped_in_flight())
                except Exception:  # noqa: BLE001 - the database restarting under the read
                    connection.close()
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopping.set()
        self.join(timeout=10)


def capped_in_flight() -> int:
    """The capped provider's jobs drivers hold, read from the job rows."""
    return Job.objects.filter(
        status__in=["pending", "dispatched", "starting", "running"],
        combination_cell__provider=CAPPED,
    ).count()


def build_ladder(owner, size: Size, tag: str = "scale"):
    """``size.climbers`` × ``size.rungs``: functional cases of random difficulty (their slugs end
    in a letter, so the simulator draws it), one model per climber."""
    versions = []
    for i in range(size.rungs):
        case = Case.objects.create(
            slug=f"{tag}-{i + 1}-x", title=f"{tag} case {i + 1}", kind="functional"
        )
        versions.append(
            CaseVersion.objects.create(
                case=case,
                version="1",
                ingested_at="2026-01-01T00:00:00Z",
                variants=["default"],
                checklist=CHECKLIST,
            )
        )
    ModelEntry.objects.bulk_create(
        [ModelEntry(name=f"{tag}-m{i}", provider=provider_of(i)) for i in range(size.climbers)]
    )
    combos = [
        Combination.objects.create(
            kind="harness", harness="sim", model=f"{tag}-m{i}", provider=provider_of(i)
        )
        for i in range(size.climbers)
    ]
    ProviderBudget.objects.update_or_create(
        provider=CAPPED, model="", defaults={"max_in_flight": size.budget}
    )
    return services.save_ladder(
        owner=owner,
        data=ladder_body(
            name=f"{tag} climb",
            rungs=[rung_body(v.case.slug, "1") for v in versions],
            combinations=[c.pk for c in combos],
            runsInFlightLimit=max(8, size.drivers * 2),
        ),
    )


def api(base: str, token: str, method: str = "GET", path: str = "/", body=None, timeout=30):
    request = urllib.request.Request(
        f"{base}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
        return json.loads(response.read())


def get(url: str, headers: dict | None = None, timeout: float = 5) -> tuple[int, str]:
    try:
        request = urllib.request.Request(url, headers=headers or {})  # noqa: S310
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:
        return 0, str(exc)


class Shape:
    """``scripts/serve`` on the test database: the same command ``make serve`` runs."""

    METRICS_TOKEN = "scale-metrics-token"

    def __init__(self, size: Size, lease: int, database_url: str | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = Process(
            [str(BASE_DIR / "scripts" / "serve")],
            env(
                PORT=str(self.port),
                WEB_CONCURRENCY=str(size.web),
                WEB_THREADS=str(size.threads),
                DB_POOL_MAX_SIZE=str(size.threads + 1),
                TASK_WORKERS=str(size.workers),
                LOOPWEB_LEASE_SECONDS=str(lease),
                LOOPWEB_EXPIRE_LEASES_EVERY="2",
                LOOPWEB_RECOVER_EVERY="5",
                LOOPWEB_WORKER_DEAD_AFTER="15",
                LOOPWEB_METRICS_TOKEN=self.METRICS_TOKEN,
                LOOPWEB_SIGNIN_ADDRESS_LIMIT="1000/60",
                PROMETHEUS_MULTIPROC_DIR=str(BASE_DIR / "var" / f"prometheus-{self.port}"),
                **({"DATABASE_URL": database_url} if database_url else {}),
            ),
            new_session=True,
        )
        line = self.process.wait_for_line("Loopweb is serving", timeout=180)
        self.web_pid = int(re.search(r"\(pid (\d+)\)", line).group(1))
        wait_until(lambda: self.ready(), 60, "/readyz ready", self.process)

    def ready(self) -> bool:
        return get(f"{self.url}/readyz")[0] == 200

    def web_processes(self) -> list[int]:
        return children_of(self.web_pid)

    def metrics(self) -> str:
        status, text = get(
            f"{self.url}/metrics", {"Authorization": f"Bearer {self.METRICS_TOKEN}"}, timeout=30
        )
        assert status == 200, text
        return text

    def stop(self) -> None:
        if self.process.alive():
            os.killpg(self.process.popen.pid, signal.SIGTERM)
            try:
                self.process.popen.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.popen.pid, signal.SIGKILL)
                self.process.popen.wait(10)
        self.process.stop()


class Fleet:
    """Seeded simulated drivers in processes of their own, each journaling the pushes the server
    acknowledged."""

    def __init__(self, url: str, token: str, size: Size, seed: int, folder: Path):
        script = str(Path(sys.executable).parent / "loopweb-driver")
        self.journals = [folder / f"journal-{i}.jsonl" for i in range(size.driver_processes)]
        environment = {
            k: v for k, v in env(LOOPWEB_DRIVER_TOKEN=token).items() if k != "DATABASE_URL"
        }
        self.processes = [
            Process(
                [
                    script,
                    "--url",
                    url,
                    "--simulate",
                    "--seed",
                    str(seed),
                    "--concurrency",
                    str(size.drivers_per_process),
                    "--speed",
                    str(size.speed),
                    "--poll",
                    "0.2",
                    "--heartbeat",
                    str(max(1, size.lease // 4)),
                    "--journal",
                    str(journal),
                ],
                environment,
            )  # fmt: skip
            for journal in self.journals
        ]

    def acknowledged(self) -> list[dict]:
        lines = []
        for journal in self.journals:
            if journal.exists():
                lines += [json.loads(x) for x in journal.read_text().splitlines() if x.strip()]
        return lines

    def alive(self) -> bool:
        return all(process.alive() for process in self.processes)

    def stop(self) -> None:
        for process in self.processes:
            process.signal(signal.SIGTERM)
        for process in self.processes:
            process.stop(timeout=10)

    @property
    def output(self) -> str:
        return "\n".join(p.output for p in self.processes)


class Watched:
    """Processes watched together: all must stay alive; their output is shown on a failure."""

    def __init__(self, *processes: Process):
        self.processes = processes

    def alive(self) -> bool:
        return all(process.alive() for process in self.processes)

    @property
    def output(self) -> str:
        return "\n=====\n".join(process.output[-6000:] for process in self.processes)


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[1]) == pid and fields[0] not in "ZX":
            found.append(int(entry.name))
    return found


class PgBouncer:
    """PgBouncer in transaction pooling mode in front of the test database's server."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="loopweb-pgbouncer-"))
        self.folder.chmod(0o755)  # pgbouncer runs as postgres, and reads its files
        self.port = free_port()
        db = connection.settings_dict
        users = self.folder / "users.txt"
        users.write_text(f'"{db.get("USER") or "postgres"}" ""\n')
        config = self.folder / "pgbouncer.ini"
        config.write_text(
            "[databases]\n"
            f"* = host={db.get('HOST') or '127.0.0.1'} port={db.get('PORT') or 5432}\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\n"
            f"auth_type = trust\nauth_file = {users}\n"
            "pool_mode = transaction\nmax_client_conn = 500\ndefault_pool_size = 20\n"
            "ignore_startup_parameters = extra_float_digits\nunix_socket_dir =\nlogfile =\n"
        )
        for path in (users, config):
            path.chmod(0o644)
        command = ["pgbouncer", str(config)]
        if os.geteuid() == 0:
            command[1:1] = ["-u", "postgres"]  # it will not run as root
        self.process = Process(command, {**os.environ})
        wait_until(self._answers, 20, "PgBouncer answering", self.process)

    def _answers(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.url("postgres"), connect_timeout=2):
                return True
        except psycopg.OperationalError:
            return False

    def url(self, name: str | None = None) -> str:
        db = connection.settings_dict
        user = db.get("USER") or "postgres"
        return f"postgres://{user}@127.0.0.1:{self.port}/{name or db['NAME']}"

    def stop(self) -> None:
        self.process.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


# Faults ---------------------------------------------------------------------------------------


@dataclass
class Fault:
    name: str
    started: float
    recovered: float | None = None
    detail: dict = field(default_factory=dict)

    @property
    def seconds(self) -> float | None:
        return None if self.recovered is None else self.recovered - self.started


def kill_a_web_process(shape: Shape, expected: int) -> Fault:
    """SIGKILL one gunicorn worker; recovered when gunicorn runs its full count again."""
    before = shape.web_processes()
    victim = before[len(before) // 2]
    fault = Fault("web process killed (SIGKILL)", time.monotonic(), detail={"pid": victim})
    os.kill(victim, signal.SIGKILL)

    def replaced():
        now = shape.web_processes()
        return victim not in now and len(now) == expected

    wait_until(replaced, 60, "gunicorn replaced its killed process", shape.process)
    fault.recovered = time.monotonic()
    return fault


def kill_a_worker_mid_pass(shape: Shape, ladder_id: int) -> Fault:
    """Hold the dispatch row until a worker's pass waits on it, SIGKILL that worker, release.
    Recovered when that pass task has run to success (by the restarted worker or the other)."""
    held = HeldRow(Dispatch, ladder_id=ladder_id)  # the next launch pass waits on it
    held.start()
    assert held.held.wait(30)
    # A pass for a worker to take, whatever else is queued (pushes wait on the held row too).
    launch_pass.enqueue(ladder_id)
    try:
        task, pid = wait_until(lambda: _running_pass(), 60, "a launch pass taken by a worker")
        fault = Fault(
            "task worker killed mid-pass (SIGKILL)",
            time.monotonic(),
            detail={"pid": pid, "task": str(task.pk)},
        )
        os.kill(pid, signal.SIGKILL)
    finally:
        held.release.set()
        held.join(30)
    wait_until(
        lambda: DBTaskResult.objects.get(pk=task.pk).status == TaskResultStatus.SUCCESSFUL,
        120,
        "the interrupted pass ran again",
        shape.process,
    )
    fault.recovered = time.monotonic()
    fault.detail["worker_ids"] = DBTaskResult.objects.get(pk=task.pk).worker_ids
    return fault


def _running_pass():
    with watcher() as conn:  # a pass waiting on the dispatch row lock
        waiting = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND wait_event_type = 'Lock' AND query ILIKE %s",
            ['%FROM "ladders_dispatch"%FOR %UPDATE%'],  # a pass: FOR NO KEY UPDATE
        ).fetchone()[0]
    if not waiting:
        return None
    for task in DBTaskResult.objects.filter(
        task_path=launch_pass.module_path, status=TaskResultStatus.RUNNING
    ).exclude(worker_ids=[]):
        worker = WorkerProcess.objects.filter(worker_id=task.worker_ids[-1]).first()
        if worker is not None:  # a registered worker's (not one being forgotten as dead)
            return task, worker.pid
    return None


def restart_the_database(shape: Shape, progressed) -> Fault:
    """``pg_ctlcluster … restart``: recovered when /readyz is ready again and a new run has been
    stored since."""
    version = sorted(os.listdir("/etc/postgresql"))[0]
    connection.close()
    fault = Fault("PostgreSQL restarted (pg_ctlcluster restart)", time.monotonic())
    subprocess.run(  # noqa: S603 - the machine's own cluster
        ["pg_ctlcluster", "--skip-systemctl-redirect", version, "main", "restart"],  # noqa: S607
        check=True,
        timeout=120,
    )
    fault.detail["restart_command_s"] = round(time.monotonic() - fault.started, 1)
    wait_until(shape.ready, 120, "/readyz ready after the restart", shape.process)
    fault.detail["ready_after_s"] = round(time.monotonic() - fault.started, 1)
    wait_until(progressed(), 180, "a run stored after the restart", shape.process)
    fault.recovered = time.monotonic()
    return fault


def cut_every_connection(shape: Shape, progressed) -> Fault:
    """Terminate every backend of the test database but ours (what a failover or a restart
    does to open connections), without restarting the server the rest of the suite uses."""
    check = progressed()
    fault = Fault("every database connection cut (pg_terminate_backend)", time.monotonic())
    with watcher() as conn:
        cut = conn.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()[0]
    connection.close()
    fault.detail["connections"] = cut
    wait_until(shape.ready, 60, "/readyz ready after the cut", shape.process)
    wait_until(check, 120, "a run stored after the cut", shape.process)
    fault.recovered = time.monotonic()
    return fault


def driver_token(username: str = "scale-fleet") -> str:
    from loopweb.runs.models import ApiToken
    from tests.factories import UserFactory

    user = UserFactory(username=username, role=Role.DRIVER)
    return ApiToken.objects.issue(user)[1]
