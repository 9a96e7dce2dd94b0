"""SPEC §3–§4 and API "Jobs, runs and drivers": pushing, re-pushing and rating runs."""

import pytest

from loopweb.runs import hooks, services
from loopweb.runs.cells import CasePin
from loopweb.runs.models import Job, Run
from tests.factories import CaseFactory, CaseVersionFactory, CombinationFactory, UserFactory
from tests.runs.helpers import (
    BROKEN,
    PERFECT,
    assert_field_error,
    at,
    claim,
    finish,
    hand_job,
    push_body,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(owner, driver, version, combination):
    return claim(driver, hand_job(owner, version, combination))


def test_a_push_for_a_claimed_job_stores_the_rated_run_and_completes_the_job(driver_api, job):
    response = driver_api.post(
        "/api/runs/", push_body(job, commit="abc123", mergeArtifact="merge-9"), format="json"
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["job"] == job.pk
    assert data["outcome"] == "completed"
    assert data["validatorRating"] == "flawless"
    assert data["buildLoaded"] is True
    assert data["counted"] is True
    assert data["cellKey"] == job.cell_key
    assert (data["case"], data["version"], data["variant"], data["engine"]) == (
        "jump-1",
        "3",
        "default",
        None,
    )
    assert (data["commit"], data["mergeArtifact"]) == ("abc123", "merge-9")
    assert data["finishedAt"].endswith("Z") or "+" in data["finishedAt"]
    job.refresh_from_db()
    assert job.status == "completed"
    assert job.run.pk == data["id"]
    assert job.finished_at is not None and job.lease_expires_at is None


def test_a_run_with_a_failed_build_is_broken_and_an_unloaded_build_is_recorded(driver_api, job):
    record = {**PERFECT, "toolchain": {"build": "failed", "loaded": False}}

    data = driver_api.post("/api/runs/", push_body(job, record=record), format="json").json()

    assert (data["validatorRating"], data["buildLoaded"]) == ("broken", False)


def test_a_run_that_did_not_complete_is_not_rated_and_fails_its_job(driver_api, job):
    data = driver_api.post("/api/runs/", push_body(job, outcome="timedOut"), format="json").json()

    assert data["validatorRating"] is None
    job.refresh_from_db()
    assert (job.status, job.failure) == ("failed", "timedOut")


@pytest.mark.parametrize(
    ("kind", "legacy"), [("functional", True), ("performance", False), ("gameJam", False)]
)
def test_runs_of_versions_that_are_not_validator_rated_stay_unrated(
    owner, driver, combination, kind, legacy
):
    version = CaseVersionFactory(case=CaseFactory(kind=kind), legacy=legacy)

    run = finish(driver, hand_job(owner, version, combination))

    assert run.validator_rating is None
    assert run.counted is True


def test_a_re_push_rewrites_the_record_and_the_rating_and_never_makes_a_second_run(
    driver, driver_api, owner, version, combination
):
    run = finish(driver, hand_job(owner, version, combination), record=BROKEN)
    assert run.validator_rating == "broken"

    response = driver_api.put(
        f"/api/runs/{run.pk}/",
        push_body(record=PERFECT, commit="def456", finished_at=at(5)),
        format="json",
    )

    assert response.status_code == 200, response.content
    data = response.json()
    assert data["id"] == run.pk
    assert data["validatorRating"] == "flawless"
    assert data["record"] == PERFECT
    assert data["commit"] == "def456"
    assert Run.objects.count() == 1


def test_a_second_push_for_the_same_job_rewrites_its_run(driver_api, job):
    first = driver_api.post("/api/runs/", push_body(job, record=BROKEN), format="json")
    second = driver_api.post("/api/runs/", push_body(job, record=PERFECT), format="json")

    assert (first.status_code, second.status_code) == (201, 200)
    assert second.json()["id"] == first.json()["id"]
    assert second.json()["validatorRating"] == "flawless"
    assert Run.objects.count() == 1
    assert Job.objects.count() == 1


def test_a_run_of_a_version_not_ingested_is_unrated_until_re_pushed_after_ingest(
    owner, owner_api, driver, driver_api, combination
):
    case = CaseFactory(slug="jump-2")
    job = claim(
        driver,
        services.launch_by_hand(
            owner=owner,
            pin=CasePin("jump-2", "7", "default", None),
            combination=combination,
        ),
    )
    pushed = driver_api.post("/api/runs/", push_body(job), format="json").json()
    assert pushed["validatorRating"] is None
    assert pushed["counted"] is True

    ingested = owner_api.post(
        f"/api/cases/{case.slug}/versions/",
        {"version": "7", "checklist": [{"id": "starts", "text": "Starts", "critical": True}]},
        format="json",
    )
    assert ingested.status_code == 201, ingested.content
    repushed = driver_api.put(f"/api/runs/{pushed['id']}/", push_body(), format="json")

    assert repushed.json()["validatorRating"] == "flawless"
    assert Run.objects.count() == 1


def test_an_owner_pushes_a_run_launched_outside_loopweb_by_naming_its_cell(
    owner, owner_api, version, combination
):
    response = owner_api.post(
        "/api/runs/",
        push_body(case="jump-1", version="3", variant="default", combination=combination.pk),
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["job"] is None
    assert data["combination"] == combination.pk
    assert data["cellKey"] == "jump-1@3/default/-::aider|gpt-x|acme"
    assert data["validatorRating"] == "flawless"
    assert Run.objects.get().owner == owner


def test_a_driver_pushes_a_run_launched_outside_loopweb_for_the_same_cell_as_a_job(
    owner, driver_api, version, combination
):
    job = hand_job(owner, version, combination)

    data = driver_api.post(
        "/api/runs/",
        push_body(case="jump-1", version="3", combination=combination.pk),
        format="json",
    ).json()

    assert data["cellKey"] == job.cell_key
    assert data["job"] is None


def test_a_push_without_a_job_names_the_cell_fields_it_needs(driver_api):
    body = assert_field_error(driver_api.post("/api/runs/", push_body(), format="json"), "case")

    assert set(body["errors"]) == {"case", "version", "combination"}


def test_a_push_for_a_job_that_does_not_exist_is_a_400_on_job(driver_api):
    response = driver_api.post("/api/runs/", {**push_body(), "job": 999999}, format="json")

    assert_field_error(response, "job")


def test_a_push_for_a_job_no_driver_claimed_is_a_conflict(owner, driver_api, version, combination):
    job = hand_job(owner, version, combination)

    response = driver_api.post("/api/runs/", push_body(job), format="json")

    assert response.status_code == 409
    assert "claimed" in response.json()["detail"]
    assert Run.objects.count() == 0


def test_a_push_for_a_job_that_failed_without_a_run_is_a_conflict(driver, driver_api, job):
    services.fail_job(job_id=job.pk, driver=driver, failure="timedOut")

    response = driver_api.post("/api/runs/", push_body(job), format="json")

    assert response.status_code == 409
    assert Run.objects.count() == 0


def test_a_push_for_a_canceled_job_is_stored_and_the_job_stays_canceled(driver_api, job):
    services.cancel_job(job=job)

    response = driver_api.post("/api/runs/", push_body(job), format="json")

    assert response.status_code == 201
    assert response.json()["counted"] is True
    job.refresh_from_db()
    assert job.status == "canceled"


def test_a_driver_cannot_push_for_a_job_leased_to_another_driver(driver_api, job, token_client):
    other = token_client(UserFactory(username="drv2", role="driver"))

    response = other.post("/api/runs/", push_body(job), format="json")

    assert response.status_code == 409
    assert "leased to another driver" in response.json()["detail"]
    assert Run.objects.count() == 0


def test_an_owner_may_push_for_their_own_job_but_not_for_another_owners(
    owner_api, outsider_api, job
):
    assert outsider_api.post("/api/runs/", push_body(job), format="json").status_code == 404
    assert owner_api.post("/api/runs/", push_body(job), format="json").status_code == 201


def test_reviewers_do_not_push_runs(reviewer_api, job):
    assert reviewer_api.post("/api/runs/", push_body(job), format="json").status_code == 403


def test_an_owner_may_re_push_their_run_but_not_another_owners_published_run(
    owner, owner_api, outsider_api, driver, version, combination
):
    run = finish(driver, hand_job(owner, version, combination))
    Run.objects.filter(pk=run.pk).update(published=True)

    assert outsider_api.get(f"/api/runs/{run.pk}/").status_code == 200
    assert outsider_api.put(f"/api/runs/{run.pk}/", push_body(), format="json").status_code == 403
    assert owner_api.put(f"/api/runs/{run.pk}/", push_body(), format="json").status_code == 200


def test_a_push_and_a_re_push_are_announced_inside_their_transaction(
    owner, driver, version, combination
):
    announced = []

    def record(sender, run, created, payload, **kwargs):
        announced.append((run.pk, created, payload, Run.objects.filter(pk=run.pk).exists()))

    hooks.run_pushed.connect(record)
    job = claim(driver, hand_job(owner, version, combination))
    run, _ = services.push_run(
        pushed_by=driver,
        job_id=job.pk,
        outcome="completed",
        record=PERFECT,
        finished_at=at(0),
        payload={"signals": [{"name": "x"}]},
    )
    services.repush_run(run=run, outcome="completed", record=PERFECT, finished_at=at(1))

    assert announced == [
        (run.pk, True, {"signals": [{"name": "x"}]}, True),
        (run.pk, False, {}, True),
    ]


def test_the_signals_and_acceptance_rule_of_a_push_reach_subscribers_as_its_payload(
    driver_api, job
):
    payloads = []
    hooks.run_pushed.connect(lambda sender, payload, **kw: payloads.append(payload), weak=False)
    rule = {"name": "r", "requires": [], "score": None}

    driver_api.post(
        "/api/runs/",
        push_body(job, signals=[{"kind": "verdict", "name": "ci"}], acceptance_rule=rule),
        format="json",
    )

    assert payloads == [{"signals": [{"kind": "verdict", "name": "ci"}], "acceptance_rule": rule}]


def test_runs_are_listed_with_filters_on_cell_publication_and_review(
    owner, owner_api, driver, version, combination
):
    reviewed = finish(driver, hand_job(owner, version, combination))
    other_cell = finish(driver, hand_job(owner, version, CombinationFactory()))
    Run.objects.filter(pk=other_cell.pk).update(published=True)
    services.review_run(run=reviewed, reviewer=owner, aesthetic_rating=4, writeup="fine")

    def ids(query):
        response = owner_api.get(f"/api/runs/{query}")
        assert response.status_code == 200, response.content
        return [r["id"] for r in response.json()["results"]]

    assert sorted(ids("")) == sorted([reviewed.pk, other_cell.pk])
    assert ids(f"?cellKey={reviewed.cell_key}") == [reviewed.pk]
    assert ids("?published=true") == [other_cell.pk]
    assert ids("?reviewed=true") == [reviewed.pk]
    assert ids("?reviewed=false") == [other_cell.pk]
    page = owner_api.get("/api/runs/").json()
    assert set(page) == {"count", "next", "previous", "results"}
    assert page["results"][0]["reviewed"] in (True, False)


def test_a_review_is_recorded_once_per_reviewer(owner, owner_api, driver, version, combination):
    run = finish(driver, hand_job(owner, version, combination))

    first = owner_api.post(
        f"/api/runs/{run.pk}/reviews",
        {"aestheticRating": 4, "writeup": "tidy", "verdict": "accept"},
        format="json",
    )
    second = owner_api.post(
        f"/api/runs/{run.pk}/reviews", {"aestheticRating": 2, "writeup": "again"}, format="json"
    )

    assert first.status_code == 201, first.content
    assert first.json()["verdict"] == "accept"
    assert first.json()["reviewer"] == "olive"
    assert second.status_code == 409
    assert owner_api.get(f"/api/runs/{run.pk}/").json()["reviewed"] is True


def test_a_review_is_announced_inside_its_transaction(owner, driver, version, combination):
    seen = []
    hooks.run_reviewed.connect(
        lambda sender, review, **kw: seen.append(review.run.reviews.count()), weak=False
    )
    run = finish(driver, hand_job(owner, version, combination))

    services.review_run(run=run, reviewer=owner, aesthetic_rating=5, writeup="")

    assert seen == [1]


def test_drivers_do_not_review(driver_api, owner, driver, version, combination):
    run = finish(driver, hand_job(owner, version, combination))

    response = driver_api.post(f"/api/runs/{run.pk}/reviews", {"aestheticRating": 4}, format="json")

    assert response.status_code == 403
