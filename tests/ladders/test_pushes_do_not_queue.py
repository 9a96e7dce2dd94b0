"""Sixteen drivers pushing into one dispatch must not queue on one lock: pushes of one dispatch
share its row (to be ordered against a Stop), never hold it against each other, and a launch
pass in progress does not hold them either. A Stop still waits for a push under way."""

import threading

import pytest
from django.db import close_old_connections, connection

from ladders import services
from loopweb.runs import hooks
from loopweb.runs import services as run_services
from loopweb.runs.models import Job
from tests.ladders.builders import PERFECT, claim_all, climbers, make_ladder, push, versions

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("concurrency"),
    pytest.mark.postgres,  # row locks (SQLite runs one writer at a time)
]


class Held:
    """Runs ``work`` in a thread of its own and holds it inside its transaction at ``signal``
    (for the run or job ``matches`` picks) until released."""

    def __init__(self, signal, matches, work):
        self.inside, self.release, self.errors = threading.Event(), threading.Event(), []

        def hold(sender, **kwargs):
            if matches(kwargs):
                self.inside.set()
                assert self.release.wait(timeout=20)

        self.hook = hold
        signal.connect(hold, weak=False)
        self.signal = signal

        def body():
            try:
                work()
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                self.errors.append(exc)
            finally:
                close_old_connections()
                connection.close()

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()
        assert self.inside.wait(timeout=20), "the held work never got there"

    def finish(self):
        self.release.set()
        self.thread.join(timeout=30)
        self.signal.disconnect(self.hook)
        assert not self.errors, self.errors


def in_a_thread(work) -> threading.Thread:
    def body():
        try:
            work()
        finally:
            close_old_connections()
            connection.close()

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def two_jobs_of_one_dispatch(owner, driver):
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder)
    return ladder, claim_all(driver)


def test_a_push_does_not_wait_for_another_push_into_the_same_dispatch(owner, driver):
    ladder, (first, second) = two_jobs_of_one_dispatch(owner, driver)
    held = Held(
        hooks.run_pushed,
        lambda kw: kw["run"].job_id == first.pk,
        lambda: push(driver, first, record=PERFECT),
    )
    try:
        other = in_a_thread(lambda: push(driver, second, record=PERFECT))
        other.join(timeout=10)
        assert not other.is_alive(), "the second push queued behind the first"
    finally:
        held.finish()


def test_a_push_does_not_wait_for_a_launch_pass_in_progress(owner, driver, monkeypatch):
    ladder, (first, second) = two_jobs_of_one_dispatch(owner, driver)
    pausing = threading.Event()
    release = threading.Event()
    real = services._publish

    def slow_publish(standing):
        pausing.set()
        assert release.wait(timeout=20)
        return real(standing)

    monkeypatch.setattr(services, "_publish", slow_publish)
    passing = in_a_thread(lambda: services.run_launch_pass(ladder_id=ladder.pk))
    assert pausing.wait(timeout=20)
    try:
        pushing = in_a_thread(lambda: push(driver, first, record=PERFECT))
        pushing.join(timeout=10)
        assert not pushing.is_alive(), "the push queued behind the launch pass"
    finally:
        release.set()
        passing.join(timeout=30)


def test_a_stop_still_waits_for_a_push_under_way(owner, driver):
    ladder, (first, second) = two_jobs_of_one_dispatch(owner, driver)
    held = Held(
        hooks.run_pushed,
        lambda kw: kw["run"].job_id == first.pk,
        lambda: push(driver, first, record=PERFECT),
    )
    stopped = []
    stopping = in_a_thread(lambda: stopped.append(services.stop_dispatch(ladder=ladder)))
    stopping.join(timeout=2)
    assert stopping.is_alive(), "Stop did not wait for the push"
    held.finish()
    stopping.join(timeout=30)
    assert stopped == [1]  # the second job, still pending; the first ended with its run


def deciding_race(owner, driver):
    """One climber, one rung of two runs, earlyStop: one job running, the other's passing run
    pushed, and the pass that records the decision not run yet."""
    ladder = make_ladder(
        owner, versions(1), climbers(1), runsPerCell=2, retryCount=1, gate={"earlyStop": True}
    )
    services.start_dispatch(ladder=ladder, run_pass=False)
    services.run_launch_pass(ladder_id=ladder.pk)
    running, deciding = claim_all(driver)
    run_services.report_status(job_id=running.pk, driver=driver, status="running")
    push(driver, deciding, record=PERFECT)
    return ladder, running


def retry_of(job) -> Job:
    return Job.objects.get(attempt=2, origin=job.origin)


def test_a_retry_enqueued_while_a_pass_records_the_decision_is_cancelled(
    owner, driver, monkeypatch
):
    """ "The launch pass that records the decision cancels the queued and pending jobs the
    dispatch launched for the slot": a retry enqueued while that pass runs waits for it, then
    finds the slot decided and is cancelled."""
    ladder, running = deciding_race(owner, driver)
    recorded, release = threading.Event(), threading.Event()
    real = services._cancel_decided

    def after_recording(*args):
        recorded.set()
        assert release.wait(timeout=20)
        return real(*args)

    monkeypatch.setattr(services, "_cancel_decided", after_recording)
    passing = in_a_thread(lambda: services.run_launch_pass(ladder_id=ladder.pk))
    assert recorded.wait(timeout=20)
    failing = in_a_thread(lambda: push(driver, running, outcome="catastrophic", record={}))
    failing.join(timeout=2)
    assert failing.is_alive(), "the attempt's end did not wait for the recording pass"
    release.set()
    passing.join(timeout=30)
    failing.join(timeout=30)
    assert retry_of(running).status == "canceled"


def test_a_pass_recording_a_decision_cancels_a_retry_enqueued_just_before(owner, driver):
    ladder, running = deciding_race(owner, driver)
    held = Held(
        hooks.run_pushed,
        lambda kw: kw["run"].job_id == running.pk,
        lambda: push(driver, running, outcome="catastrophic", record={}),
    )
    passing = in_a_thread(lambda: services.run_launch_pass(ladder_id=ladder.pk))
    passing.join(timeout=2)
    held.finish()
    passing.join(timeout=30)
    assert retry_of(running).status == "canceled"
