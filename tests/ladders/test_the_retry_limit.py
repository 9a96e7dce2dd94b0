"""Seed 004, "The retry limit": retryCount, its range and snapshot, what the backend retries,
and which attempt stands."""

import pytest

from ladders import services
from ladders.models import Ladder
from loopweb.runs.models import Run
from tests.ladders.builders import (
    PERFECT,
    claim_all,
    climbers,
    config,
    dispatch_of,
    fail,
    ladder_jobs,
    progress_of,
    push,
    queued,
    rung,
    versions,
    work,
)
from tests.support.ladders import start

RETRIED = ["infrastructure", "catastrophic", "harnessError", "hung"]
NOT_RETRIED = ["timedOut", "limitExceeded", "completed"]


def post_ladder(api, **overrides):
    body = config(rungs=[rung(v) for v in versions(1)], **overrides)
    return api.post("/api/ladders/", body, format="json")


# The count -----------------------------------------------------------------------------------


@pytest.mark.parametrize("retry_count", [0, 2])
def test_retry_count_is_the_number_of_automatic_retries_each_run_the_dispatch_launches_gets(
    owner, driver, run_tasks, retry_count
):
    """ "retryCount is the number of automatic retries each run the dispatch launches gets." —
    every run of every climber: the first attempt and retryCount more."""
    ladder = start(owner, versions(1), climbers(2), runsPerCell=2, retryCount=retry_count)
    work(driver, run_tasks, "infrastructure")
    jobs = ladder_jobs(ladder)
    assert len(jobs) == 2 * 2 * (retry_count + 1)
    firsts = [j for j in jobs if j.attempt == 1]
    assert len(firsts) == 4
    for first in firsts:
        chain, job = [first], first
        while job.retry_id is not None:
            job = next(j for j in jobs if j.pk == job.retry_id)
            chain.append(job)
        assert [j.attempt for j in chain] == list(range(1, retry_count + 2))


def test_retry_count_defaults_to_one(owner, owner_api, driver):
    """ "It defaults to 1" """
    body = config(rungs=[rung(v) for v in versions(1)], combinations=[climbers(1)[0].pk])
    del body["retryCount"]
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["retryCount"] == 1
    ladder = Ladder.objects.get(pk=response.json()["id"])
    services.start_dispatch(ladder=ladder)
    assert dispatch_of(ladder).snapshot["retryCount"] == 1
    [job] = queued(ladder)
    assert job.retry_count == 1


@pytest.mark.parametrize("value", [0, 1, 7, 10])
def test_retry_count_ranges_from_0_to_10(owner_api, value):
    """ "...ranges from 0 to 10" """
    response = post_ladder(owner_api, retryCount=value)
    assert response.status_code == 201, response.json()
    assert response.json()["retryCount"] == value


@pytest.mark.parametrize("value", [11, 12, 1000])
def test_a_retry_count_above_the_range_is_clamped_to_10(owner, owner_api, value):
    """ "...and a value above the range is clamped to 10." — on create and on edit."""
    response = post_ladder(owner_api, retryCount=value)
    assert response.status_code == 201, response.json()
    assert response.json()["retryCount"] == 10
    ladder_id = response.json()["id"]
    edited = owner_api.put(
        f"/api/ladders/{ladder_id}/",
        {**config(rungs=response.json()["rungs"]), "retryCount": value},
        format="json",
    )
    assert edited.status_code == 200, edited.json()
    assert edited.json()["retryCount"] == 10
    assert Ladder.objects.get(pk=ladder_id).retry_count == 10


@pytest.mark.parametrize("value", [-1, "many", None])
def test_a_retry_count_below_the_range_is_refused(owner_api, value):
    """ "...ranges from 0 to 10" — below it is a 400 (API.md), naming the field."""
    response = post_ladder(owner_api, retryCount=value)
    assert response.status_code == 400
    assert "retryCount" in response.json()["errors"]


# The snapshot ---------------------------------------------------------------------------------


def test_a_run_snapshots_the_retry_count_and_every_job_of_the_dispatch_carries_it(
    owner, owner_api, driver, driver_api, run_tasks
):
    """ "A Run snapshots it with the rest of the configuration, and every job a launch pass of
    that dispatch enqueues carries it as its launch request's retryCount." — an edit after the
    Run changes none of the dispatch's jobs."""
    combos = climbers(2)
    ladder = start(owner, versions(2), combos, retryCount=3)
    assert dispatch_of(ladder).snapshot["retryCount"] == 3
    saved = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    body = config(rungs=saved["rungs"], combinations=[c.pk for c in combos], retryCount=0)
    edited = owner_api.put(f"/api/ladders/{ladder.pk}/", body, format="json")
    assert edited.status_code == 200, edited.json()
    assert Ladder.objects.get(pk=ladder.pk).retry_count == 0

    claimed = driver_api.post("/api/driver/claim", {"max": 10}, format="json").json()
    assert [j["retryCount"] for j in claimed] == [3, 3]
    for job in claimed:
        push(driver, ladder_jobs(ladder, pk=job["id"])[0], record=PERFECT)
    run_tasks()  # the passes launch rung two
    second = driver_api.post("/api/driver/claim", {"max": 10}, format="json").json()
    assert [(j["case"], j["retryCount"]) for j in second] == [("step-2", 3), ("step-2", 3)]
    assert progress_of(ladder)["dispatch"]["retryCount"] == 3


@pytest.mark.parametrize("ending", ["fail", "push"])
def test_an_automatic_retry_repeats_its_attempts_launch_request_and_inherits_its_count(
    owner, driver, ending
):
    """ "An automatic retry repeats its attempt's launch request, so it inherits the same
    count." """
    ladder = start(owner, versions(1), climbers(1), retryCount=4)
    [job] = claim_all(driver)
    if ending == "fail":
        fail(driver, job, failure="infrastructure")
    else:
        push(driver, job, outcome="hung", record={})
    job.refresh_from_db()
    [retry] = queued(ladder)
    assert job.retry_id == retry.pk
    assert retry.attempt == 2
    same = [
        "origin",
        "cell_key",
        "combination_cell",
        "case",
        "version",
        "variant",
        "engine",
        "combination_id",
    ]
    assert {f: getattr(retry, f) for f in same} == {f: getattr(job, f) for f in same}
    assert retry.retry_count == job.retry_count == 4
    assert retry.owner_id == job.owner_id == owner.pk


# What is retried -----------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", RETRIED)
@pytest.mark.parametrize("ending", ["fail", "push"])
def test_the_backend_retries_a_run_that_ends_infrastructure_catastrophic_harness_error_or_hung(
    owner, driver, outcome, ending
):
    """ "The backend retries a run that ends infrastructure, catastrophic, harness_error, or
    hung." — whether the driver pushed the run or ended the job with no run."""
    ladder = start(owner, versions(1), climbers(1), retryCount=1)
    [job] = claim_all(driver)
    if ending == "fail":
        fail(driver, job, failure=outcome)
    else:
        push(driver, job, outcome=outcome, record={})
    [retry] = queued(ladder)
    assert retry.attempt == 2


@pytest.mark.parametrize("outcome", NOT_RETRIED)
def test_the_backend_does_not_retry_any_other_ending(owner, driver, outcome):
    """ "The backend retries a run that ends infrastructure, catastrophic, harness_error, or
    hung." — and no other outcome."""
    ladder = start(owner, versions(1), climbers(1), retryCount=3)
    [job] = claim_all(driver)
    push(driver, job, outcome=outcome, record=PERFECT)
    job.refresh_from_db()
    assert job.retry_id is None
    assert queued(ladder) == []
    assert len(ladder_jobs(ladder)) == 1


def test_a_retried_outcome_with_no_retries_left_is_not_retried(owner, driver):
    """ "retryCount is the number of automatic retries" — a count of 0 retries nothing."""
    ladder = start(owner, versions(1), climbers(1), retryCount=0)
    [job] = claim_all(driver)
    push(driver, job, outcome="catastrophic", record={})
    assert queued(ladder) == []


# Which attempt stands --------------------------------------------------------------------------


def test_the_last_attempt_stands_a_model_failure_counts_and_goes_to_the_gate(
    owner, driver, run_tasks
):
    """ "The last attempt is the one that stands: a model failure counts and goes to the gate" —
    an infrastructure failure retried into a catastrophic run fails the rung."""
    ladder = start(owner, versions(2), climbers(1), retryCount=1)
    [first] = claim_all(driver)
    fail(driver, first, failure="infrastructure")
    run_tasks()
    [last] = claim_all(driver)
    run = push(driver, last, outcome="catastrophic", record={})
    run_tasks()
    assert Run.objects.get(pk=run.pk).counted is True
    climber = progress_of(ladder)["climbers"][0]
    assert (climber["status"], climber["blockedReason"]) == ("failed", None)
    assert climber["tally"]["counted"] == 1


def test_the_last_attempt_stands_an_infrastructure_failure_blocks_the_climber(
    owner, driver, run_tasks
):
    """ "...and an infrastructure failure blocks the climber." — a catastrophic run retried into
    an infrastructure failure leaves the rung without a run, blocked as failing."""
    ladder = start(owner, versions(2), climbers(1), retryCount=1)
    [first] = claim_all(driver)
    earlier = push(driver, first, outcome="catastrophic", record={})
    run_tasks()
    [last] = claim_all(driver)
    fail(driver, last, failure="infrastructure")
    run_tasks()
    assert Run.objects.get(pk=earlier.pk).counted is False
    climber = progress_of(ladder)["climbers"][0]
    assert (climber["status"], climber["blockedReason"], climber["attempts"]) == (
        "blocked",
        "failing",
        2,
    )
    assert climber["tally"]["counted"] == 0


def test_the_last_attempt_stands_when_the_retry_completes(owner, driver, run_tasks):
    """ "The last attempt is the one that stands" — a hung attempt retried into a perfect run
    passes the rung."""
    ladder = start(owner, versions(1), climbers(1), retryCount=1)
    [first] = claim_all(driver)
    push(driver, first, outcome="hung", record={})
    run_tasks()
    [last] = claim_all(driver)
    push(driver, last, record=PERFECT)
    run_tasks()
    assert progress_of(ladder)["climbers"][0]["status"] == "completed"
