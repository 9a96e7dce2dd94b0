"""API "Jobs, runs and drivers": a lease that expires without a status report ends the attempt as
``infrastructure`` and retries it when retries remain."""

import datetime as dt
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from loopweb.runs import services, tasks
from loopweb.runs.models import Job
from tests.runs.helpers import claim, finish, hand_job

pytestmark = pytest.mark.django_db


def after_lease(job: Job, seconds: int = 1) -> dt.datetime:
    job.refresh_from_db()
    return job.lease_expires_at + dt.timedelta(seconds=seconds)


def test_an_expired_lease_ends_the_attempt_as_infrastructure_and_retries_it(
    owner, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination, retry_count=1))

    assert services.expire_leases(now=after_lease(job)) == 1

    job.refresh_from_db()
    assert (job.status, job.failure, job.failure_detail) == (
        "failed",
        "infrastructure",
        "lease expired",
    )
    assert job.lease_expires_at is None
    retry = job.retry
    assert (retry.status, retry.attempt, retry.origin, retry.cell_key) == (
        "queued",
        2,
        "manual",
        job.cell_key,
    )


def test_an_expired_lease_with_no_retries_left_ends_the_attempt_for_good(
    owner, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination, retry_count=0))

    services.expire_leases(now=after_lease(job))

    job.refresh_from_db()
    assert (job.status, job.failure, job.retry) == ("failed", "infrastructure", None)
    assert Job.objects.count() == 1


@pytest.mark.parametrize("status", ["dispatched", "starting", "running"])
def test_a_lease_expires_whatever_in_flight_status_the_driver_last_reported(
    owner, driver, version, combination, status
):
    job = claim(driver, hand_job(owner, version, combination))
    services.report_status(job_id=job.pk, driver=driver, status=status)

    assert services.expire_leases(now=after_lease(job)) == 1


def test_a_lease_that_has_not_run_out_is_left_alone(owner, driver, version, combination):
    job = claim(driver, hand_job(owner, version, combination))

    assert services.expire_leases(now=after_lease(job, seconds=-1)) == 0
    job.refresh_from_db()
    assert job.status == "pending"


def test_a_status_report_renews_the_lease(owner, driver, version, combination):
    job = claim(driver, hand_job(owner, version, combination))
    lapsed = timezone.now() - dt.timedelta(seconds=1)
    Job.objects.filter(pk=job.pk).update(lease_expires_at=lapsed)

    services.report_status(job_id=job.pk, driver=driver, status="pending")

    assert services.expire_leases() == 0
    job.refresh_from_db()
    assert job.lease_expires_at > timezone.now() + dt.timedelta(seconds=100)


def test_queued_and_finished_jobs_have_no_lease_to_expire(owner, driver, version, combination):
    finish(driver, hand_job(owner, version, combination))
    hand_job(owner, version, combination)
    later = timezone.now() + dt.timedelta(days=1)

    assert services.expire_leases(now=later) == 0


def test_a_driver_reporting_on_an_attempt_whose_lease_expired_is_told_it_ended(
    owner, driver, driver_api, version, combination
):
    job = claim(driver, hand_job(owner, version, combination))
    services.expire_leases(now=after_lease(job))

    response = driver_api.post(
        f"/api/driver/jobs/{job.pk}/status", {"status": "running"}, format="json"
    )

    assert response.status_code == 409
    assert "failed" in response.json()["detail"]


def test_the_lease_length_comes_from_the_setting(owner, driver, version, combination, settings):
    settings.LOOPWEB_LEASE_SECONDS = 5
    before = timezone.now()

    job = claim(driver, hand_job(owner, version, combination))

    assert before + dt.timedelta(seconds=5) <= job.lease_expires_at
    assert job.lease_expires_at <= timezone.now() + dt.timedelta(seconds=5)


def test_the_expire_leases_command_ends_attempts_whose_lease_ran_out(
    owner, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination, retry_count=1))
    fresh = claim(driver, hand_job(owner, version, combination))
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - dt.timedelta(seconds=1))
    out = StringIO()

    call_command("expire_leases", stdout=out)

    assert out.getvalue().strip() == "expired 1 lease(s)"
    job.refresh_from_db()
    fresh.refresh_from_db()
    assert (job.status, job.failure, job.retry.status) == ("failed", "infrastructure", "queued")
    assert fresh.status == "pending"


def test_the_expire_leases_command_refuses_a_negative_interval_before_it_sweeps(
    owner, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination))
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - dt.timedelta(seconds=1))

    with pytest.raises(CommandError, match="--every"):
        call_command("expire_leases", "--every", "-1")

    job.refresh_from_db()
    assert job.status == "pending"


def test_the_expire_leases_task_calls_the_service(owner, driver, version, combination):
    job = claim(driver, hand_job(owner, version, combination))
    Job.objects.filter(pk=job.pk).update(lease_expires_at=timezone.now() - dt.timedelta(seconds=1))

    assert tasks.expire_leases.call() == 1
