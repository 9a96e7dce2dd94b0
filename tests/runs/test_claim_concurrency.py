"""SPEC §9–§10: drivers claiming at once, on PostgreSQL, with real threads and connections."""

from collections import Counter

import pytest

from loopweb.runs import services
from loopweb.runs.cells import CasePin
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Combination, Job, Run
from tests.factories import CombinationFactory, UserFactory
from tests.runs.helpers import PERFECT, claim, hand_job
from tests.support.threads import together

# PostgreSQL: twenty writers at once, row locks and SKIP LOCKED.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

THREADS = 20


@pytest.fixture
def drivers(db):
    return [UserFactory(username=f"driver-{i}", role="driver") for i in range(THREADS)]


def test_twenty_drivers_claiming_at_once_never_claim_one_job_twice(owner, version, drivers):
    jobs = [hand_job(owner, version, CombinationFactory()) for _ in range(60)]

    def drain(index):
        claimed = []
        while batch := services.claim_jobs(driver=drivers[index], limit=3):
            claimed.extend((job.pk, drivers[index].pk) for job in batch)
        return claimed

    results = together(THREADS, drain)

    errors = [r for r in results if isinstance(r, Exception)]
    assert errors == []
    claims = [claim for result in results for claim in result]
    counts = Counter(job_id for job_id, _ in claims)
    assert max(counts.values()) == 1
    assert sorted(counts) == sorted(job.pk for job in jobs)
    holders = dict(Job.objects.values_list("pk", "lease_holder_id"))
    assert all(holders[job_id] == driver_id for job_id, driver_id in claims)
    assert set(Job.objects.values_list("status", flat=True)) == {"pending"}


def test_twenty_drivers_claiming_one_job_at_once_give_it_to_exactly_one(owner, version, drivers):
    job = hand_job(owner, version, CombinationFactory())

    results = together(THREADS, lambda index: services.claim_jobs(driver=drivers[index], limit=1))

    assert [r for r in results if isinstance(r, Exception)] == []
    winners = [index for index, batch in enumerate(results) if batch]
    assert len(winners) == 1
    assert results[winners[0]][0].pk == job.pk
    job.refresh_from_db()
    assert job.lease_holder == drivers[winners[0]]


def test_pushes_of_one_run_at_once_store_one_run_and_end_the_attempt_once(
    owner, version, combination, drivers
):
    driver = drivers[0]
    job = claim(driver, hand_job(owner, version, combination, retry_count=1))

    def push(index):
        run, created = services.push_run(
            pushed_by=driver,
            job_id=job.pk,
            outcome="hung",
            record=PERFECT,
            finished_at=job.created_at,
        )
        return created

    results = together(8, push)

    assert [r for r in results if isinstance(r, Exception)] == []
    assert sorted(results) == [False] * 7 + [True]
    assert Run.objects.count() == 1
    assert Job.objects.filter(attempt=2).count() == 1  # one retry, not one per push


def test_reviews_of_one_run_by_one_reviewer_at_once_record_one_review(
    owner, version, combination, drivers
):
    run, _ = services.push_run(
        pushed_by=owner,
        pin=CasePin("jump-1", "3", "default"),
        combination=combination,
        outcome="completed",
        record=PERFECT,
        finished_at=version.ingested_at,
    )

    def review(index):
        try:
            services.review_run(run=run, reviewer=owner, aesthetic_rating=3, writeup="")
        except Conflict:
            return "conflict"
        return "recorded"

    results = together(8, review)

    assert sorted(results) == ["conflict"] * 7 + ["recorded"]
    assert run.reviews.count() == 1


def test_owners_creating_the_same_combination_at_once_get_one_and_a_400(token_client, drivers):
    owners = [UserFactory(username=f"owner-{i}", role="owner") for i in range(6)]
    clients = [token_client(owner) for owner in owners]
    body = {"kind": "harness", "harness": "aider", "model": "gpt-x", "provider": "acme"}

    results = together(
        len(clients), lambda index: clients[index].post("/api/combinations/", body, format="json")
    )

    statuses = sorted(response.status_code for response in results)
    assert statuses == [201] + [400] * 5
    assert all("key" in r.json()["errors"] for r in results if r.status_code == 400)
    assert Combination.objects.count() == 1
