"""Fault: a driver vanishes mid-run. Its lease expires, the attempt ends as infrastructure, and
the job is retried while its retries last; after that the climber blocks as failing, and the
owner's Retry launches it again. Whatever the vanished driver sends later is refused."""

import time

import pytest
from django.core.management import call_command

from loopweb.runs.models import Job, Run
from tests.factories import UserFactory
from tests.ladders.builders import (
    PERFECT,
    climber_of,
    climbers,
    dispatch_of,
    make_ladder,
    progress_of,
    versions,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("faults")]

LEASE = 0.4


@pytest.fixture(autouse=True)
def short_leases(settings):
    settings.LOOPWEB_LEASE_SECONDS = LEASE


def claim_and_vanish(api) -> dict:
    """Claim one job, report it running, then never speak again."""
    [job] = api.post("/api/driver/claim", {"max": 1}, format="json").json()
    reply = api.post(f"/api/driver/jobs/{job['id']}/status", {"status": "running"}, format="json")
    assert reply.status_code == 200, reply.content
    return job


def let_the_lease_run_out():
    time.sleep(LEASE + 0.2)
    call_command("expire_leases", verbosity=0)


def test_a_vanished_driver_costs_an_attempt_then_blocks_the_climber(
    owner, owner_api, token_client, run_tasks
):
    ghost = token_client(UserFactory(username="ghost", role="driver"))
    steady = token_client(UserFactory(username="steady", role="driver"))
    [combo] = climbers(1)
    ladder = make_ladder(owner, versions(1), [combo], retryCount=1)
    assert owner_api.post(f"/api/ladders/{ladder.pk}/run").status_code == 200

    first = claim_and_vanish(ghost)
    let_the_lease_run_out()
    run_tasks()

    attempt = Job.objects.get(pk=first["id"])
    assert (attempt.status, attempt.failure, attempt.failure_detail) == (
        "failed",
        "infrastructure",
        "lease expired",
    )
    retry = attempt.retry
    assert (retry.status, retry.attempt) == ("queued", 2)
    assert climber_of(progress_of(ladder), combo.key)["status"] == "running"

    # The ghost returns: its heartbeat and its push are refused, and nothing is stored.
    late = ghost.post(
        f"/api/driver/jobs/{first['id']}/status", {"status": "running"}, format="json"
    )
    assert late.status_code == 409
    push = ghost.post(
        "/api/runs/",
        {
            "job": first["id"],
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": "2030-01-01T00:00:00Z",
        },
        format="json",
    )
    assert push.status_code == 409
    assert not Run.objects.exists()

    second = claim_and_vanish(ghost)
    assert second["id"] == retry.pk
    let_the_lease_run_out()
    run_tasks()

    board = progress_of(ladder)
    climber = climber_of(board, combo.key)
    assert (climber["status"], climber["blockedReason"], climber["attempts"]) == (
        "blocked",
        "failing",
        2,
    )
    assert board["ladder"]["status"] == "needsAttention"
    assert Job.objects.filter(status="queued").count() == 0  # no replacement by itself

    retried = owner_api.post(
        f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": combo.key}, format="json"
    )
    assert retried.status_code == 200, retried.content
    [job] = steady.post("/api/driver/claim", {"max": 5}, format="json").json()
    assert job["attempt"] == 1
    pushed = steady.post(
        "/api/runs/",
        {
            "job": job["id"],
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": "2030-01-01T00:00:00Z",
        },
        format="json",
    )
    assert pushed.status_code == 201, pushed.content
    run_tasks()
    assert dispatch_of(ladder).status == "finished"
    assert Run.objects.count() == 1


def test_with_no_retries_left_one_vanished_driver_blocks_the_climber(
    owner, owner_api, token_client, run_tasks
):
    ghost = token_client(UserFactory(username="ghost", role="driver"))
    [combo] = climbers(1)
    ladder = make_ladder(owner, versions(1), [combo], retryCount=0)
    owner_api.post(f"/api/ladders/{ladder.pk}/run")

    job = claim_and_vanish(ghost)
    let_the_lease_run_out()
    run_tasks()

    assert Job.objects.get(pk=job["id"]).retry is None
    climber = climber_of(progress_of(ladder), combo.key)
    assert (climber["status"], climber["blockedReason"], climber["attempts"]) == (
        "blocked",
        "failing",
        1,
    )


def test_a_driver_that_keeps_reporting_keeps_its_job(owner, owner_api, token_client, run_tasks):
    """Only silence expires a lease: status reports (heartbeats) renew it."""
    alive = token_client(UserFactory(username="alive", role="driver"))
    ladder = make_ladder(owner, versions(1), climbers(1))
    owner_api.post(f"/api/ladders/{ladder.pk}/run")
    job = claim_and_vanish(alive)

    for _ in range(4):
        time.sleep(LEASE / 2)
        beat = alive.post(
            f"/api/driver/jobs/{job['id']}/status", {"status": "running"}, format="json"
        )
        assert beat.json() == {"status": "running", "cancel": False}
        call_command("expire_leases", verbosity=0)

    assert Job.objects.get(pk=job["id"]).status == "running"
