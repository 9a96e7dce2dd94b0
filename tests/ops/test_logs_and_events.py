"""Logs people can read: one line per meaningful event, as text or JSON lines, and the counters
that go with the events."""

import json
import logging

import pytest
from django.core.management import call_command
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from prometheus_client import REGISTRY

from ladders import passes, services
from ladders.tasks import launch_pass
from loopweb.logs import JsonFormatter, TextFormatter
from loopweb.ops.worker import TaskWorker
from loopweb.runs.models import Job
from tests.ladders.builders import (
    PERFECT,
    claim_all,
    climbers,
    fail,
    make_ladder,
    push,
    versions,
)

pytestmark = pytest.mark.django_db


def events(caplog) -> list[str]:
    return [r.event for r in caplog.records if hasattr(r, "event")]


def metric(name: str, **labels) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.INFO, logger="loopweb")
    return caplog


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """``with committed():`` runs what the changes inside would run once they commit (the event
    lines are written then)."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_a_dispatch_logs_its_start_and_its_finish_once_each(
    owner, driver, run_tasks, logs, committed
):
    ladder = make_ladder(owner, versions(1), climbers(1))
    with committed():
        services.start_dispatch(ladder=ladder)
    [job] = claim_all(driver)
    with committed():
        push(driver, job, record=PERFECT)
    with committed():
        run_tasks()
    assert events(logs) == ["dispatch.started", "dispatch.finished"]
    started = next(r for r in logs.records if getattr(r, "event", "") == "dispatch.started")
    assert started.ladder == ladder.pk and "1 rung(s)" in started.getMessage()


def test_a_stop_logs_one_line(owner, logs, committed):
    ladder = make_ladder(owner, versions(1), climbers(1))
    with committed():
        services.start_dispatch(ladder=ladder)
    with committed():
        services.stop_dispatch(ladder=ladder)
    assert events(logs) == ["dispatch.started", "dispatch.stopped"]


def test_a_climber_blocked_after_its_last_retry_is_one_warning(owner, driver, logs, committed):
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=0)
    services.start_dispatch(ladder=ladder)
    [job] = claim_all(driver)
    with committed():
        fail(driver, job, "infrastructure")
    blocked = [r for r in logs.records if getattr(r, "event", "") == "climber.blocked"]
    assert len(blocked) == 1
    assert blocked[0].levelno == logging.WARNING
    assert "ended infrastructure with no retry left" in blocked[0].getMessage()


def test_an_expired_lease_is_one_line_and_counted(owner, driver, settings, logs, committed):
    settings.LOOPWEB_LEASE_SECONDS = 0
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=1)
    services.start_dispatch(ladder=ladder)
    [job] = claim_all(driver)
    before = metric("loopweb_lease_expiries_total")
    with committed():
        call_command("expire_leases", verbosity=0)
    lines = [r.getMessage() for r in logs.records if getattr(r, "event", "") == "lease.expired"]
    assert len(lines) == 1
    retry = Job.objects.get(retry_of=job)
    assert f"lease expired: job {job.pk}" in lines[0] and f"retried as job {retry.pk}" in lines[0]
    assert metric("loopweb_lease_expiries_total") == before + 1


def test_a_failed_pass_task_is_one_warning_and_counted(owner, logs, monkeypatch):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, run_pass=False)
    [task] = DBTaskResult.objects.filter(task_path=launch_pass.module_path)

    def broken(**kwargs):
        raise RuntimeError("the pass broke")

    monkeypatch.setattr(passes, "run_launch_pass", broken)
    before = metric("loopweb_tasks_total", task="launch_pass", status="failed")
    task.claim("tests")
    TaskWorker(
        queue_names=["default"], interval=0, batch=True, backend_name="default",
        startup_delay=False, max_tasks=1, worker_id="tests", excluded_queue_names=[],
    ).run_task(task)  # fmt: skip
    task.refresh_from_db()
    assert task.status == TaskResultStatus.FAILED
    [line] = [r for r in logs.records if getattr(r, "event", "") == "pass.failed"]
    assert f"launch pass of ladder {ladder.pk} failed (RuntimeError: the pass broke)" in (
        line.getMessage()
    )
    assert metric("loopweb_tasks_total", task="launch_pass", status="failed") == before + 1


def test_progress_computations_and_passes_are_timed(owner, driver, run_tasks):
    from ladders.shared_progress import read

    ladder = make_ladder(owner, versions(1), climbers(1))
    before = metric("loopweb_progress_compute_seconds_count", kind="full")
    read(ladder)
    assert metric("loopweb_progress_compute_seconds_count", kind="full") == before + 1


def record(message="an event", exc=None, **extra):
    rec = logging.LogRecord("loopweb.ops", logging.WARNING, __file__, 1, message, (), exc)
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def test_json_lines_carry_the_event_fields_and_the_exception():
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        import sys

        exc = sys.exc_info()
    line = JsonFormatter().format(record("database unreachable", exc, event="database.lost"))
    assert "\n" not in line
    body = json.loads(line)
    assert body["message"] == "database unreachable"
    assert body["level"] == "WARNING" and body["logger"] == "loopweb.ops"
    assert body["event"] == "database.lost"
    assert "ValueError: bad" in body["exception"]


def test_a_text_line_is_one_line_even_with_an_exception():
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        import sys

        exc = sys.exc_info()
    line = TextFormatter().format(record("it failed", exc, job=12))
    assert "\n" not in line
    assert line.endswith("WARNING loopweb.ops: it failed job=12 (ValueError: bad | thing)")


FORGED = "x\n2026-12-03T07:00:00.000+00:00 INFO loopweb.ops: FORGED admin logged in"


@pytest.mark.parametrize(
    "text", [FORGED, "x\r2026 INFO forged", "x\u2028forged", "x\x1b[2Jforged", "x\x85forged"]
)
def test_a_text_line_escapes_control_characters_in_every_value(text):
    """A ladder named with a line break cannot forge a line of its own in the text log."""
    line = TextFormatter().format(record(f"Ladder {text} started", None, ladder=text))
    assert line.splitlines() == [line]
    assert not any(c in line for c in "\r\x1b\u2028\x85")
    assert "\\n" in line or "\\r" in line or "\\u2028" in line or "\\x1b" in line or "\\x85" in line


def test_a_started_dispatch_of_a_ladder_named_with_a_line_break_logs_one_line(
    owner, logs, committed
):
    ladder = make_ladder(owner, versions(1), climbers(1), name=FORGED)
    with committed():
        services.start_dispatch(ladder=ladder)
    assert any("FORGED" in TextFormatter().format(r) for r in logs.records)
    text = "\n".join(TextFormatter().format(r) for r in logs.records)
    assert "\nFORGED" not in text and "\n2026-12-03" not in text
