"""Real processes against the test database: the worker, the production server, drivers and
management commands, with their output collected line by line as they run; and PostgreSQL
watched for a backend that waits on a lock, so that a process can be killed at a known point."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

import psycopg
from django.db import connection

BASE_DIR = Path(__file__).resolve().parents[2]


def database_url() -> str:
    """The test database's URL, for a process of its own."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    host = f"{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}"
    return f"postgres://{user}{password}@{host}/{db['NAME']}"


def free_port() -> int:
    """A local port nothing listens on, for a process (or a proxy) to listen on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def url_through(port: int) -> str:
    """The test database's URL, reached through a proxy on ``port``."""
    parts = urllib.parse.urlparse(database_url())
    netloc = parts.netloc.rsplit("@", 1)
    user = f"{netloc[0]}@" if len(netloc) == 2 else ""
    return parts._replace(netloc=f"{user}127.0.0.1:{port}").geturl()


def env(**extra: str) -> dict:
    """The environment of a process on the test database, with ``extra`` over it."""
    base = {**os.environ, "DATABASE_URL": database_url(), "DEBUG": "1", "PYTHONUNBUFFERED": "1"}
    base.pop("DJANGO_SETTINGS_MODULE", None)
    base.update(extra)
    return base


class Process:
    """A child process whose output lines are collected in the background."""

    def __init__(self, args: list[str], environment: dict, *, new_session: bool = False):
        self.popen = subprocess.Popen(  # noqa: S603 - our own commands
            args,
            cwd=BASE_DIR,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=new_session,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @classmethod
    def manage(cls, *args: str, **extra_env: str) -> Process:
        """``manage.py`` with ``args``, running."""
        return cls([sys.executable, "manage.py", *args], env(**extra_env))

    def _read(self) -> None:
        for line in self.popen.stdout:
            self.lines.append(line.rstrip("\n"))

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    def matching(self, text: str) -> list[str]:
        return [line for line in self.lines if text in line]

    def wait_for_line(self, text: str, timeout: float = 60) -> str:
        wait_until(lambda: self.matching(text), timeout, f"no line with {text!r}", self)
        return self.matching(text)[0]

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, sig: int) -> None:
        if self.alive():
            self.popen.send_signal(sig)

    def stop(self, timeout: float = 15) -> int:
        if self.alive():
            self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._reader.join(5)
        return self.popen.returncode


def run(*args: str, timeout: float = 60) -> str:
    """``manage.py`` with ``args``, run to its end; its output, once it succeeded."""
    done = subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", *args],
        cwd=BASE_DIR,
        env=env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def wait_until(
    condition: Callable[[], object], timeout: float, message: str, process: Process | None = None
):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and not process.alive():
            break
        time.sleep(0.1)
    detail = f"\n--- output ---\n{process.output}" if process is not None else ""
    raise AssertionError(f"{message} within {timeout} s{detail}")


# Watching PostgreSQL ------------------------------------------------------------------------


def watcher() -> psycopg.Connection:
    """A connection of its own to the test database, outside the test's transaction."""
    db = connection.settings_dict
    return psycopg.connect(
        dbname=db["NAME"],
        user=db.get("USER") or "postgres",
        password=db.get("PASSWORD") or None,
        host=db.get("HOST") or "127.0.0.1",
        port=db.get("PORT") or 5432,
        autocommit=True,
    )


def wait_for_lock_wait(table: str, process: Process, timeout: float = 60) -> int:
    """The backend pid of a statement on ``table`` that waits for a lock, once there is one."""
    deadline = time.monotonic() + timeout
    with watcher() as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock' AND query ILIKE %s",
                [f'UPDATE "{table}"%'],
            ).fetchone()
            if row:
                return row[0]
            if not process.alive():
                process.stop()  # its last lines read
                raise AssertionError(f"the process exited early:\n{process.output}")
            time.sleep(0.05)
    raise AssertionError(f"no backend blocked on {table} within {timeout} s")


def wait_until_gone(pid: int, timeout: float = 30) -> None:
    """A killed client's backend rolls back and exits once it next talks to its socket."""
    deadline = time.monotonic() + timeout
    with watcher() as conn:
        while time.monotonic() < deadline:
            if not conn.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone():
                return
            time.sleep(0.05)
    raise AssertionError(f"backend {pid} is still there after {timeout} s")


def terminate_backend(pid: int) -> None:
    """End a backend whose client was killed, before its waiting statement can complete: what
    PostgreSQL does by itself once it notices the dead socket
    (``client_connection_check_interval``), made deterministic."""
    with watcher() as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", [pid])
