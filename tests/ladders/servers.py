"""Web processes of the product serving the test database, for tests that read through more
than one (each keeps its own shared boards, ``ladders.shared_progress``). Background tasks are
queued in the database, where the test runs them as the worker would (``run_queued_tasks``)."""

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from django.db import connection

from tests.support.processes import BASE_DIR, database_url, free_port


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    content: bytes

    def json(self):
        return json.loads(self.content or b"null")


class Server:
    def __init__(self):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {
            **os.environ,
            "DEBUG": "1",
            "DATABASE_URL": database_url(),
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "LOOPWEB_TASK_BACKEND": "database",
        }
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}", "--noreload"],
            cwd=BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}/login/", timeout=1)  # noqa: S310
                return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        raise AssertionError(f"the server on {self.port} did not start")

    def request(
        self,
        token: str,
        path: str,
        body: dict | None = None,
        method: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """Any answer, whatever its status."""
        request = urllib.request.Request(  # noqa: S310 - a local test server
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            headers={
                "Authorization": f"Token {token}",
                "Content-Type": "application/json",
                **(headers or {}),
            },
            method=method or ("GET" if body is None else "POST"),
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
                return Answer(response.status, dict(response.headers), response.read())
        except urllib.error.HTTPError as error:
            return Answer(error.code, dict(error.headers), error.read())

    def call(self, token: str, path: str, body: dict | None = None, method: str | None = None):
        """The JSON of a successful answer."""
        answer = self.request(token, path, body, method)
        assert answer.status < 400, (path, answer.status, answer.content[:500])
        return answer.json()

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


@contextmanager
def web_processes(n: int = 2) -> Iterator[list[Server]]:
    """``n`` web processes on the test database (PostgreSQL: SQLite's file is the demo's)."""
    if connection.vendor != "postgresql":
        pytest.skip("processes share one database server")
    started = []
    try:
        started.extend(Server() for _ in range(n))  # each one kept as it starts
        for server in started:
            server.ready()
        yield started
    finally:
        for server in started:
            server.stop()
