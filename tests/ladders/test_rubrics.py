"""A ladder's rubric: the review form's criteria beyond the aesthetic rating, and reviews that
answer it through the ladder's queue (docs/reviewing.md, "Rubrics")."""

import pytest

from ladders import services
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work
from tests.support.rubrics import JAM_RUBRIC, to_review

JAM = [
    {
        "id": "polish",
        "kind": "number",
        "label": "Polish",
        "description": "How finished it feels.",
        "min": 1,
        "max": 10,
        "step": 1,
        "required": True,
    },
    {
        "id": "category",
        "kind": "category",
        "description": "The jam category it fits best.",
        "labels": ["Gameplay", "Art", "Audio"],
    },
    {"id": "fun", "kind": "boolean", "description": "Would you play it again?"},
]


def ladder_body(**extra):
    return {"name": "jam", "rungs": [], **extra}


def put(api, ladder, **extra):
    return api.put(f"/api/ladders/{ladder.pk}/", ladder_body(**extra), format="json")


@pytest.fixture
def jam(owner, reviewer, driver, run_tasks):
    ladder = make_ladder(owner, versions(1), climbers(2), reviewers=[reviewer.pk])
    return to_review(ladder, driver, run_tasks)


def queue(api, ladder):
    return api.get(f"/api/ladders/{ladder.pk}/queue").json()["results"]


def post_review(api, ladder, run, **extra):
    body = {"aestheticRating": 4, "writeup": "Bouncy.", **extra}
    return api.post(f"/api/ladders/{ladder.pk}/queue/{run}/reviews", body, format="json")


def test_an_owner_defines_number_category_and_boolean_criteria_each_with_a_description(
    owner, owner_api
):
    created = owner_api.post("/api/ladders/", ladder_body(rubric=JAM), format="json")
    assert created.status_code == 201, created.json()
    rubric = created.json()["rubric"]
    assert [(c["id"], c["kind"]) for c in rubric] == [
        ("polish", "number"),
        ("category", "category"),
        ("fun", "boolean"),
    ]
    assert rubric[0] == JAM_RUBRIC[0]
    assert rubric[1]["labels"] == ["Gameplay", "Art", "Audio"]
    assert rubric[1]["label"] == "category"  # no label: the id
    assert "min" not in rubric[2] and "labels" not in rubric[2]


def test_a_ladder_without_a_rubric_has_an_empty_one_and_a_put_without_it_keeps_it(owner, owner_api):
    created = owner_api.post("/api/ladders/", ladder_body(), format="json").json()
    assert created["rubric"] == []
    ladder_id = created["id"]
    owner_api.put(f"/api/ladders/{ladder_id}/", ladder_body(rubric=JAM), format="json")
    kept = owner_api.put(f"/api/ladders/{ladder_id}/", ladder_body(name="jam 2"), format="json")
    assert [c["id"] for c in kept.json()["rubric"]] == ["polish", "category", "fun"]


@pytest.mark.parametrize(
    ("criterion", "field"),
    [
        ({"id": "Polish", "kind": "boolean"}, "rubric.0.id"),
        ({"id": "polish", "kind": "stars"}, "rubric.0.kind"),
        ({"id": "polish", "kind": "number", "min": 5, "max": 1, "step": 1}, "rubric.0.max"),
        ({"id": "polish", "kind": "number", "min": 1, "max": 10}, "rubric.0.step"),
        ({"id": "polish", "kind": "number", "min": 0, "max": 1, "step": 0.3}, "rubric.0.step"),
        ({"id": "polish", "kind": "category", "labels": ["Art"]}, "rubric.0.labels"),
        ({"id": "polish", "kind": "category", "labels": ["Art", "Art"]}, "rubric.0.labels"),
    ],
)
def test_a_criterion_that_cannot_be_answered_is_a_400_naming_its_field(
    owner, owner_api, criterion, field
):
    response = owner_api.post("/api/ladders/", ladder_body(rubric=[criterion]), format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()


def test_a_criterion_id_twice_is_a_400(owner, owner_api):
    twice = [{"id": "fun", "kind": "boolean"}] * 2
    response = owner_api.post("/api/ladders/", ladder_body(rubric=twice), format="json")
    assert response.status_code == 400
    assert "rubric" in response.json()["errors"]


def test_a_review_from_the_queue_carries_its_values(jam, reviewer_api):
    first, _ = queue(reviewer_api, jam)
    response = post_review(
        reviewer_api, jam, first["run"], values={"polish": 7, "category": "Art", "fun": True}
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["values"] == {"polish": 7, "category": "Art", "fun": True}
    assert (body["aestheticRating"], body["writeup"], body["reviewer"]) == (4, "Bouncy.", "rita")


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"polish": 11}, "values.polish"),
        ({"polish": 2.5}, "values.polish"),
        ({"polish": "7"}, "values.polish"),
        ({"polish": 7, "category": "Music"}, "values.category"),
        ({"polish": 7, "fun": "yes"}, "values.fun"),
        ({"polish": 7, "speed": 3}, "values.speed"),
        ({"category": "Art"}, "values.polish"),  # required
    ],
)
def test_values_the_rubric_does_not_take_are_a_400_naming_the_criterion(
    jam, reviewer_api, values, field
):
    first, _ = queue(reviewer_api, jam)
    response = post_review(reviewer_api, jam, first["run"], values=values)
    assert response.status_code == 400
    assert field in response.json()["errors"], response.json()
    assert len(queue(reviewer_api, jam)) == 2  # nothing recorded


def test_the_review_contract_still_works_without_values_on_a_ladder_without_a_rubric(
    owner, owner_api, driver, run_tasks
):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    [entry] = queue(owner_api, ladder)
    response = post_review(owner_api, ladder, entry["run"], verdict="accept")
    assert response.status_code == 201, response.json()
    assert response.json()["values"] == {}
    plain = owner_api.get(f"/api/runs/{entry['run']}/").json()
    assert plain["id"] == entry["run"]


def test_values_posted_to_the_runs_own_reviews_are_a_400_pointing_at_the_queue(jam, owner_api):
    first, _ = queue(owner_api, jam)
    response = owner_api.post(
        f"/api/runs/{first['run']}/reviews",
        {"aestheticRating": 3, "values": {"polish": 3}},
        format="json",
    )
    assert response.status_code == 400
    assert "queue" in response.json()["errors"]["values"][0]


def test_the_schema_describes_the_rubric_and_the_queues_review(owner_api):
    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    paths = schema["paths"]
    assert "/api/ladders/{id}/queue/{run}/reviews" in paths
    assert "/api/ladders/{id}/queue/{run}/reservation" in paths
    ladder = schema["components"]["schemas"]["LadderConfigRequest"]["properties"]
    assert {"rubric", "reviewsPerRun", "assignedReviewers", "reservationMinutes"} <= set(ladder)
    review = schema["components"]["schemas"]["QueueReviewRequest"]["properties"]
    assert {"aestheticRating", "writeup", "verdict", "values"} <= set(review)
