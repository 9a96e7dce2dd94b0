"""The driver on a bad day: it waits as long as the server's Retry-After says, reports a lost
server in one line (and its return in another) however many drivers a process runs, and the
standalone ``loopweb-driver`` command runs without Django and stops within seconds."""

import json
import logging
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from loopweb.driver import Driver, DriverError
from loopweb.runs.models import ApiToken, Job, Run
from tests.factories import UserFactory
from tests.ladders.builders import climbers, dispatch_of, make_ladder, versions
from tests.support.processes import Process, env, wait_until


class Flaky(BaseHTTPRequestHandler):
    """Answers 503 with Retry-After to the first ``failures`` requests, then 200."""

    failures = 2
    retry_after = "1"
    seen: list[float] = []

    def do_GET(self):
        type(self).seen.append(time.monotonic())
        if len(type(self).seen) <= type(self).failures:
            body = json.dumps({"detail": "The database is unreachable.", "code": "x"}).encode()
            self.send_response(503)
            self.send_header("Retry-After", type(self).retry_after)
        else:
            body = b'{"ok": true}'
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def flaky():
    Flaky.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_driver_waits_as_long_as_retry_after_says(flaky, caplog):
    caplog.set_level(logging.DEBUG, logger="loopweb.driver")
    driver = Driver(flaky, "t", backoff=0.01)
    assert driver.call("GET", "/api/anything") == {"ok": True}
    gaps = [b - a for a, b in zip(Flaky.seen, Flaky.seen[1:], strict=False)]
    assert len(gaps) == 2 and all(gap >= 0.9 for gap in gaps), gaps  # not the 0.01 s backoff
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2, warnings
    assert "unreachable (503 The database is unreachable.)" in warnings[0]
    assert "reachable again after" in warnings[1]


def test_a_lost_server_is_one_line_however_many_drivers_call_it(caplog):
    caplog.set_level(logging.INFO, logger="loopweb.driver")
    url = "http://127.0.0.1:9"  # discard: nothing listens, every connection is refused
    # An outage is known process-wide (one line for a fleet): forget one an earlier test of this
    # process met at the same address.
    from loopweb.driver import client

    client._outages.pop(url, None)
    errors = []

    def call():
        try:
            Driver(url, "t", retries=3, backoff=0.01).call("POST", "/api/driver/claim", {})
        except DriverError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(errors) == 4
    lines = [r for r in caplog.records if r.name == "loopweb.driver"]
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "unreachable" in lines[0].getMessage() and lines[0].exc_info is None


class CutShort(BaseHTTPRequestHandler):
    """Promises a body and closes the connection before sending it, the first ``failures``
    times (a server stopped in the middle of an answer), then answers 200."""

    failures = 1
    seen = 0

    def do_POST(self):
        type(self).seen += 1
        body = b'{"cancel": false}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if type(self).seen <= type(self).failures:
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_an_answer_cut_short_is_a_lost_server_not_a_crash():
    """The server stopped while answering: the driver retries as for any lost connection and,
    told to stop, gives up with a DriverError its loop handles, never a traceback."""
    CutShort.seen = 0
    server = ThreadingHTTPServer(("127.0.0.1", 0), CutShort)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        driver = Driver(url, "t", backoff=0.01)
        assert driver.call("POST", "/api/driver/jobs/1/status", {"status": "running"}) == {
            "cancel": False
        }
        assert CutShort.seen == 2
        stopping = Driver(url, "t", backoff=0.01, stop=threading.Event())
        stopping.stop.set()
        CutShort.seen = 0
        with pytest.raises(DriverError):
            stopping.call("POST", "/api/driver/jobs/1/status", {"status": "running"})
    finally:
        server.shutdown()
        server.server_close()


class Headless(BaseHTTPRequestHandler):
    """Answers 200 with no length and no body, then closes: what a stopping server can send
    (the driver then reads an empty answer where a list of jobs belongs)."""

    def do_POST(self):
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.close_connection = True

    def log_message(self, *args):
        pass


def test_an_empty_answer_is_an_answer_cut_short(caplog):
    """A claim answered with no body at all is retried like any answer cut short and, once
    the driver is stopping, ends its loop quietly: never a TypeError from iterating nothing."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Headless)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(DriverError):
            Driver(url, "t", backoff=0.01, retries=2).claim(1)
        stop = threading.Event()
        driver = Driver(url, "t", backoff=0.01, poll_interval=0.01, stop=stop)
        threading.Timer(0.3, stop.set).start()
        assert driver.serve(lambda job: {}) == 0
    finally:
        server.shutdown()
        server.server_close()


def test_a_stopping_driver_gives_up_at_once():
    stop = threading.Event()
    driver = Driver("http://127.0.0.1:9", "t", backoff=5, stop=stop)
    threading.Timer(0.3, stop.set).start()
    started = time.monotonic()
    with pytest.raises(DriverError):
        driver.call("POST", "/api/driver/claim", {})
    assert time.monotonic() - started < 2


def test_the_driver_command_needs_no_django():
    done = Process(
        [sys.executable, "-c",
         "import sys; from loopweb.driver import cli; cli.parser();"
         " print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"],
        {k: v for k, v in env().items() if k not in ("DATABASE_URL", "DEBUG")},
    )  # fmt: skip
    assert done.popen.wait(30) == 0
    done._reader.join(5)
    assert done.lines == ["[]"], done.output


@pytest.mark.django_db(transaction=True)
@pytest.mark.xdist_group("live")
def test_loopweb_driver_climbs_a_ladder_over_http_and_stops_within_seconds(live_server, owner):
    fleet = UserFactory(username="machine", role="driver")
    _, token = ApiToken.objects.issue(fleet)
    ladder = make_ladder(owner, versions(2), climbers(2), runsInFlightLimit=2, retryCount=0)
    from ladders import services

    services.start_dispatch(ladder=ladder)
    script = os.path.join(os.path.dirname(sys.executable), "loopweb-driver")
    environment = {k: v for k, v in env(LOOPWEB_DRIVER_TOKEN=token).items() if k != "DATABASE_URL"}
    driver = Process(
        [script, "--url", live_server.url, "--simulate", "--concurrency", "2", "--speed", "40",
         "--poll", "0.1"],
        environment,
    )  # fmt: skip
    try:
        wait_until(lambda: Run.objects.count() >= 2, 60, "runs pushed", driver)
        # A run is under way (or about to be) when the stop comes.
        driver.signal(signal.SIGINT)
        started = time.monotonic()
        driver.popen.wait(10)
        stopped_in = time.monotonic() - started
    finally:
        driver.stop()
    assert driver.popen.returncode == 0, driver.output
    assert stopped_in < 5, (stopped_in, driver.output)
    assert driver.matching("2 simulated driver(s) serving"), driver.output
    assert dispatch_of(ladder).status in ("running", "finished")
    # Nothing the driver held is left leased to it for the lease to expire.
    held = ["pending", "dispatched", "starting", "running"]
    assert not Job.objects.filter(lease_holder=fleet, status__in=held).exists()
