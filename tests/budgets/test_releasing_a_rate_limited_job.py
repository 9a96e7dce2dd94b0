"""API.md "Provider budgets": a driver releases a job the provider refused with ``rateLimited``.
The job is queued again as it was (same attempt, no retry used), its climber never blocks, and
the budget's cap halves, then grows back."""

import datetime as dt

import pytest
from django.utils import timezone

from ladders import services as ladder_services
from loopweb.runs.models import Job, ProviderBudget
from tests.budgets.helpers import budget, leased, queue
from tests.ladders.builders import PERFECT, climbers, make_ladder, progress_of, versions

pytestmark = pytest.mark.django_db


def release(api, job_id, **body):
    return api.post(
        f"/api/driver/jobs/{job_id}/release", {"reason": "rateLimited", **body}, format="json"
    )


def claim(api, n=1) -> list[dict]:
    answer = api.post("/api/driver/claim", {"max": n}, format="json")
    assert answer.status_code == 200
    return answer.json()


def test_a_released_job_goes_back_untouched_and_its_climber_never_blocks(
    owner, driver_api, run_tasks
):
    budget(max_in_flight=4)
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=1)
    ladder_services.start_dispatch(ladder=ladder)
    run_tasks()
    for _ in range(3):  # more releases than the climber has attempts
        [job] = claim(driver_api)
        assert driver_api.post(
            f"/api/driver/jobs/{job['id']}/status", {"status": "running"}, format="json"
        ).json() == {"status": "running", "cancel": False}
        answer = release(driver_api, job["id"], retryAfter=0)
        assert answer.status_code == 200, answer.json()
        assert (answer.json()["status"], answer.json()["attempt"]) == ("queued", 1)
        run_tasks()

    jobs = list(Job.objects.filter(origin__startswith=f"ladder:{ladder.pk}/"))
    assert len(jobs) == 1
    [again] = jobs
    assert (again.status, again.attempt, again.retry_id, again.failure) == ("queued", 1, None, "")
    assert (again.lease_holder_id, again.lease_expires_at, again.started_at) == (None, None, None)
    board = progress_of(ladder)
    assert board["climbers"][0]["status"] == "running"
    assert board["ladder"]["status"] != "needsAttention"

    [job] = claim(driver_api)
    pushed = driver_api.post(
        "/api/runs/",
        {"job": job["id"], "outcome": "completed", "record": PERFECT,
         "finishedAt": timezone.now().isoformat()},
        format="json",
    )  # fmt: skip
    assert pushed.status_code == 201
    run_tasks()
    assert progress_of(ladder)["climbers"][0]["status"] == "completed"


def test_a_release_halves_the_cap_and_it_recovers(owner, driver_api, staff, version, acme):
    limit = budget(max_in_flight=4)
    queue(owner, version, acme, n=8)
    first = claim(driver_api, 4)
    assert len(first) == 4

    assert release(driver_api, first[0]["id"], retryAfter=30).status_code == 200

    limit.refresh_from_db()
    body = driver_api.get(f"/api/budgets/{limit.pk}/").json()
    assert body["inFlightCap"] == 2 and body["backoff"]["factor"] == 0.5
    until = dt.datetime.fromisoformat(body["backoff"]["until"])
    assert dt.timedelta(seconds=28) < until - timezone.now() <= dt.timedelta(seconds=30)
    # Three still in flight, over the halved cap: nothing more is claimed of it.
    assert claim(driver_api, 4) == []
    assert leased() == 3

    # 25 seconds after the back-off ended, the cap has grown back by two: 4, recovered.
    ProviderBudget.objects.filter(pk=limit.pk).update(
        backoff_until=timezone.now() - dt.timedelta(seconds=25)
    )
    body = driver_api.get(f"/api/budgets/{limit.pk}/").json()
    assert body["inFlightCap"] == 4 and body["backoff"] == {"factor": 1.0, "until": None}
    assert len(claim(driver_api, 4)) == 1


def test_a_release_without_retry_after_backs_off_a_minute(owner, driver_api, version, acme):
    limit = budget(max_in_flight=6)
    queue(owner, version, acme, n=1)
    [job] = claim(driver_api)

    assert release(driver_api, job["id"]).status_code == 200

    limit.refresh_from_db()
    assert limit.backoff_cap == 3
    assert abs((limit.backoff_until - timezone.now()).total_seconds() - 60) < 2


def test_only_the_driver_holding_a_job_may_release_it(
    owner, driver_api, token_client, version, acme
):
    from tests.factories import UserFactory

    queue(owner, version, acme, n=2)
    [job] = claim(driver_api)
    stranger = token_client(UserFactory(username="other-driver", role="driver"))

    assert release(stranger, job["id"]).status_code == 409
    queued_id = Job.objects.get(status="queued").pk
    answer = release(driver_api, queued_id)
    assert answer.status_code == 409 and "not been claimed" in answer.json()["detail"]
    assert release(driver_api, 10**9).status_code == 404


def test_a_release_is_a_400_naming_a_bad_field(owner, driver_api, owner_api, version, acme):
    queue(owner, version, acme)
    [job] = claim(driver_api)

    answer = driver_api.post(
        f"/api/driver/jobs/{job['id']}/release", {"reason": "tired"}, format="json"
    )
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["reason"]
    answer = release(driver_api, job["id"], retryAfter=-1)
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["retryAfter"]
    answer = release(driver_api, job["id"], retryAfter="soon")
    assert answer.status_code == 400 and list(answer.json()["errors"]) == ["retryAfter"]
    assert release(owner_api, job["id"]).status_code == 403
