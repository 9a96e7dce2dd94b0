"""Request size limits: a push (or re-push, signal list, driver report) over the configured body
limit (``LOOPWEB_MAX_BODY_BYTES``, 5 MiB by default) is refused with a 400 before it is parsed,
and stores nothing; so are bodies that lie about their length, nest without end, or carry more
form fields than Django allows. None of them is a server error."""

import json

import pytest
from django.conf import settings
from django.test import Client
from django.utils import timezone

from ladders import services
from loopweb.runs.models import Job, Run
from tests.ladders.builders import PERFECT, claim_all, climbers, make_ladder, push, versions

pytestmark = pytest.mark.django_db

LIMIT = settings.DATA_UPLOAD_MAX_MEMORY_SIZE


@pytest.fixture
def pushed(owner, driver):
    """A driver holding one job, and a run it pushed for another."""
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder)
    held, done = claim_all(driver)
    return {"job": held, "run": push(driver, done)}


def body_of_size(size: int, **fields) -> bytes:
    """A valid push body padded (inside ``record``) to exactly ``size`` bytes."""
    body = {
        "outcome": "completed",
        "record": {**PERFECT, "log": ""},
        "finishedAt": timezone.now().isoformat(),
        **fields,
    }
    pad = size - len(json.dumps(body).encode())
    body["record"]["log"] = "x" * pad
    raw = json.dumps(body).encode()
    assert len(raw) == size
    return raw


def send(api, method: str, url: str, raw: bytes, **extra):
    return api.generic(method, url, raw, content_type="application/json", **extra)


def assert_too_large(response):
    assert response.status_code == 400, response.content[:300]
    assert response.json()["code"] == "too_large"
    assert "body" in response.json()["errors"]


def test_the_default_limit_is_5_mib():
    assert LIMIT == 5 * 1024 * 1024


def test_every_push_path_refuses_a_body_over_the_limit(driver_api, pushed):
    job, run = pushed["job"], pushed["run"]
    over = LIMIT + 1
    padding = b" " * over
    requests = [
        ("POST", "/api/runs/", body_of_size(over, job=job.pk)),
        ("PUT", f"/api/runs/{run.pk}/", body_of_size(over)),
        ("POST", f"/api/runs/{run.pk}/signals", b"[" + padding + b"]"),
        ("POST", f"/api/driver/jobs/{job.pk}/fail", b'{"failure": "hung"' + padding + b"}"),
        ("POST", f"/api/driver/jobs/{job.pk}/status", b'{"status": "running"' + padding + b"}"),
        ("POST", "/api/driver/claim", b'{"max": 1' + padding + b"}"),
    ]
    for method, url, raw in requests:
        assert_too_large(send(driver_api, method, url, raw))

    assert Run.objects.filter(job=job).count() == 0
    assert Job.objects.get(pk=job.pk).status == "pending"
    assert Run.objects.get(pk=run.pk).record == PERFECT


def test_a_push_just_under_the_limit_is_stored(driver_api, pushed):
    job = pushed["job"]

    response = send(driver_api, "POST", "/api/runs/", body_of_size(LIMIT, job=job.pk))

    assert response.status_code == 201, response.content[:300]
    assert len(Run.objects.get(job=job).record["log"]) > LIMIT - 1000


def test_a_body_shorter_than_its_declared_length_is_a_400(driver_api, pushed):
    raw = body_of_size(2_000, job=pushed["job"].pk)

    response = send(driver_api, "POST", "/api/runs/", raw[:1_000], CONTENT_LENGTH="1000")

    assert response.status_code == 400
    assert Run.objects.filter(job=pushed["job"]).count() == 0


def test_a_body_nested_without_end_is_a_400(driver_api, pushed):
    raw = b'{"job": %d, "record": ' % pushed["job"].pk + b"[" * 100_000 + b"]" * 100_000 + b"}"

    response = send(driver_api, "POST", "/api/runs/", raw)

    assert response.status_code == 400
    assert Run.objects.filter(job=pushed["job"]).count() == 0


def test_a_console_form_with_too_many_fields_is_a_400(owner):
    client = Client()
    client.force_login(owner)
    fields = "&".join(f"f{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))

    response = client.post(
        "/ladders/new/", fields, content_type="application/x-www-form-urlencoded"
    )

    assert response.status_code == 400
