"""Real processes (the worker, the production server, drivers) against the test database, with
their output collected line by line as they run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from tests.faults.processes import database_url

BASE_DIR = Path(__file__).resolve().parents[2]


def url_through(port: int) -> str:
    """The test database's URL, reached through a proxy on ``port``."""
    parts = urllib.parse.urlparse(database_url())
    netloc = parts.netloc.rsplit("@", 1)
    user = f"{netloc[0]}@" if len(netloc) == 2 else ""
    return parts._replace(netloc=f"{user}127.0.0.1:{port}").geturl()


def env(**extra: str) -> dict:
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
