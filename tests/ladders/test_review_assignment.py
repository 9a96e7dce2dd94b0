"""Assignment: the owner assigns reviewers and a number of reviews per run; each reviewer's queue
lists the runs with a review free for them; opening a run reserves it (docs/reviewing.md,
"Assignment and reservations")."""

from datetime import timedelta

import pytest
from django.utils import timezone

from ladders import services
from ladders.models import ReviewReservation
from loopweb.runs.models import Role
from tests.conftest import _token_client
from tests.factories import UserFactory
from tests.ladders.builders import PERFECT, climbers, config, make_ladder, rung, versions, work


@pytest.fixture
def team(db):
    return [UserFactory(username=name, role=Role.REVIEWER) for name in ("ana", "ben", "cy")]


@pytest.fixture
def apis(team):
    return [_token_client(user) for user in team]


def ladder_of(owner, driver, run_tasks, reviewers, runs=3, **settings):
    ladder = make_ladder(owner, versions(1), climbers(runs), reviewers=[u.pk for u in reviewers])
    for field, value in settings.items():
        setattr(ladder, field, value)
    ladder.save()
    if "assignees" in settings:
        raise AssertionError("set assignees with .set()")
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    return ladder


def queue(api, ladder) -> list[int]:
    response = api.get(f"/api/ladders/{ladder.pk}/queue")
    assert response.status_code == 200, response.json()
    return [e["run"] for e in response.json()["results"]]


def reserve(api, ladder, run):
    return api.post(f"/api/ladders/{ladder.pk}/queue/{run}/reservation")


def review(api, ladder, run):
    return api.post(
        f"/api/ladders/{ladder.pk}/queue/{run}/reviews", {"aestheticRating": 3}, format="json"
    )


def test_the_owner_sets_reviewers_reviews_per_run_and_reservation_time_through_the_api(
    owner, owner_api, team
):
    body = {
        "name": "jam",
        "rungs": [],
        "reviewers": ["ana", "ben", "cy"],
        "assignedReviewers": ["ana", "ben"],
        "reviewsPerRun": 2,
        "reservationMinutes": 30,
    }
    created = owner_api.post("/api/ladders/", body, format="json")
    assert created.status_code == 201, created.json()
    saved = created.json()
    assert (saved["assignedReviewers"], saved["reviewsPerRun"], saved["reservationMinutes"]) == (
        ["ana", "ben"],
        2,
        30,
    )
    plain = owner_api.post("/api/ladders/", {"name": "plain", "rungs": []}, format="json").json()
    assert (plain["assignedReviewers"], plain["reviewsPerRun"], plain["reservationMinutes"]) == (
        [],
        1,
        15,
    )


def test_reviewers_and_assignees_read_in_username_order_whatever_order_they_were_linked(
    owner, owner_api, db
):
    # Linked in reverse: the rows of the links and of the users are in the opposite order.
    for name in ("zed", "yan", "xia"):
        UserFactory(username=name, role=Role.REVIEWER)
    body = {"name": "jam", "rungs": [], "reviewers": ["zed", "yan", "xia"]}
    ladder = owner_api.post("/api/ladders/", body, format="json").json()
    changed = owner_api.put(
        f"/api/ladders/{ladder['id']}/",
        {**body, "assignedReviewers": ["zed", "xia"]},
        format="json",
    ).json()
    read = owner_api.get(f"/api/ladders/{ladder['id']}/").json()
    for answer in (changed, read):
        assert answer["reviewers"] == ["xia", "yan", "zed"]
        assert answer["assignedReviewers"] == ["xia", "zed"]


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"assignedReviewers": ["cy"]}, "assignedReviewers"),  # not shared with
        ({"assignedReviewers": ["nobody"]}, "assignedReviewers"),
        ({"reviewsPerRun": 0}, "reviewsPerRun"),
        ({"reservationMinutes": 0}, "reservationMinutes"),
        ({"reservationMinutes": 100000}, "reservationMinutes"),
    ],
)
def test_bad_review_settings_are_a_400_naming_the_field(owner, owner_api, team, extra, field):
    body = {"name": "jam", "rungs": [], "reviewers": ["ana"], **extra}
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()


def test_a_run_leaves_the_shared_queue_once_it_has_its_number_of_reviews(
    owner, driver, run_tasks, team, apis
):
    ana, ben, cy = apis
    ladder = ladder_of(owner, driver, run_tasks, team, runs=2, reviews_per_run=2)
    first, second = queue(ana, ladder)
    assert review(ana, ladder, first).status_code == 201
    assert queue(ana, ladder) == [second]  # reviewed by her
    assert queue(ben, ladder) == [first, second]  # one review of two
    assert review(ben, ladder, first).status_code == 201
    assert queue(cy, ladder) == [second]  # has its two
    third_review = review(cy, ladder, first)
    assert third_review.status_code == 409
    assert "2 reviews" in third_review.json()["detail"]


def test_each_reviewers_queue_lists_the_runs_assigned_to_them(
    owner, owner_api, driver, run_tasks, team, apis
):
    ana, ben, cy = apis
    ladder = ladder_of(owner, driver, run_tasks, team, runs=2)
    ladder.assignees.set(team[:2])
    assert len(queue(ana, ladder)) == 2
    assert len(queue(ben, ladder)) == 2
    assert queue(cy, ladder) == []  # shared with, not assigned
    run = queue(ana, ladder)[0]
    assert reserve(cy, ladder, run).status_code == 403
    assert review(cy, ladder, run).status_code == 403


def test_opening_a_run_reserves_it_so_another_reviewer_is_not_handed_it(
    owner, owner_api, driver, run_tasks, team, apis
):
    ana, ben, _ = apis
    ladder = ladder_of(owner, driver, run_tasks, team, runs=2, reservation_minutes=20)
    first, second = queue(ana, ladder)
    kept = reserve(ana, ladder, first)
    assert kept.status_code == 201, kept.json()
    assert kept.json()["reviewer"] == "ana"
    entry = ana.get(f"/api/ladders/{ladder.pk}/queue").json()["results"][0]
    assert entry["run"] == first and entry["reservedUntil"]
    assert queue(ben, ladder) == [second]
    refused = review(ben, ladder, first)
    assert refused.status_code == 409
    assert "kept for ana" in refused.json()["detail"]
    assert reserve(ben, ladder, first).status_code == 409
    # The owner's queue keeps the seed's meaning: a run nobody reviewed is still waiting.
    assert queue(owner_api, ladder) == [first, second]
    assert review(ana, ladder, first).status_code == 201
    assert not ReviewReservation.objects.filter(run_id=first).exists()  # ended by the review


def test_a_reservation_ends_after_the_ladders_reservation_time(
    owner, driver, run_tasks, team, apis
):
    ana, ben, _ = apis
    ladder = ladder_of(owner, driver, run_tasks, team, runs=1, reservation_minutes=5)
    [run] = queue(ana, ladder)
    reserve(ana, ladder, run)
    reservation = ReviewReservation.objects.get(run_id=run)
    assert timedelta(minutes=4) < reservation.expires_at - timezone.now() <= timedelta(minutes=5)
    assert queue(ben, ladder) == []
    ReviewReservation.objects.filter(pk=reservation.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert queue(ben, ladder) == [run]
    assert review(ben, ladder, run).status_code == 201


def test_opening_another_run_releases_the_first_and_delete_releases_it(
    owner, driver, run_tasks, team, apis
):
    ana, ben, _ = apis
    ladder = ladder_of(owner, driver, run_tasks, team, runs=2)
    first, second = queue(ana, ladder)
    reserve(ana, ladder, first)
    reserve(ana, ladder, second)
    assert queue(ben, ladder) == [first]
    assert ana.delete(f"/api/ladders/{ladder.pk}/queue/{second}/reservation").status_code == 204
    assert queue(ben, ladder) == [first, second]


def test_a_run_outside_the_ladders_dispatch_is_a_404(owner, owner_api, driver, run_tasks, team):
    ladder = ladder_of(owner, driver, run_tasks, team, runs=1)
    other = make_ladder(owner, versions(1, prefix="other"), climbers(1))
    services.start_dispatch(ladder=other)
    work(driver, run_tasks, PERFECT)
    [foreign] = queue(owner_api, other)
    assert reserve(owner_api, ladder, foreign).status_code == 404
    assert review(owner_api, ladder, foreign).status_code == 404


@pytest.mark.parametrize("n_climbers", [2, 20])
def test_the_queue_reads_a_bounded_number_of_queries(
    owner, driver, run_tasks, team, apis, django_assert_max_num_queries, n_climbers
):
    ana = apis[0]
    ladder = ladder_of(owner, driver, run_tasks, team, runs=n_climbers, reviews_per_run=2)
    reserve(ana, ladder, queue(ana, ladder)[0])
    with django_assert_max_num_queries(14):  # 12 measured, whatever the climbers
        assert len(queue(ana, ladder)) == n_climbers


@pytest.mark.parametrize("given", ["users", "ids"])
def test_an_edit_that_leaves_assignment_out_keeps_the_assignees_still_shared_with(
    owner, team, given
):
    """The reviewers come as users (the serializer's) or as ids: either way a reviewer no longer
    shared with is unassigned and the others stay assigned."""
    ana, ben, cy = team
    combos = climbers(1)
    rungs = [rung(v) for v in versions(1)]
    data = config(rungs=rungs, combinations=[c.pk for c in combos], reviewers=[ana, ben, cy])
    ladder = services.save_ladder(owner=owner, data=data)
    ladder.assignees.set([ana, ben])
    shared = [ana, cy] if given == "users" else [ana.pk, cy.pk]
    edit = config(rungs=rungs, combinations=[c.pk for c in combos], reviewers=shared)
    services.save_ladder(owner=owner, data=edit, ladder=ladder)
    assert set(ladder.assignees.values_list("username", flat=True)) == {"ana"}
