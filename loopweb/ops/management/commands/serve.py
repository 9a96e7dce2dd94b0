"""The production shape on one machine: the web server (gunicorn, several processes) and the
task workers, supervised together. ``make serve`` runs it after migrating; the Procfile names the
same processes for a process manager.

With ``--ingest N`` (``INGEST_CONCURRENCY``) a second gunicorn serves the drivers on an address of
its own (``INGEST_BIND``, the next port), at a lower CPU priority (``INGEST_NICE``, 10): pushes and
claims are batch work, and when the machine is busy the processes people read boards from are
served first. Drivers are pointed at that address (``loopweb-driver --url``); any web process
still answers them, so nothing breaks if one is not.

A task worker that exits (or is killed) is started again, after a pause that grows while it keeps
failing at once; gunicorn replaces its own web processes. SIGINT or SIGTERM stops everything: each
process gets SIGTERM (a worker finishes the task in hand), and whatever still runs ten seconds
later is killed.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

log = logging.getLogger("loopweb.ops")

#: A worker that ran this long before it exited was not crash-looping: restart it at once.
STEADY = 30.0
STOP_WITHIN = 10.0


class Child:
    def __init__(self, name: str, args: list[str], nice: int = 0, env: dict | None = None):
        self.name, self.args, self.nice, self.env = name, args, nice, env
        self.popen: subprocess.Popen | None = None
        self.started = 0.0
        self.pause = 0.5
        self.due = 0.0  # when to start it again after it exited

    def start(self) -> None:
        self.popen = subprocess.Popen(  # noqa: S603 - ours
            self.args,
            cwd=settings.BASE_DIR,
            env=self.env,
            preexec_fn=self._lower_priority if self.nice else None,  # noqa: PLW1509 - no threads
        )
        self.started = time.monotonic()

    def _lower_priority(self) -> None:
        os.nice(self.nice)

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def exited(self) -> int | None:
        return None if self.popen is None else self.popen.poll()


def children_env(bind: str) -> dict[str, str]:
    """The environment of the processes serve starts: this one's, plus where the console
    listens when ``bind`` is an address and port, since links in webhook payloads default to it
    (``LOOPWEB_PUBLIC_URL``, when not set, is read from ``HOST`` and ``PORT``)."""
    host, _, port = bind.rpartition(":")
    if not (host and port.isascii() and port.isdigit()) or host == "unix":
        return dict(os.environ)
    return {**os.environ, "HOST": host.strip("[]"), "PORT": port}


class Command(BaseCommand):
    help = "Run the web server (gunicorn) and the task workers together, as in production."

    def add_arguments(self, parser):
        parser.add_argument(
            "--bind",
            default=os.environ.get("WEB_BIND")
            or f"{os.environ.get('HOST', '127.0.0.1')}:{os.environ.get('PORT', '8000')}",
        )
        parser.add_argument(
            "--web", type=int, default=int(os.environ.get("WEB_CONCURRENCY", "2")),
            help="web processes",
        )  # fmt: skip
        parser.add_argument(
            "--threads", type=int, default=int(os.environ.get("WEB_THREADS", "8")),
            help="threads per web process",
        )  # fmt: skip
        parser.add_argument(
            "--workers", type=int, default=int(os.environ.get("TASK_WORKERS", "2")),
            help="task worker processes",
        )  # fmt: skip
        parser.add_argument(
            "--ingest", type=int, default=int(os.environ.get("INGEST_CONCURRENCY", "0")),
            help="web processes of their own for the drivers (0: none)",
        )  # fmt: skip
        parser.add_argument(
            "--ingest-bind", default=os.environ.get("INGEST_BIND", ""),
            help="where the drivers' web processes listen (default: the next port)",
        )  # fmt: skip
        parser.add_argument(
            "--ingest-nice", type=int, default=int(os.environ.get("INGEST_NICE", "10")),
            help="how much lower the drivers' web processes' CPU priority is",
        )  # fmt: skip

    def handle(self, bind, web, threads, workers, ingest, ingest_bind, ingest_nice, **options):
        python = sys.executable

        def gunicorn(at: str, processes: int) -> list[str]:
            return [
                python, "-m", "gunicorn", "--config", "python:loopweb.gunicorn_conf",
                "--bind", at, "--workers", str(processes), "--threads", str(threads),
                "loopweb.wsgi",
            ]  # fmt: skip

        host, _, port = bind.rpartition(":")
        env = children_env(bind)
        if ingest and not ingest_bind:
            if not port.isdigit():
                raise CommandError(f"Give --ingest-bind: {bind!r} has no port to follow.")
            ingest_bind = f"{host}:{int(port) + 1}"
        children = [Child("web", gunicorn(bind, web), env=env)]
        if ingest:
            children.append(
                Child("ingest", gunicorn(ingest_bind, ingest), nice=ingest_nice, env=env)
            )
        children += [
            Child(f"worker {i + 1}", [python, "manage.py", "run_worker"], env=env)
            for i in range(workers)
        ]
        stopping: list[int] = []

        def on_signal(signum, frame):
            stopping.append(signum)

        signal.signal(signal.SIGINT, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        for child in children:
            child.start()
        drivers = (
            f"; drivers' web: gunicorn at http://{ingest_bind}/, {ingest} process(es), "
            f"nice {ingest_nice}"
            if ingest
            else ""
        )
        task_workers = [c for c in children if c.name.startswith("worker")]
        self.stdout.write(
            f"Loopweb is serving at http://{host}:{port}/ — web: gunicorn, {web} process(es) × "
            f"{threads} thread(s) (pid {children[0].pid}){drivers}; task workers: {workers} "
            f"(pids {', '.join(str(c.pid) for c in task_workers)}). Ctrl-C stops everything."
        )
        self.stdout.flush()
        try:
            while not stopping:
                self.supervise(children)
                time.sleep(0.2)
        finally:
            self.stop(children)

    def supervise(self, children: list[Child]) -> None:
        now = time.monotonic()
        for child in children:
            code = child.exited()
            if code is None:
                continue
            if child.due == 0.0:
                steady = now - child.started > STEADY
                child.pause = 0.5 if steady else min(child.pause * 2, 30.0)
                child.due = now + (0.0 if steady else child.pause)
                log.warning(
                    "%s (pid %s) exited with %s; starting it again%s",
                    child.name,
                    child.pid,
                    code,
                    "" if steady else f" in {child.pause:.1f} s",
                    extra={"event": "process.exited"},
                )
            if now >= child.due:
                child.due = 0.0
                child.start()

    def stop(self, children: list[Child]) -> None:
        for child in children:
            if child.exited() is None:
                child.popen.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_WITHIN
        for child in children:
            if child.popen is None:
                continue
            try:
                child.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                child.popen.kill()
                child.popen.wait(5)
