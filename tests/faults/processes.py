"""Running management commands as real processes against the test database, and watching
PostgreSQL for a backend that waits on a lock (so a process can be killed at a known point)."""

import os
import subprocess
import sys
import time
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


def command_env(**extra) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url(), "DEBUG": "1", **extra}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return env


def start(*args: str) -> subprocess.Popen:
    return subprocess.Popen(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", *args, "--skip-checks"],
        cwd=BASE_DIR,
        env=command_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def run(*args: str, timeout: float = 60) -> str:
    done = subprocess.run(  # noqa: S603 - our own manage.py
        [sys.executable, "manage.py", *args, "--skip-checks"],
        cwd=BASE_DIR,
        env=command_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def watcher() -> psycopg.Connection:
    db = connection.settings_dict
    return psycopg.connect(
        dbname=db["NAME"],
        user=db.get("USER") or "postgres",
        password=db.get("PASSWORD") or None,
        host=db.get("HOST") or "127.0.0.1",
        port=db.get("PORT") or 5432,
        autocommit=True,
    )


def wait_for_lock_wait(table: str, process: subprocess.Popen, timeout: float = 60) -> int:
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
            if process.poll() is not None:
                raise AssertionError(f"the worker exited early:\n{process.stdout.read()}")
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
