"""Ctrl-C stops the whole demo (web server, worker, simulated drivers) within five seconds, even
in the middle of a climb."""

import json
import os
import signal
import time
import urllib.request

import pytest

from tests.support.processes import BASE_DIR, Process, env, free_port, wait_until

pytestmark = pytest.mark.xdist_group("live")


def api(base, method, path, body=None, token=None):
    request = urllib.request.Request(
        f"{base}{path}",
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json"}
        | ({"Authorization": f"Token {token}"} if token else {}),
        method=method,
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        return json.loads(response.read())


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_stops_the_demo_within_five_seconds_mid_climb(tmp_path):
    port = free_port()
    environment = env(
        DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}", PORT=str(port), SPEED="8"
    )
    demo = Process([str(BASE_DIR / "scripts" / "demo")], environment, new_session=True)
    pgid = demo.popen.pid
    try:
        demo.wait_for_line("Loopweb is running", timeout=120)
        base = f"http://127.0.0.1:{port}"
        token = api(base, "POST", "/api/auth/token", {"username": "demo", "password": "demo"})[
            "token"
        ]
        [ladder] = api(base, "GET", "/api/ladders/", token=token)["results"]
        api(base, "POST", f"/api/ladders/{ladder['id']}/run", {}, token=token)
        wait_until(
            lambda: api(base, "GET", "/api/jobs/?status=running", token=token)["count"] > 0,
            60,
            "a simulated run under way",
            demo,
        )
        os.killpg(pgid, signal.SIGINT)  # what a terminal's Ctrl-C does
        started = time.monotonic()
        while time.monotonic() - started < 15:
            demo.popen.poll()  # reap the script itself: a zombie still counts as in the group
            if not group_alive(pgid):
                break
            time.sleep(0.05)
        stopped_in = time.monotonic() - started
    finally:
        if group_alive(pgid):
            os.killpg(pgid, signal.SIGKILL)
        demo.popen.wait(10)
    assert stopped_in < 5, f"stopped in {stopped_in:.1f} s\n{demo.output}"
    assert not demo.matching("Traceback"), demo.output
