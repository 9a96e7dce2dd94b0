"""SPEC §10 and STYLE "Query budgets are tests": a claim and a push issue a bounded number of
queries, however many jobs they touch. Subscribers of the substrate's signals are detached here
(see conftest.py); their own budgets are theirs to test."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import CombinationFactory, GGConfigurationFactory, gg_combination
from tests.runs.helpers import claim, hand_job, outside_run, push_body

pytestmark = pytest.mark.django_db

# A claim over HTTP, whatever the number of jobs (no provider budget enabled; the claims under
# budgets have their own test, tests/budgets/test_claims_within_budgets.py):
#   1. SELECT the token with its user and account (authentication)
#   2. SELECT the enabled provider budgets (none)
#   3. UPDATE runs_job SET status = 'pending', lease … WHERE id IN (SELECT … FOR UPDATE SKIP
#      LOCKED) RETURNING … (the claim itself: one statement)
#   4. SELECT the claimed jobs' combinations (prefetched for the reply)
#   5. SELECT the attempts the claimed retries retry (only when some are retries)
#   6. SELECT the names of the gg configurations among the claimed jobs (only when some are gg)
# A claimed job has no run (a run is stored when its attempt ends): that is not read.
# An empty claim stops after the UPDATE.
CLAIM_BUDGET = 6


def enqueue(owner, version, count: int):
    configuration = GGConfigurationFactory()
    for index in range(count):
        if index % 2:
            combination = gg_combination(configuration, {"planner": f"p{index}", "coder": "c"})
        else:
            combination = CombinationFactory()
        hand_job(owner, version, combination)


@pytest.mark.parametrize("jobs", [1, 20])
def test_a_claim_runs_a_bounded_number_of_queries(
    owner, driver_api, version, jobs, django_assert_max_num_queries
):
    enqueue(owner, version, jobs)

    with django_assert_max_num_queries(CLAIM_BUDGET):
        response = driver_api.post("/api/driver/claim", {"max": 20}, format="json")

    assert len(response.json()) == jobs


def test_a_claim_of_first_attempts_reads_only_their_combinations(
    owner, driver_api, version, django_assert_max_num_queries
):
    for _ in range(3):
        hand_job(owner, version, CombinationFactory())
    # The token, the budgets, the claim, the combinations.
    with django_assert_max_num_queries(4):
        body = driver_api.post("/api/driver/claim", {"max": 20}, format="json").json()
    assert [(job["attempt"], job["run"], job["retries"]) for job in body] == [(1, None, None)] * 3
    assert all(job["combination"]["harness"] for job in body)


@pytest.mark.postgres
def test_on_postgresql_a_claims_combinations_come_with_its_jobs(
    owner, driver_api, version, django_assert_max_num_queries
):
    made = [CombinationFactory(), CombinationFactory(harness="other")]
    for combination in made:
        hand_job(owner, version, combination)
    # The token, the budgets, and the claim returning each job with its combination.
    with django_assert_max_num_queries(3):
        body = driver_api.post("/api/driver/claim", {"max": 20}, format="json").json()
    shown = sorted((job["combination"]["id"], job["combination"]["key"]) for job in body)
    assert shown == sorted((c.pk, c.key) for c in made)


def test_claiming_twenty_jobs_costs_what_claiming_two_costs(owner, driver_api, version):
    enqueue(owner, version, 22)

    with CaptureQueriesContext(connection) as two:
        assert len(driver_api.post("/api/driver/claim", {"max": 2}, format="json").json()) == 2
    with CaptureQueriesContext(connection) as twenty:
        assert len(driver_api.post("/api/driver/claim", {"max": 20}, format="json").json()) == 20

    assert len(twenty) == len(two)


def test_an_empty_claim_runs_a_bounded_number_of_queries(driver_api, django_assert_max_num_queries):
    # The token, the budgets and the UPDATE that finds nothing: no prefetches, no
    # configuration names.
    with django_assert_max_num_queries(3):
        assert driver_api.post("/api/driver/claim", {"max": 20}, format="json").json() == []


# A push for a job over HTTP:
#   1. SELECT the token with its user and account (authentication)
#   2. SAVEPOINT
#   3. SELECT the job's origin (announced before the job is locked: scheduler first, then job)
#   4. SELECT … FOR UPDATE the job
#   5. SELECT the case version, to rate the run — or, for a retried outcome (never a completed
#      run, so never both), INSERT the automatic retry after 6.
#   6. INSERT the run
#   7. UPDATE the job: terminal, stamped with its retry
#   8. INSERT the change stamp of the run's cell (boards reading it know to look again; on
#      SQLite, where stamps come from a counter, also the counter's UPDATE)
#   9. RELEASE SAVEPOINT
# The job was in flight, so it has no run yet (no lookup), and a run stored a moment ago has no
# reviews (the response's `reviewed` needs no query).
#: The change stamp's extra statement on SQLite (its counter).
STAMP = 0 if connection.vendor == "postgresql" else 1
PUSH_BUDGET = 9


@pytest.mark.parametrize("outcome", ["completed", "hung", "timedOut"])
@pytest.mark.parametrize("checklist_items", [1, 200])
def test_a_push_runs_a_bounded_number_of_queries(
    owner,
    driver,
    driver_api,
    version,
    combination,
    outcome,
    checklist_items,
    django_assert_max_num_queries,
):
    version.checklist = [
        {"id": f"i{n}", "text": "", "critical": False} for n in range(checklist_items)
    ]
    version.save()
    job = claim(driver, hand_job(owner, version, combination, retry_count=1))
    record = {"checklist": {f"i{n}": True for n in range(checklist_items)}}

    with django_assert_max_num_queries(PUSH_BUDGET + STAMP):
        response = driver_api.post(
            "/api/runs/", push_body(job, outcome=outcome, record=record), format="json"
        )

    assert response.status_code == 201, response.content


def test_a_second_push_for_the_same_job_runs_a_bounded_number_of_queries(
    owner, driver, driver_api, version, combination, django_assert_max_num_queries
):
    job = claim(driver, hand_job(owner, version, combination))
    driver_api.post("/api/runs/", push_body(job), format="json")

    # Token; savepoint; origin; job locked; its run; its checklist overrides (still folded
    # in); case version; was the attempt retried; UPDATE the run; release; the overrides shown;
    # reviews.
    with django_assert_max_num_queries(12 + STAMP):
        assert driver_api.post("/api/runs/", push_body(job), format="json").status_code == 200


def test_a_push_with_a_cell_runs_a_bounded_number_of_queries(
    owner, owner_api, version, combination, django_assert_max_num_queries
):
    outside_run(owner, version, combination)  # the cell already has runs: no difference
    body = push_body(case="jump-1", version="3", combination=combination.pk)

    # Token; the combination; savepoint; the model catalog entries of the combination (its
    # cell); the case version; INSERT the run; the change stamp; release.
    with django_assert_max_num_queries(8 + STAMP):
        assert owner_api.post("/api/runs/", body, format="json").status_code == 201
