"""SPEC §1: control is scoped by owner; an outsider gets 404 for what they may not see."""

import pytest
from django.db.models import Q

from loopweb.runs import access
from loopweb.runs.models import Review, Run
from tests.factories import CoverageGroupFactory
from tests.runs.helpers import claim, finish, hand_job, outside_run, push_body

pytestmark = pytest.mark.django_db


@pytest.fixture
def owned(owner, driver, version, combination):
    """An owner's group, queued job, and job with a run (unpublished)."""
    group = CoverageGroupFactory(owner=owner, combinations=[combination])
    run = finish(driver, hand_job(owner, version, combination))
    job = hand_job(owner, version, combination)
    return {"group": group, "job": job, "run": run}


def outsider_requests(owned):
    group, job, run = owned["group"].pk, owned["job"].pk, owned["run"].pk
    return [
        ("get", f"/api/groups/{group}/", None),
        ("put", f"/api/groups/{group}/", {"name": "mine now", "members": []}),
        ("delete", f"/api/groups/{group}/", None),
        ("get", f"/api/jobs/{job}/", None),
        ("post", f"/api/jobs/{job}/cancel", None),
        ("get", f"/api/runs/{run}/", None),
        ("put", f"/api/runs/{run}/", push_body()),
        ("post", f"/api/runs/{run}/reviews", {"aestheticRating": 3}),
    ]


def test_an_outsider_gets_404_for_every_object_of_another_owner(outsider_api, owned):
    for method, url, body in outsider_requests(owned):
        response = getattr(outsider_api, method)(url, body, format="json")
        assert response.status_code == 404, (method, url, response.status_code)
        assert response.json() == {"detail": "Not found."}

    owned["job"].refresh_from_db()
    assert owned["job"].status == "queued"
    assert owned["run"].reviews.count() == 0


def test_an_outsider_cannot_push_a_run_for_another_owners_job(outsider_api, driver, owned):
    job = claim(driver, owned["job"])

    response = outsider_api.post("/api/runs/", push_body(job), format="json")

    assert response.status_code == 404
    assert not Run.objects.filter(job=job).exists()


def test_an_outsider_lists_none_of_another_owners_groups_jobs_or_runs(outsider_api, owned):
    for url in ("/api/groups/", "/api/jobs/", "/api/runs/"):
        assert outsider_api.get(url).json()["count"] == 0, url


def test_a_reviewer_does_not_see_an_unpublished_run_they_were_not_shared(reviewer_api, owned):
    run = owned["run"].pk

    assert reviewer_api.get(f"/api/runs/{run}/").status_code == 404
    assert (
        reviewer_api.post(
            f"/api/runs/{run}/reviews", {"aestheticRating": 3}, format="json"
        ).status_code
        == 404
    )


def test_a_published_run_is_readable_by_every_signed_in_user_but_reviewable_by_few(
    reviewer_api, outsider_api, owned
):
    """Reading is not reviewing (SPEC §1): who may review is tests/security/test_who_may_review."""
    run = owned["run"]
    Run.objects.filter(pk=run.pk).update(published=True)

    assert outsider_api.get(f"/api/runs/{run.pk}/").status_code == 200
    assert reviewer_api.get(f"/api/runs/{run.pk}/").status_code == 200
    response = reviewer_api.post(
        f"/api/runs/{run.pk}/reviews", {"aestheticRating": 5, "writeup": "lovely"}, format="json"
    )
    assert response.status_code == 404, response.content


def test_the_owner_sees_their_objects(owner_api, owned):
    assert owner_api.get(f"/api/groups/{owned['group'].pk}/").status_code == 200
    assert owner_api.get(f"/api/jobs/{owned['job'].pk}/").status_code == 200
    assert owner_api.get(f"/api/runs/{owned['run'].pk}/").status_code == 200


def test_an_owner_sees_runs_they_pushed_for_a_cell(
    owner, owner_api, outsider_api, version, combination
):
    run = outside_run(owner, version, combination)

    assert owner_api.get(f"/api/runs/{run.pk}/").status_code == 200
    assert outsider_api.get(f"/api/runs/{run.pk}/").status_code == 404


def test_drivers_and_staff_see_every_run(driver_api, token_client, staff, owned):
    staff_api = token_client(staff)

    assert driver_api.get(f"/api/runs/{owned['run'].pk}/").status_code == 200
    assert staff_api.get(f"/api/runs/{owned['run'].pk}/").status_code == 200
    assert staff_api.get(f"/api/jobs/{owned['job'].pk}/").status_code == 200


def test_anonymous_requests_are_refused_with_401(anon_api, owned):
    requests = [
        ("get", "/api/cases/", None),
        ("get", "/api/models/", None),
        ("get", "/api/gg-configurations/", None),
        ("get", "/api/combinations/", None),
        ("get", "/api/groups/", None),
        ("get", "/api/jobs/", None),
        ("post", "/api/jobs/", {}),
        ("get", "/api/runs/", None),
        ("post", "/api/runs/", {}),
        *outsider_requests(owned),
    ]
    for method, url, body in requests:
        response = getattr(anon_api, method)(url, body, format="json")
        assert response.status_code == 401, (method, url, response.status_code)


def test_a_visibility_rule_of_a_higher_layer_lets_a_user_read_a_run_listed_once(
    owner, reviewer, reviewer_api, outsider, owned
):
    run = owned["run"]
    # A rule across a many-valued relation: one row per matching review.
    Review.objects.create(run=run, reviewer=owner, aesthetic_rating=3, writeup="shared with rita")
    Review.objects.create(run=run, reviewer=outsider, aesthetic_rating=4, writeup="rita too")
    access.register_run_visibility(lambda user: Q(reviews__writeup__contains=user.username))

    listed = reviewer_api.get("/api/runs/").json()

    assert [r["id"] for r in listed["results"]] == [run.pk]
    assert listed["count"] == 1
    assert reviewer_api.get(f"/api/runs/{run.pk}/").status_code == 200
