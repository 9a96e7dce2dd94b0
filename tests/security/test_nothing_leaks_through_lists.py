"""Another owner's objects never show in a list, a filter, a summary or a console page, and a
driver never acts on a job leased to another driver. (The matrix covers addressing an object by
its id; this covers finding it.)"""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from loopweb.runs.models import ApiToken, Job
from tests.factories import UserFactory
from tests.fuzz.world import build_world
from tests.ladders.builders import PERFECT

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    return build_world()


def api_as(world, role) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {world.tokens[role]}")
    return client


def ids(response) -> set:
    assert response.status_code == 200, response.content
    return {row["id"] for row in response.json()["results"]}


def test_another_owner_finds_nothing_of_the_owner_by_listing_or_filtering(world):
    other = api_as(world, "other_owner")
    ladder, run, job = world.ladder, world.run, world.leased_job

    assert ladder.pk not in ids(other.get("/api/ladders/"))
    summary = other.get("/api/ladders/summary").json()
    assert ladder.pk not in {row["id"] for row in summary["results"]}
    owners_jobs = set(Job.objects.filter(owner=world.users["owner"]).values_list("pk", flat=True))
    assert owners_jobs and not ids(other.get("/api/jobs/")) & owners_jobs
    assert ids(other.get("/api/jobs/", {"origin": f"ladder:{ladder.pk}/"})) == set()
    assert ids(other.get("/api/jobs/", {"cellKey": job.cell_key})) == set()
    assert ids(other.get("/api/groups/")) == set()
    assert ids(other.get("/api/proposals/")) == set()
    visible = ids(other.get("/api/runs/"))
    assert run.pk not in visible and world.other_run.pk in visible
    assert run.pk not in ids(other.get("/api/runs/", {"cellKey": run.cell_key}))
    assert world.published_run.pk in visible  # published runs are every signed-in user's


def test_a_reviewer_finds_only_what_is_shared_with_them(world):
    reviewer = api_as(world, "reviewer")

    assert ids(reviewer.get("/api/ladders/")) == {world.ladder.pk}
    assert ids(reviewer.get("/api/jobs/")) == set()
    assert world.other_run.pk not in ids(reviewer.get("/api/runs/"))


def test_the_console_lists_no_other_owners_ladder(world):
    client = Client()
    client.force_login(world.users["other_owner"])

    page = client.get("/").content.decode()

    assert f"/ladders/{world.other_ladder.pk}/" in page
    assert f"/ladders/{world.ladder.pk}/" not in page


def test_a_driver_cannot_act_on_a_job_leased_to_another_driver(world):
    thief = UserFactory(username="thief", role="driver")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.issue(thief)[1]}")
    job = world.leased_job.pk

    status = client.post(f"/api/driver/jobs/{job}/status", {"status": "running"}, format="json")
    fail = client.post(f"/api/driver/jobs/{job}/fail", {"failure": "hung"}, format="json")
    push = client.post(
        "/api/runs/",
        {
            "job": job,
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": "2030-01-01T00:00:00Z",
        },
        format="json",
    )

    assert (status.status_code, fail.status_code, push.status_code) == (409, 409, 409)
    leased = Job.objects.get(pk=job)
    assert (leased.status, leased.lease_holder.username) == ("pending", "drv")
