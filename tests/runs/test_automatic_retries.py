"""SPEC §3, "Automatic retries": which attempts are retried, and how the retry is enqueued."""

import pytest
from django.db import connection

from loopweb.runs import hooks, services
from loopweb.runs.models import Job, Run
from loopweb.runs.selectors import counted_runs
from tests.runs.helpers import PERFECT, claim, finish, hand_job

pytestmark = pytest.mark.django_db

RETRYABLE = ["infrastructure", "catastrophic", "harnessError", "hung"]
NOT_RETRYABLE_RUNS = ["timedOut", "limitExceeded", "completed"]


def fail(driver, job, failure):
    job.refresh_from_db()
    if job.status == "queued":
        claim(driver, job)
    return services.fail_job(job_id=job.pk, driver=driver, failure=failure)


def assert_is_retry_of(retry: Job, attempt: Job):
    assert retry.status == "queued"
    assert retry.attempt == attempt.attempt + 1
    assert retry.retry_count == attempt.retry_count
    assert retry.origin == attempt.origin
    assert retry.cell_key == attempt.cell_key
    assert retry.combination_cell == attempt.combination_cell
    assert (retry.case, retry.version, retry.variant, retry.engine) == (
        attempt.case,
        attempt.version,
        attempt.variant,
        attempt.engine,
    )
    assert retry.combination_id == attempt.combination_id
    assert retry.owner_id == attempt.owner_id
    assert retry.lease_holder is None and retry.lease_expires_at is None


@pytest.mark.parametrize("outcome", RETRYABLE)
def test_a_run_that_ends_retryably_stamps_its_attempt_with_the_next_attempt(
    owner, driver, version, combination, outcome
):
    job = hand_job(owner, version, combination, retry_count=3)

    run = finish(driver, job, outcome=outcome)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.failure == outcome
    assert job.retry is not None
    assert_is_retry_of(job.retry, job)
    run.refresh_from_db()
    assert run.counted is False


@pytest.mark.parametrize("outcome", RETRYABLE)
def test_a_driver_failure_without_a_run_that_is_retryable_enqueues_the_next_attempt(
    owner, driver, version, combination, outcome
):
    job = hand_job(owner, version, combination, retry_count=1)

    fail(driver, job, outcome)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.failure == outcome
    assert_is_retry_of(job.retry, job)


@pytest.mark.parametrize("outcome", NOT_RETRYABLE_RUNS)
def test_a_run_that_times_out_exceeds_a_limit_or_completes_is_not_retried(
    owner, driver, version, combination, outcome
):
    job = hand_job(owner, version, combination, retry_count=3)

    run = finish(driver, job, outcome=outcome)

    job.refresh_from_db()
    assert job.retry is None
    assert job.status == ("completed" if outcome == "completed" else "failed")
    assert Job.objects.count() == 1
    run.refresh_from_db()
    assert run.counted is True


@pytest.mark.parametrize("failure", ["timedOut", "limitExceeded", "canceled"])
def test_a_driver_failure_that_is_not_retryable_ends_the_attempt_for_good(
    owner, driver, version, combination, failure
):
    job = hand_job(owner, version, combination, retry_count=3)

    fail(driver, job, failure)

    job.refresh_from_db()
    assert (job.status, job.failure, job.retry) == ("failed", failure, None)
    assert Job.objects.count() == 1


def test_a_retry_of_a_retry_keeps_the_origin_cell_and_retry_count_and_counts_attempts_up(
    owner, driver, version, combination
):
    first = hand_job(owner, version, combination, retry_count=3)
    finish(driver, first, outcome="hung")
    first.refresh_from_db()
    second = first.retry

    fail(driver, second, "infrastructure")

    second.refresh_from_db()
    assert second.attempt == 2
    assert_is_retry_of(second.retry, second)
    assert second.retry.attempt == 3


def test_with_no_retries_allowed_a_retryable_failure_is_final(owner, driver, version, combination):
    job = hand_job(owner, version, combination, retry_count=0)

    run = finish(driver, job, outcome="hung")

    job.refresh_from_db()
    assert (job.status, job.retry) == ("failed", None)
    assert Job.objects.count() == 1
    run.refresh_from_db()
    assert run.counted is True  # the last attempt stands: a model failure counts


def test_with_one_retry_allowed_there_are_two_attempts_and_no_more(
    owner, driver, version, combination
):
    first = hand_job(owner, version, combination, retry_count=1)
    first_run = finish(driver, first, outcome="catastrophic")
    first.refresh_from_db()
    second = first.retry
    assert second.attempt == 2

    second_run = finish(driver, second, outcome="catastrophic")

    second.refresh_from_db()
    assert second.retry is None
    assert second.status == "failed"
    assert Job.objects.count() == 2
    first_run.refresh_from_db()
    second_run.refresh_from_db()
    assert (first_run.counted, second_run.counted) == (False, True)


def test_retries_used_up_on_infrastructure_leave_the_cell_with_no_counted_run(
    owner, driver, version, combination
):
    first = hand_job(owner, version, combination, retry_count=1)
    fail(driver, first, "infrastructure")
    first.refresh_from_db()

    fail(driver, first.retry, "infrastructure")

    assert Job.objects.count() == 2
    assert Job.objects.filter(status="queued").count() == 0
    assert counted_runs(first.cell_key, 5) == []


def test_the_retried_attempts_run_is_left_out_and_the_last_attempt_stands(
    owner, driver, version, combination
):
    first = hand_job(owner, version, combination, retry_count=2)
    retried_run = finish(driver, first, outcome="harnessError")
    first.refresh_from_db()

    last_run = finish(driver, first.retry, outcome="completed")

    assert counted_runs(first.cell_key, 5) == [last_run]
    assert Run.objects.filter(pk=retried_run.pk, counted=False).exists()


def test_the_retry_exists_and_is_stamped_inside_the_transaction_that_ends_the_attempt(
    owner, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination, retry_count=1))
    seen = {}

    def inside(sender, retry, attempt, **kwargs):
        # Read back through the same connection, before the push's transaction ends.
        stored = Job.objects.get(pk=attempt.pk)
        seen.update(
            in_atomic_block=connection.in_atomic_block,
            status=stored.status,
            retry=stored.retry_id,
            retry_status=Job.objects.get(pk=retry.pk).status,
            run=Run.objects.filter(job=attempt).exists(),
        )

    hooks.retry_enqueued.connect(inside)
    services.push_run(
        pushed_by=driver, job_id=job.pk, outcome="hung", record=PERFECT, finished_at=job.created_at
    )

    job.refresh_from_db()
    assert seen == {
        "in_atomic_block": True,
        "status": "failed",
        "retry": job.retry_id,
        "retry_status": "queued",
        "run": True,
    }


def test_if_ending_the_attempt_fails_neither_the_run_nor_the_retry_is_left_behind(
    owner, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination, retry_count=1))

    def explode(sender, **kwargs):
        raise RuntimeError("subscriber failed")

    hooks.retry_enqueued.connect(explode)
    with pytest.raises(RuntimeError):
        services.push_run(
            pushed_by=driver,
            job_id=job.pk,
            outcome="infrastructure",
            record={},
            finished_at=job.created_at,
        )

    job.refresh_from_db()
    assert (job.status, job.retry_id) == ("pending", None)
    assert Job.objects.count() == 1
    assert Run.objects.count() == 0


def test_an_attempt_that_enqueued_a_retry_is_announced_as_retried_not_as_ended(
    owner, driver, version, combination
):
    announced = []
    hooks.retry_enqueued.connect(
        lambda sender, retry, attempt, **kw: announced.append(("retry", attempt.pk, retry.pk)),
        weak=False,
    )
    hooks.jobs_ended.connect(
        lambda sender, jobs, **kw: announced.append(("ended", [j.pk for j in jobs])), weak=False
    )
    job = hand_job(owner, version, combination, retry_count=1)

    finish(driver, job, outcome="hung")
    job.refresh_from_db()
    finish(driver, job.retry, outcome="hung")

    assert announced == [("retry", job.pk, job.retry_id), ("ended", [job.retry_id])]
