"""SPEC §5, "Read-your-writes ... on every web process": two web servers on one database, each
keeping its own shared boards. A write served by one is seen by the very next read served by the
other, for a push, a review, a job's end, a Retry and a Stop."""

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from django.db import connection
from django.utils import timezone

from ladders import services
from loopweb.runs.models import ApiToken
from tests.ladders.builders import PERFECT, climbers, make_ladder, queued, versions

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("live")]

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_url() -> str:
    db = connection.settings_dict
    return f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


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
            cwd=ROOT,
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

    def call(self, token: str, path: str, body: dict | None = None, method: str | None = None):
        request = urllib.request.Request(  # noqa: S310 - a local test server
            self.url + path,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
            method=method or ("GET" if body is None else "POST"),
        )
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            return json.loads(response.read() or b"null")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def servers():
    if connection.vendor != "postgresql":
        pytest.skip("two processes share one database server")
    pair = [Server(), Server()]
    try:
        for server in pair:
            server.ready()
        yield pair
    finally:
        for server in pair:
            server.stop()


def test_a_write_through_one_process_is_seen_by_the_next_read_through_the_other(
    servers, owner, driver
):
    a, b = servers
    owner_token = ApiToken.objects.issue(owner)[1]
    driver_token = ApiToken.objects.issue(driver)[1]
    ladder = make_ladder(owner, versions(2), climbers(2), retryCount=0)
    services.start_dispatch(ladder=ladder)
    progress = f"/api/ladders/{ladder.pk}/progress"
    first, second = queued(ladder)
    for server in servers:  # each process now keeps the board
        board = server.call(owner_token, progress)
        assert board["dispatch"]["runs"]["inFlight"] == 2
    a.call(driver_token, "/api/driver/claim", {"max": 10})

    # A push through A, read through B.
    run = a.call(
        driver_token,
        "/api/runs/",
        {
            "job": first.pk,
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": timezone.now().isoformat(),
        },
    )
    board = b.call(owner_token, progress)
    assert board["climbers"][0]["slots"][0]["status"] == "passed"
    assert board["dispatch"]["runsUnreviewed"] == 1

    # A review through B, read through A.
    b.call(owner_token, f"/api/runs/{run['id']}/reviews", {"aestheticRating": 5, "writeup": ""})
    assert a.call(owner_token, progress)["dispatch"]["runsUnreviewed"] == 0

    # A job's end through A, read through B: the climber blocks as failing.
    a.call(driver_token, f"/api/driver/jobs/{second.pk}/fail", {"failure": "infrastructure"})
    climber = b.call(owner_token, progress)["climbers"][1]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")

    # A Retry through B, read through A.
    b.call(owner_token, f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": climber["key"]})
    board = a.call(owner_token, progress)
    assert board["climbers"][1]["status"] == "running"
    assert board["climbers"][1]["tally"]["inFlight"] == 1

    # A Stop through A, read through B.
    a.call(owner_token, f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": False})
    board = b.call(owner_token, progress)
    assert board["dispatch"]["status"] == "stopped"
    assert board["dispatch"]["runs"]["inFlight"] == 0
