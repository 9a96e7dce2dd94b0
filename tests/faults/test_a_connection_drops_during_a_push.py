"""Fault: connections drop while a driver pushes a run, against a live HTTP server.

The driver is the real HTTP client (``loopweb.driver.Driver``), which re-sends a call after a
connection error or a 5xx. Whether the database connection drops before the push commits (the
server answers 500 and keeps nothing) or the push commits and its answer is lost on the way
back, the re-sent push stores exactly one run for the job.
"""

import urllib.request

import pytest
from django.db import connection

from ladders import services
from loopweb.driver import Driver, RunResult
from loopweb.runs import hooks
from loopweb.runs.models import ApiToken, Job, Run
from tests.factories import UserFactory
from tests.ladders.builders import PERFECT, climbers, dispatch_of, make_ladder, versions

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("faults")]


@pytest.fixture
def fleet(owner, live_server, run_tasks):
    user = UserFactory(username="fleet", role="driver")
    _, token = ApiToken.objects.issue(user)
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    driver = Driver(live_server.url, token, retries=3, backoff=0.01, timeout=10)
    [job] = driver.claim(1)
    for status in ("dispatched", "starting", "running"):
        assert driver.report(job, status) is False
    return {"driver": driver, "job": job, "ladder": ladder}


class DropConnectionOnce:
    """Kills the server's database connection inside the push's transaction, once: the backend
    is terminated as if the database had restarted or a proxy had cut it."""

    def __init__(self):
        self.fired = 0

    def __call__(self, sender, run, created, **kwargs):
        if self.fired:
            return
        self.fired += 1
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    def __enter__(self):
        hooks.run_pushed.connect(self, weak=False, dispatch_uid="drop-once")
        return self

    def __exit__(self, *exc):
        hooks.run_pushed.disconnect(dispatch_uid="drop-once")


@pytest.mark.postgres  # terminates the server's PostgreSQL backend
def test_a_push_whose_database_connection_drops_is_re_sent_and_stored_once(fleet, run_tasks):
    driver, job = fleet["driver"], fleet["job"]

    with DropConnectionOnce() as drop:
        body = driver.push(job, RunResult(outcome="completed", record=PERFECT))

    assert drop.fired == 1  # the first push failed (500) and was sent again
    [run] = Run.objects.filter(job_id=job.id)
    assert body["id"] == run.pk and body["counted"] is True
    assert Run.objects.count() == 1
    assert Job.objects.get(pk=job.id).status == "completed"
    run_tasks()
    assert dispatch_of(fleet["ladder"]).status == "finished"


def test_a_push_whose_answer_is_lost_is_re_sent_and_rewrites_the_same_run(
    fleet, run_tasks, monkeypatch
):
    driver, job = fleet["driver"], fleet["job"]
    real_urlopen = urllib.request.urlopen
    lost = []

    def urlopen_losing_the_first_push_answer(request, *args, **kwargs):
        response = real_urlopen(request, *args, **kwargs)
        if request.full_url.endswith("/api/runs/") and not lost:
            response.read()
            lost.append(response.status)
            raise ConnectionResetError("connection reset by peer")
        return response

    monkeypatch.setattr(urllib.request, "urlopen", urlopen_losing_the_first_push_answer)
    body = driver.push(job, RunResult(outcome="completed", record=PERFECT))

    assert lost == [201]  # the server stored it; the driver never heard
    [run] = Run.objects.filter(job_id=job.id)
    assert body["id"] == run.pk
    assert Run.objects.count() == 1
    run_tasks()
    assert dispatch_of(fleet["ladder"]).status == "finished"


@pytest.mark.postgres  # terminates the server's PostgreSQL backend
def test_a_failure_report_whose_database_connection_drops_is_re_sent_and_retried_once(
    fleet, run_tasks
):
    """The same fault on the other way an attempt ends: one automatic retry, not two."""
    driver, job = fleet["driver"], fleet["job"]
    fired = []

    def drop_once(sender, retry, attempt, **kwargs):
        hooks.retry_enqueued.disconnect(dispatch_uid="drop-fail")
        fired.append(retry.pk)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")

    hooks.retry_enqueued.connect(drop_once, weak=False, dispatch_uid="drop-fail")
    try:
        driver.fail(job, "infrastructure", "host lost")
    finally:
        hooks.retry_enqueued.disconnect(dispatch_uid="drop-fail")

    assert len(fired) == 1  # the first report failed (500) and was sent again
    attempt = Job.objects.get(pk=job.id)
    assert attempt.status == "failed"
    assert Job.objects.filter(retry_of=attempt).count() == 1
    assert Job.objects.filter(attempt=2).count() == 1
