"""SPEC §3, "Which runs count": a slot's runs are the first counted runs of its cell to finish."""

import pytest

from loopweb.runs import services
from loopweb.runs.models import CancelCause, Job
from loopweb.runs.selectors import counted_runs
from tests.factories import CombinationFactory, UserFactory
from tests.runs.helpers import PERFECT, at, claim, finish, hand_job, outside_run

pytestmark = pytest.mark.django_db


def test_runs_are_taken_in_the_order_they_finished(owner, version, combination):
    late = outside_run(owner, version, combination, finished_at=at(30))
    early = outside_run(owner, version, combination, finished_at=at(10))
    middle = outside_run(owner, version, combination, finished_at=at(20))

    assert counted_runs(early.cell_key, 3) == [early, middle, late]


def test_runs_that_finished_at_the_same_moment_are_taken_by_id(owner, version, combination):
    runs = [outside_run(owner, version, combination, finished_at=at(5)) for _ in range(3)]

    assert counted_runs(runs[0].cell_key, 3) == sorted(runs, key=lambda r: r.pk)


def test_a_slot_takes_only_the_first_target_runs(owner, version, combination):
    runs = [outside_run(owner, version, combination, finished_at=at(m)) for m in (4, 3, 2, 1)]

    assert counted_runs(runs[0].cell_key, 2) == [runs[3], runs[2]]
    assert counted_runs(runs[0].cell_key, 1) == [runs[3]]
    assert counted_runs(runs[0].cell_key, 0) == []
    assert len(counted_runs(runs[0].cell_key, 10)) == 4


@pytest.mark.parametrize("outcome", ["infrastructure", "canceled"])
def test_infrastructure_and_canceled_runs_never_count(owner, version, combination, outcome):
    excluded = outside_run(owner, version, combination, outcome=outcome, finished_at=at(1))
    counted = outside_run(owner, version, combination, finished_at=at(2))

    assert excluded.counted is False
    assert counted_runs(counted.cell_key, 5) == [counted]


@pytest.mark.parametrize("outcome", ["catastrophic", "timedOut", "harnessError", "limitExceeded"])
def test_model_failures_count(owner, version, combination, outcome):
    run = outside_run(owner, version, combination, outcome=outcome)

    assert counted_runs(run.cell_key, 5) == [run]


def test_a_retried_attempts_run_does_not_count_even_when_it_finished_first(
    owner, driver, version, combination
):
    job = hand_job(owner, version, combination, retry_count=1)
    retried = finish(driver, job, outcome="hung", finished_at=at(1))
    job.refresh_from_db()
    retry = finish(driver, job.retry, outcome="completed", finished_at=at(2))

    assert retried.counted is False
    assert counted_runs(job.cell_key, 5) == [retry]


def test_runs_count_for_their_cell_whoever_launched_them(owner, outsider, driver, version):
    combination = CombinationFactory()
    mine = finish(driver, hand_job(owner, version, combination), finished_at=at(1))
    theirs = finish(driver, hand_job(outsider, version, combination), finished_at=at(2))
    outside = outside_run(UserFactory(), version, combination, finished_at=at(3))

    assert counted_runs(mine.cell_key, 5) == [mine, theirs, outside]


def test_runs_of_another_variant_engine_or_combination_are_another_cell(
    owner, version, combination
):
    version.variants = ["default", "hard"]
    version.save()
    run = outside_run(owner, version, combination, finished_at=at(1))
    outside_run(owner, version, combination, variant="hard")
    outside_run(owner, version, CombinationFactory())

    assert counted_runs(run.cell_key, 5) == [run]


def test_a_re_push_that_changes_the_outcome_changes_whether_the_run_counts(
    owner, driver, version, combination
):
    run = finish(driver, hand_job(owner, version, combination))

    services.repush_run(
        run=run, outcome="infrastructure", record=PERFECT, finished_at=run.finished_at
    )
    assert counted_runs(run.cell_key, 5) == []

    services.repush_run(run=run, outcome="timedOut", record=PERFECT, finished_at=run.finished_at)
    assert counted_runs(run.cell_key, 5) == [run]


def test_a_re_push_of_a_retried_attempts_run_does_not_make_it_count(
    owner, driver, version, combination
):
    job = hand_job(owner, version, combination, retry_count=1)
    run = finish(driver, job, outcome="catastrophic")

    run = services.repush_run(
        run=run, outcome="completed", record=PERFECT, finished_at=run.finished_at
    )

    assert run.counted is False
    assert counted_runs(run.cell_key, 5) == []


def test_a_slot_reads_its_runs_in_one_query(owner, version, combination, django_assert_num_queries):
    run = outside_run(owner, version, combination)
    for _ in range(5):
        outside_run(owner, version, combination)

    # SELECT … FROM runs_run WHERE cell_key = %s AND counted ORDER BY finished_at, id LIMIT 3
    with django_assert_num_queries(1):
        assert len(counted_runs(run.cell_key, 3)) == 3


def test_an_attempt_whose_automatic_retry_was_cancelled_by_hand_stays_retried(
    owner, driver, version, combination
):
    """SPEC §3: "A retry cancelled any other way (by hand, by a driver, by Stop) leaves the
    attempt retried: its run stays uncounted" — also on a re-push of it."""
    job = hand_job(owner, version, combination, retry_count=1)
    run = finish(driver, job, outcome="catastrophic")
    job.refresh_from_db()

    services.cancel_job(job=job.retry)

    run.refresh_from_db()
    assert run.counted is False
    assert counted_runs(run.cell_key, 5) == []
    run = services.repush_run(
        run=run, outcome="catastrophic", record=PERFECT, finished_at=run.finished_at
    )
    assert run.counted is False


def test_an_attempt_whose_queued_retry_an_early_stop_decision_cancelled_counts(
    owner, driver, version, combination
):
    """SPEC §3: "when an early-stop decision of the slot cancels an attempt's queued automatic
    retry, the attempt's run is kept and counts" — also on a re-push of it."""
    job = hand_job(owner, version, combination, retry_count=1)
    run = finish(driver, job, outcome="catastrophic")
    assert run.counted is False
    job.refresh_from_db()

    services.mark_canceled(
        services.lock_to_cancel(Job.objects.filter(pk=job.retry_id)), cause=CancelCause.DECISION
    )

    run.refresh_from_db()
    assert run.counted is True
    assert counted_runs(run.cell_key, 5) == [run]
    run = services.repush_run(
        run=run, outcome="catastrophic", record=PERFECT, finished_at=run.finished_at
    )
    assert run.counted is True


def test_an_attempt_whose_retry_was_cancelled_once_under_way_stays_retried(
    owner, driver, version, combination
):
    job = hand_job(owner, version, combination, retry_count=1)
    run = finish(driver, job, outcome="catastrophic")
    job.refresh_from_db()
    retry = claim(driver, job.retry)
    services.report_status(job_id=retry.pk, driver=driver, status="dispatched")

    services.cancel_job(job=retry)

    run.refresh_from_db()
    assert run.counted is False
    run = services.repush_run(
        run=run, outcome="catastrophic", record=PERFECT, finished_at=run.finished_at
    )
    assert run.counted is False


def test_a_retry_a_decision_cancelled_before_it_started_that_still_pushes_its_run_was_a_retry(
    owner, driver, version, combination
):
    """A driver that never reported its claimed retry may still run it and push its run after
    an early-stop decision cancelled it: the attempt was retried after all, so the retry's run
    counts and the attempt's does not ("the retried attempt's run is left out in favour of the
    retry's")."""
    job = hand_job(owner, version, combination, retry_count=1)
    first = finish(driver, job, outcome="catastrophic")
    job.refresh_from_db()
    retry = claim(driver, job.retry)
    services.mark_canceled(
        services.lock_to_cancel(Job.objects.filter(pk=retry.pk)), cause=CancelCause.DECISION
    )
    first.refresh_from_db()
    assert first.counted is True

    late = finish(driver, retry, outcome="completed")

    first.refresh_from_db()
    assert (first.counted, late.counted) == (False, True)
    assert counted_runs(first.cell_key, 5) == [late]
    first = services.repush_run(
        run=first, outcome="catastrophic", record=PERFECT, finished_at=first.finished_at
    )
    assert first.counted is False
