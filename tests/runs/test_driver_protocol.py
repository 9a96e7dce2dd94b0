"""API "Jobs, runs and drivers": the driver protocol over HTTP — claim, report, fail, push."""

import datetime as dt

import pytest
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from loopweb.runs import services
from loopweb.runs.models import Job, Run
from tests.factories import (
    CaseVersionFactory,
    CombinationFactory,
    GGConfigurationFactory,
    UserFactory,
    gg_combination,
)
from tests.runs.helpers import assert_field_error, hand_job, push_body

pytestmark = pytest.mark.django_db


def claim_over_http(api, max_jobs=1):
    response = api.post("/api/driver/claim", {"max": max_jobs}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def report(api, job_id, status):
    return api.post(f"/api/driver/jobs/{job_id}/status", {"status": status}, format="json")


@pytest.fixture
def claimed(owner, driver_api, version, combination):
    job = hand_job(owner, version, combination)
    [data] = claim_over_http(driver_api)
    assert data["id"] == job.pk
    return job


def test_claims_hand_jobs_out_in_the_order_they_were_enqueued(owner, driver_api, version):
    jobs = [hand_job(owner, version, CombinationFactory()) for _ in range(5)]

    first = claim_over_http(driver_api, 2)
    second = claim_over_http(driver_api, 2)
    third = claim_over_http(driver_api, 2)

    assert [j["id"] for j in first + second + third] == [j.pk for j in jobs]
    assert claim_over_http(driver_api, 2) == []


def test_a_retry_is_claimed_after_the_jobs_enqueued_before_it(
    owner, driver, driver_api, version, combination
):
    failing = hand_job(owner, version, combination, retry_count=1)
    [data] = claim_over_http(driver_api)
    waiting = hand_job(owner, version, CombinationFactory())
    services.fail_job(job_id=data["id"], driver=driver, failure="infrastructure")
    failing.refresh_from_db()

    claimed = claim_over_http(driver_api, 10)

    assert [j["id"] for j in claimed] == [waiting.pk, failing.retry_id]
    assert (claimed[1]["attempt"], claimed[1]["retries"]) == (2, failing.pk)


def test_a_claimed_job_is_leased_to_the_driver_with_its_cell_and_combination(
    owner, driver, driver_api, version, combination
):
    job = hand_job(owner, version, combination, retry_count=2)
    before = timezone.now()

    [data] = claim_over_http(driver_api, 5)

    lease = parse_datetime(data["leaseExpiresAt"])
    assert lease.tzinfo is not None
    assert before + dt.timedelta(seconds=120) <= lease <= timezone.now() + dt.timedelta(seconds=120)
    assert {k: data[k] for k in ("id", "status", "attempt", "retryCount", "origin")} == {
        "id": job.pk,
        "status": "pending",
        "attempt": 1,
        "retryCount": 2,
        "origin": "manual",
    }
    assert {k: data[k] for k in ("cellKey", "case", "version", "variant", "engine")} == {
        "cellKey": "jump-1@3/default/-::aider|gpt-x|acme",
        "case": "jump-1",
        "version": "3",
        "variant": "default",
        "engine": None,
    }
    assert data["combination"] == {
        "id": combination.pk,
        "kind": "harness",
        "key": "aider|gpt-x|acme",
        "label": "gpt-x via aider (acme)",
        "harness": "aider",
        "model": "gpt-x",
        "provider": "acme",
        "configuration": None,
        "bindings": {},
    }
    job.refresh_from_db()
    assert (job.status, job.lease_holder) == ("pending", driver)


def test_a_claimed_gg_job_carries_its_configuration_bindings_and_label(owner, driver_api, version):
    configuration = GGConfigurationFactory(name="pair", roles=["planner", "coder"])
    combination = gg_combination(configuration, {"planner": "big-model", "coder": "small-model"})
    hand_job(owner, version, combination, engine=None)

    [data] = claim_over_http(driver_api)

    assert data["combination"]["kind"] == "gg"
    assert data["combination"]["configuration"] == configuration.pk
    assert data["combination"]["bindings"] == {"planner": "big-model", "coder": "small-model"}
    assert data["combination"]["label"] == "pair (coder: small-model, planner: big-model)"
    assert data["cell"]["model"] == "big-model"  # the first role's model launches
    assert data["cellKey"].endswith(
        f"::gg:{configuration.pk}|gg|big-model|acme|big-model,small-model"
    )


def test_a_claimed_job_names_its_engine(owner, driver_api, combination):
    version = CaseVersionFactory(engines=["godot"])

    hand_job(owner, version, combination, engine="godot")
    [data] = claim_over_http(driver_api)

    assert data["engine"] == "godot"
    assert "/godot::" in data["cellKey"]


def test_claim_takes_at_most_one_hundred_and_at_least_one(driver_api):
    assert_field_error(driver_api.post("/api/driver/claim", {"max": 0}, format="json"), "max")
    assert_field_error(driver_api.post("/api/driver/claim", {"max": 101}, format="json"), "max")
    assert_field_error(driver_api.post("/api/driver/claim", {"max": "x"}, format="json"), "max")


def test_a_claim_without_max_takes_one_job(owner, driver_api, version):
    for _ in range(2):
        hand_job(owner, version, CombinationFactory())

    assert len(driver_api.post("/api/driver/claim", {}, format="json").json()) == 1


def test_only_drivers_use_the_driver_endpoints(owner_api, anon_api, claimed):
    for api, status in ((owner_api, 403), (anon_api, 401)):
        assert api.post("/api/driver/claim", {"max": 1}, format="json").status_code == status
        assert report(api, claimed.pk, "running").status_code == status
        fail = api.post(f"/api/driver/jobs/{claimed.pk}/fail", {"failure": "hung"}, format="json")
        assert fail.status_code == status


def test_status_reports_move_the_job_forward_and_renew_its_lease(driver_api, claimed):
    claimed.refresh_from_db()
    leases = [claimed.lease_expires_at]

    for status in ("dispatched", "starting", "running"):
        response = report(driver_api, claimed.pk, status)
        assert response.status_code == 200, response.content
        assert response.json() == {"status": status, "cancel": False}
        claimed.refresh_from_db()
        assert claimed.status == status
        leases.append(claimed.lease_expires_at)

    assert leases == sorted(leases)
    assert leases[-1] > leases[0]


def test_a_driver_may_skip_statuses(driver_api, claimed):
    assert report(driver_api, claimed.pk, "running").json()["status"] == "running"


def test_reporting_the_current_status_again_is_a_heartbeat(driver_api, claimed):
    report(driver_api, claimed.pk, "running")
    claimed.refresh_from_db()
    first_lease = claimed.lease_expires_at

    response = report(driver_api, claimed.pk, "running")

    assert response.json() == {"status": "running", "cancel": False}
    claimed.refresh_from_db()
    assert claimed.lease_expires_at >= first_lease


def test_a_driver_waiting_for_capacity_heartbeats_by_reporting_pending(driver_api, claimed):
    response = report(driver_api, claimed.pk, "pending")

    assert response.json() == {"status": "pending", "cancel": False}


@pytest.mark.parametrize(
    ("now", "back"),
    [("running", "starting"), ("starting", "dispatched"), ("dispatched", "pending")],
)
def test_a_status_report_that_moves_backwards_is_a_conflict(driver_api, claimed, now, back):
    report(driver_api, claimed.pk, now)

    response = report(driver_api, claimed.pk, back)

    assert response.status_code == 409
    assert f"already {now}" in response.json()["detail"]
    claimed.refresh_from_db()
    assert claimed.status == now


def test_a_status_report_for_a_cancelled_job_tells_the_driver_to_stop(
    owner_api, driver_api, claimed
):
    report(driver_api, claimed.pk, "running")
    assert owner_api.post(f"/api/jobs/{claimed.pk}/cancel").status_code == 200

    response = report(driver_api, claimed.pk, "running")

    assert response.status_code == 200
    assert response.json() == {"status": "canceled", "cancel": True}


def test_a_status_report_for_an_unclaimed_finished_or_unknown_job_is_refused(
    owner, driver, driver_api, version, combination, claimed
):
    queued = hand_job(owner, version, combination)
    services.fail_job(job_id=claimed.pk, driver=driver, failure="timedOut")

    assert report(driver_api, queued.pk, "running").status_code == 409
    assert report(driver_api, claimed.pk, "running").status_code == 409
    assert report(driver_api, 999999, "running").status_code == 404


def test_a_status_report_must_name_a_known_status(driver_api, claimed):
    for status in ("completed", "queued", "flying", None):
        assert_field_error(report(driver_api, claimed.pk, status), "status")


def test_another_driver_cannot_report_on_fail_or_push_a_leased_job(
    driver_api, claimed, token_client
):
    other = token_client(UserFactory(username="drv2", role="driver"))

    assert report(other, claimed.pk, "running").status_code == 409
    fail = other.post(f"/api/driver/jobs/{claimed.pk}/fail", {"failure": "hung"}, format="json")
    assert fail.status_code == 409
    assert other.post("/api/runs/", push_body(claimed), format="json").status_code == 409
    claimed.refresh_from_db()
    assert claimed.status == "pending"


def test_a_driver_fails_a_job_that_ended_without_a_run(driver_api, claimed):
    response = driver_api.post(
        f"/api/driver/jobs/{claimed.pk}/fail",
        {"failure": "timedOut", "detail": "wall clock"},
        format="json",
    )

    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["status"], data["failure"], data["run"], data["retriedBy"]) == (
        "failed",
        "timedOut",
        None,
        None,
    )
    claimed.refresh_from_db()
    assert claimed.failure_detail == "wall clock"
    assert Run.objects.count() == 0


def test_a_retryable_failure_reports_the_retry_that_replaces_the_attempt(driver_api, claimed):
    data = driver_api.post(
        f"/api/driver/jobs/{claimed.pk}/fail", {"failure": "infrastructure"}, format="json"
    ).json()

    retry = Job.objects.get(pk=data["retriedBy"])
    assert (retry.attempt, retry.status) == (2, "queued")


def test_failing_is_refused_for_a_queued_or_finished_job(
    owner, driver_api, version, combination, claimed
):
    queued = hand_job(owner, version, combination)
    url = "/api/driver/jobs/{}/fail"
    driver_api.post(url.format(claimed.pk), {"failure": "hung"}, format="json")

    again = driver_api.post(url.format(claimed.pk), {"failure": "hung"}, format="json")
    unclaimed = driver_api.post(url.format(queued.pk), {"failure": "hung"}, format="json")
    unknown = driver_api.post(url.format(999999), {"failure": "hung"}, format="json")

    assert (again.status_code, unclaimed.status_code, unknown.status_code) == (409, 409, 404)


@pytest.mark.parametrize("failure", ["completed", "lost", "", None])
def test_a_failure_must_be_an_outcome_other_than_completed(driver_api, claimed, failure):
    response = driver_api.post(
        f"/api/driver/jobs/{claimed.pk}/fail", {"failure": failure}, format="json"
    )

    assert_field_error(response, "failure")


def test_the_whole_protocol_from_claim_to_push(owner, owner_api, driver_api, version, combination):
    launched = owner_api.post(
        "/api/jobs/",
        {"case": "jump-1", "version": "3", "variant": "default", "combination": combination.pk},
        format="json",
    ).json()
    [claimed] = claim_over_http(driver_api)
    for status in ("dispatched", "starting", "running"):
        report(driver_api, claimed["id"], status)

    pushed = driver_api.post("/api/runs/", push_body(Job(pk=claimed["id"])), format="json")

    assert claimed["id"] == launched["id"]
    assert pushed.status_code == 201
    job = owner_api.get(f"/api/jobs/{launched['id']}/").json()
    assert (job["status"], job["run"]) == ("completed", pushed.json()["id"])


def test_a_driver_pushes_a_run_launched_outside_loopweb_with_its_cell(driver_api, combination):
    response = driver_api.post(
        "/api/runs/",
        push_body(
            case="jump-9", version="1", variant="default", engine=None, combination=combination.pk
        ),
        format="json",
    )

    assert response.status_code == 201, response.content
    assert response.json()["job"] is None
    assert response.json()["validatorRating"] is None  # jump-9@1 is not ingested


def test_claimed_jobs_are_whole_rows_equal_to_what_the_database_holds(
    owner, driver, version, combination
):
    # The claim reads its jobs back from one UPDATE … RETURNING: every field must come back as
    # the ORM would load it (the cell as a mapping, times as aware datetimes).
    first, second = hand_job(owner, version, combination), hand_job(owner, version, combination)

    claimed = services.claim_jobs(driver=driver, limit=5)

    assert [job.pk for job in claimed] == [first.pk, second.pk]
    for job in claimed:
        stored = Job.objects.get(pk=job.pk)
        for field in Job._meta.concrete_fields:
            assert getattr(job, field.attname) == getattr(stored, field.attname), field.name
        assert (
            isinstance(job.combination_cell, dict)
            and job.combination_cell == first.combination_cell
        )
        assert timezone.is_aware(job.lease_expires_at)
        assert job.status == "pending" and job.lease_holder == driver
