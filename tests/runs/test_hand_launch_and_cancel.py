"""API "Jobs, runs and drivers": launching a job by hand, listing jobs and cancelling one."""

import pytest

from loopweb.runs import hooks, services
from loopweb.runs.models import GGConfiguration, Job, ModelEntry
from tests.factories import CombinationFactory, GGConfigurationFactory, gg_combination
from tests.runs.helpers import assert_field_error, claim, finish, hand_job

pytestmark = pytest.mark.django_db


def launch(api, combination, /, **overrides):
    body = {"case": "jump-1", "version": "3", "variant": "default", "engine": None}
    body["combination"] = combination.pk
    return api.post("/api/jobs/", {**body, **overrides}, format="json")


def test_an_owner_launches_a_job_by_hand(owner, owner_api, version, combination):
    response = launch(owner_api, combination)

    assert response.status_code == 201, response.content
    data = response.json()
    assert {k: data[k] for k in ("status", "origin", "attempt", "retryCount", "cellKey")} == {
        "status": "queued",
        "origin": "manual",
        "attempt": 1,
        "retryCount": 1,
        "cellKey": "jump-1@3/default/-::aider|gpt-x|acme",
    }
    assert (data["run"], data["retries"], data["retriedBy"], data["finishedAt"]) == (
        None,
        None,
        None,
        None,
    )
    assert data["combination"]["key"] == "aider|gpt-x|acme"
    assert Job.objects.get().owner == owner


@pytest.mark.parametrize(("asked", "kept"), [(0, 0), (3, 3), (10, 10), (11, 10), (10**6, 10)])
def test_a_hand_launch_keeps_its_retry_count_clamped_to_ten(owner_api, combination, asked, kept):
    response = launch(owner_api, combination, retryCount=asked)

    assert response.json()["retryCount"] == kept


def test_a_negative_retry_count_is_refused(owner_api, combination):
    assert_field_error(launch(owner_api, combination, retryCount=-1), "retryCount")


def test_an_unlaunchable_combination_is_refused(owner_api):
    not_launchable = CombinationFactory(model="retired-model")
    ModelEntry.objects.filter(name="retired-model").update(launchable=False)
    not_in_catalog = CombinationFactory(model="unknown-model", catalog=False)

    body = assert_field_error(launch(owner_api, not_launchable), "combination")
    assert "not launchable" in body["errors"]["combination"][0]
    body = assert_field_error(launch(owner_api, not_in_catalog), "combination")
    assert "not in the catalog" in body["errors"]["combination"][0]
    assert Job.objects.count() == 0


def test_a_gg_combination_whose_configuration_is_gone_cannot_launch(owner_api):
    configuration = GGConfigurationFactory()
    combination = gg_combination(configuration, {"planner": "m1", "coder": "m2"})
    GGConfiguration.objects.filter(pk=configuration.pk).delete()

    body = assert_field_error(launch(owner_api, combination), "combination")

    assert "no longer exists" in body["errors"]["combination"][0]


def test_a_gg_combination_launches_with_its_first_roles_model(owner_api):
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    combination = gg_combination(configuration, {"planner": "m1", "coder": "m2"})

    data = launch(owner_api, combination).json()

    assert data["cell"] == {
        "harness": "gg",
        "model": "m1",
        "provider": "acme",
        "configuration": configuration.pk,
        "boundModels": ["m1", "m2"],
    }


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("case", "not a slug"),
        ("version", "3/4"),
        ("version", ""),
        ("variant", "has space"),
        ("engine", "a::b"),
        ("combination", 999999),
        ("combination", None),
        ("combination", "one"),
    ],
)
def test_a_hand_launch_with_a_bad_pin_or_combination_names_the_field(
    owner_api, combination, field, value
):
    assert_field_error(launch(owner_api, combination, **{field: value}), field)


def test_reviewers_and_drivers_do_not_launch(reviewer_api, driver_api, combination):
    assert launch(reviewer_api, combination).status_code == 403
    assert launch(driver_api, combination).status_code == 403


def test_the_job_list_shows_the_callers_jobs_with_filters(
    owner, owner_api, outsider, driver, version, combination
):
    mine = hand_job(owner, version, combination)
    other_cell = hand_job(owner, version, CombinationFactory())
    finished = finish(driver, hand_job(owner, version, combination)).job
    hand_job(outsider, version, combination)
    Job.objects.filter(pk=other_cell.pk).update(origin="ladder:1/d_1/r_1")

    def ids(query=""):
        response = owner_api.get(f"/api/jobs/{query}")
        assert response.status_code == 200, response.content
        return [job["id"] for job in response.json()["results"]]

    assert ids() == [mine.pk, other_cell.pk, finished.pk]
    assert ids("?status=completed") == [finished.pk]
    assert ids("?origin=ladder:1/") == [other_cell.pk]
    assert ids(f"?cellKey={mine.cell_key}") == [mine.pk, finished.pk]
    assert_field_error(owner_api.get("/api/jobs/?status=lost"), "status")


def test_an_owner_cancels_a_queued_job(owner, owner_api, version, combination):
    job = hand_job(owner, version, combination)

    response = owner_api.post(f"/api/jobs/{job.pk}/cancel")

    assert response.status_code == 200, response.content
    assert response.json()["status"] == "canceled"
    job.refresh_from_db()
    assert job.status == "canceled" and job.finished_at is not None


def test_an_owner_cancels_a_running_job_and_its_driver_is_told_to_stop(
    owner, owner_api, driver, version, combination
):
    job = claim(driver, hand_job(owner, version, combination))
    services.report_status(job_id=job.pk, driver=driver, status="running")

    owner_api.post(f"/api/jobs/{job.pk}/cancel")

    job.refresh_from_db()
    assert (job.status, job.lease_expires_at) == ("canceled", None)
    assert services.report_status(job_id=job.pk, driver=driver, status="running")[1] is True


def test_a_cancelled_job_is_neither_claimed_nor_retried(
    owner, owner_api, driver, version, combination
):
    job = hand_job(owner, version, combination, retry_count=3)

    owner_api.post(f"/api/jobs/{job.pk}/cancel")

    assert services.claim_jobs(driver=driver, limit=10) == []
    assert Job.objects.count() == 1


def test_cancelling_a_job_that_already_ended_is_a_conflict(owner, owner_api, version, combination):
    job = hand_job(owner, version, combination)
    owner_api.post(f"/api/jobs/{job.pk}/cancel")

    response = owner_api.post(f"/api/jobs/{job.pk}/cancel")

    assert response.status_code == 409
    assert "already canceled" in response.json()["detail"]


def test_a_cancel_is_announced_as_the_job_ending(owner, owner_api, version, combination):
    ended = []
    hooks.jobs_ended.connect(
        lambda sender, jobs, **kw: ended.extend((j.pk, j.status) for j in jobs), weak=False
    )
    job = hand_job(owner, version, combination)

    owner_api.post(f"/api/jobs/{job.pk}/cancel")

    assert ended == [(job.pk, "canceled")]


def test_a_gg_combination_whose_cell_key_outgrew_its_column_cannot_launch(owner_api):
    configuration = GGConfigurationFactory(roles=["a", "b", "c"])
    bindings = {role: f"{role}-" + "m" * 88 for role in ("a", "b", "c")}
    combination = gg_combination(configuration, bindings)
    ModelEntry.objects.filter(name=bindings["a"]).update(provider="p" * 100)

    body = assert_field_error(launch(owner_api, combination), "combination")

    assert "cell key" in body["errors"]["combination"][0]
    assert Job.objects.count() == 0
