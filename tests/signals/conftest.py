import datetime as dt

import pytest

from loopweb.runs.models import Run
from tests.factories import CaseVersionFactory, CombinationFactory
from tests.runs.helpers import claim, finish, hand_job

FINISHED = dt.datetime(2026, 3, 1, 12, 0, tzinfo=dt.UTC)


def iso(moment: dt.datetime) -> str:
    return moment.isoformat()


#: Give a field this value to leave it out of a body.
DROP = object()


def signal(**fields) -> dict:
    """A valid signal in seed 000's format; keyword arguments override fields or DROP them."""
    body = {
        "id": "tests-1",
        "kind": "verdict",
        "name": "tests",
        "value": "pass",
        "observed_at": iso(FINISHED + dt.timedelta(minutes=5)),
        "tier": "verified",
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not DROP}


def assert_400(response, field: str, code: str | None = None) -> dict:
    """A 400 whose errors name ``field`` (and, when given, whose code is ``code``)."""
    assert response.status_code == 400, (response.status_code, response.content)
    body = response.json()
    assert field in body["errors"], body
    assert body["detail"]
    if code is not None:
        assert body.get("code") == code, body
    return body


@pytest.fixture
def version(db):
    return CaseVersionFactory()


@pytest.fixture
def combination(db):
    return CombinationFactory()


@pytest.fixture
def make_run(owner, driver, version, combination):
    """A run of a job launched by ``who`` (the owner by default), finished at FINISHED."""

    def make(who=None, **fields) -> Run:
        job = hand_job(who or owner, version, combination)
        run = finish(driver, job, finished_at=FINISHED)
        if fields:
            Run.objects.filter(pk=run.pk).update(**fields)
            run.refresh_from_db()
        return run

    return make


@pytest.fixture
def run(make_run):
    return make_run()


@pytest.fixture
def claimed_job(owner, driver, version, combination):
    """A job of the owner's, claimed by the driver and ready for a push."""
    return claim(driver, hand_job(owner, version, combination))


@pytest.fixture
def push(driver_api):
    """Push a run for a job through the API, with extra payload keys."""

    def do(job, record=None, client=None, method="post", run_id=None, **extra):
        body = {
            "job": job.pk,
            "outcome": "completed",
            "record": record if record is not None else {},
            "finishedAt": iso(FINISHED),
            **extra,
        }
        client = client or driver_api
        if method == "put":
            return client.put(f"/api/runs/{run_id}/", body, format="json")
        return client.post("/api/runs/", body, format="json")

    return do


def signals_url(run) -> str:
    return f"/api/runs/{run.pk}/signals"
