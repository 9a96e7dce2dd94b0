"""A standing is read from one snapshot of the database: a push that commits while a board's
evidence is being read (between two of its statements) is either all in it or not at all, so a
board never shows a state that never existed (seed 004: "Nothing the dispatch does by itself
moves it from there"; SPEC §5, "Read-your-writes")."""

import threading

import pytest
from django.db import close_old_connections
from django.utils import timezone

from ladders import evidence, shared_progress
from loopweb.runs import services as run_services
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _in_another_connection(action) -> None:
    """Run ``action`` on a thread of its own, with its own connection, and wait: it commits
    before this returns."""
    errors = []

    def body():
        try:
            action()
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            close_old_connections()

    thread = threading.Thread(target=body)
    thread.start()
    thread.join(30)
    assert not errors, errors


def push_between_the_evidences_statements(monkeypatch, driver, job) -> list:
    """Make the next evidence read commit ``job``'s perfect push, from another connection, right
    after its first statement; the list returned holds True once it has."""
    real = evidence.fetch_rows
    pushed = []

    def push_after_the_first_statement(*queries):
        head = real(queries[0])
        if not pushed:
            pushed.append(True)
            _in_another_connection(
                lambda: run_services.push_run(
                    pushed_by=driver,
                    job_id=job.pk,
                    outcome="completed",
                    record=PERFECT,
                    finished_at=timezone.now(),
                )
            )
        return head + real(*queries[1:])

    monkeypatch.setattr(evidence, "fetch_rows", push_after_the_first_statement)
    return pushed


@pytest.fixture
def blocked_beside_a_running_sibling(owner, driver):
    """earlyStop on, two runs a rung, no retries: one attempt failed for good while its sibling
    runs. The climber reads running; the sibling's perfect run would pass the rung."""
    from ladders import services

    ladder = make_ladder(
        owner,
        versions(1),
        climbers(1),
        runsPerCell=2,
        retryCount=0,
        gate={"earlyStop": True},
    )
    services.start_dispatch(ladder=ladder)
    first, second = run_services.claim_jobs(driver=driver, limit=10)
    run_services.fail_job(job_id=first.pk, driver=driver, failure="infrastructure")
    return ladder, second


def test_a_push_landing_between_the_evidences_statements_is_all_in_or_all_out(
    owner, driver, blocked_beside_a_running_sibling, monkeypatch
):
    ladder, sibling = blocked_beside_a_running_sibling
    real = evidence.fetch_rows
    pushed = push_between_the_evidences_statements(monkeypatch, driver, sibling)
    board = shared_progress.read(ladder.pk)
    assert pushed
    [climber] = [part for part in board.parts]
    # Before the push: running, its sibling in flight. Never blocked (failing) beside a run
    # that passes the rung, and never a dispatch needing attention.
    assert climber.status == "running", climber.status
    assert board.figures["status"] == "running"

    monkeypatch.setattr(evidence, "fetch_rows", real)
    after = shared_progress.read(ladder.pk)
    assert [part.status for part in after.parts] == ["completed"]


def test_a_pass_never_records_a_block_made_of_two_moments(
    owner, driver, blocked_beside_a_running_sibling, monkeypatch
):
    """A pass reads under READ COMMITTED, beside pushes (they share the dispatch's lock): its
    jobs are read before its runs, so a push landing between them shows its job still in flight
    beside its run, never a failure alone with nothing in flight."""
    from ladders import services
    from ladders.models import Dispatch, DispatchClimber

    ladder, sibling = blocked_beside_a_running_sibling
    pushed = push_between_the_evidences_statements(monkeypatch, driver, sibling)
    services.run_launch_pass(ladder_id=ladder.pk)
    assert pushed
    assert list(DispatchClimber.objects.values_list("blocked", flat=True)) == [""]
    assert not Dispatch.objects.get(ladder=ladder).needs_attention


@pytest.mark.parametrize("after", [1, 2, 3])
def test_a_last_attempt_failing_while_a_pass_reads_never_launches_its_slot_again(
    owner, driver, monkeypatch, after
):
    """A pass reads its evidence in several statements under READ COMMITTED, beside drivers. The
    one attempt a slot has, failing for good between two of them, is either still in flight or
    a failure in what the pass reads: never gone from both, which read as a run missing and
    launched the slot again, so its climber left the rung it was blocked on (seed 004: "Nothing
    the dispatch does by itself moves it from there")."""
    from ladders import services
    from ladders.models import DispatchClimber
    from loopweb.runs.models import Job

    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=0)
    services.start_dispatch(ladder=ladder)
    [job] = run_services.claim_jobs(driver=driver, limit=10)
    real = evidence.fetch_rows
    failed = []

    def fail_between(*queries):
        head = real(*queries[:after])
        if not failed:
            failed.append(True)
            _in_another_connection(
                lambda: run_services.fail_job(
                    job_id=job.pk, driver=driver, failure="infrastructure"
                )
            )
        return head + real(*queries[after:])

    monkeypatch.setattr(evidence, "fetch_rows", fail_between)
    services.run_launch_pass(ladder_id=ladder.pk)
    monkeypatch.setattr(evidence, "fetch_rows", real)
    services.run_launch_pass(ladder_id=ladder.pk)

    assert failed
    assert Job.objects.count() == 1, "the slot was launched again"
    assert list(DispatchClimber.objects.values_list("blocked", flat=True)) == ["failing"]
