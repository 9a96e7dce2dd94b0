"""/healthz (alive), /readyz (database, migrations, a worker heard from) and /metrics
(Prometheus text, guarded in production)."""

import datetime as dt

import pytest
from django.test import Client, override_settings
from django.utils import timezone

from loopweb.ops.models import WorkerProcess
from loopweb.ops.recovery import host_key
from loopweb.runs.models import Job
from tests.factories import CaseVersionFactory, CombinationFactory
from tests.ops.test_a_lost_database_on_the_web import REFUSED, database
from tests.runs.helpers import hand_job

pytestmark = pytest.mark.django_db


def a_worker(beat_seconds_ago: float = 1.0) -> WorkerProcess:
    now = timezone.now()
    return WorkerProcess.objects.create(
        worker_id="w1",
        host="elsewhere",
        pid=1,
        started_at=now,
        beat_at=now - dt.timedelta(seconds=beat_seconds_ago),
    )


def test_healthz_answers_without_the_database():
    with database(REFUSED):
        response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ready_with_the_database_migrations_and_a_live_worker():
    a_worker()
    response = Client().get("/readyz")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["status"] == "ready"
    assert body["checks"] == {"database": "ok", "migrations": "ok", "workers": "1 alive"}


def test_readyz_is_not_ready_without_a_worker_heard_from_recently(settings):
    settings.LOOPWEB_WORKER_DEAD_AFTER = 30
    a_worker(beat_seconds_ago=45)
    response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["workers"] == "none heard from recently"
    assert response["Retry-After"]


def test_readyz_is_not_ready_without_the_database():
    with database(REFUSED):
        response = Client().get("/readyz")
    assert response.status_code == 503
    assert response.json()["checks"]["database"].startswith("unreachable")


def test_a_dead_worker_on_this_host_is_not_alive_even_with_a_fresh_heartbeat():
    now = timezone.now()
    WorkerProcess.objects.create(
        worker_id="gone", host=host_key(), pid=2**22 + 7, started_at=now, beat_at=now
    )
    assert Client().get("/readyz").json()["checks"]["workers"] == "none heard from recently"


@override_settings(DEBUG=False, LOOPWEB_METRICS_TOKEN="")
def test_metrics_are_refused_to_anyone_but_staff_in_production(owner, staff):
    anonymous = Client().get("/metrics")
    assert anonymous.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    signed_in = Client()
    signed_in.force_login(owner)
    assert signed_in.get("/metrics").status_code == 401
    signed_in.force_login(staff)
    assert signed_in.get("/metrics").status_code == 200


@override_settings(DEBUG=False, LOOPWEB_METRICS_TOKEN="s3cret-scrape-token")
def test_metrics_are_read_with_the_metrics_token():
    client = Client()
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-scrape-token")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")


@override_settings(DEBUG=True, LOOPWEB_METRICS_TOKEN="")
def test_metrics_report_jobs_queues_workers_and_requests(owner, driver_api):
    """With DEBUG on (the demo), anyone on the machine may read them."""
    a_worker()
    version, combination = CaseVersionFactory(), CombinationFactory()
    hand_job(owner, version, combination)
    hand_job(owner, version, combination)
    Job.objects.filter(pk=Job.objects.order_by("id").first().pk).update(
        created_at=timezone.now() - dt.timedelta(seconds=90)
    )
    driver_api.post("/api/driver/claim", {"max": 1}, format="json")
    text = Client().get("/metrics").content.decode()
    assert 'loopweb_jobs{status="queued"} 1.0' in text
    assert 'loopweb_jobs{status="pending"} 1.0' in text
    assert "loopweb_job_queue_depth 1.0" in text
    oldest = next(
        line for line in text.splitlines() if line.startswith("loopweb_oldest_queued_job_age")
    )
    assert 0 <= float(oldest.split()[-1]) < 90  # the older job was claimed; this one is new
    assert "loopweb_workers_alive 1.0" in text
    assert "loopweb_task_queue_depth" in text
    assert 'loopweb_http_requests_total{method="POST",route="driver-claim",status="200"}' in text
    for name in (
        "loopweb_jobs_claimed_total",
        "loopweb_runs_pushed_total",
        "loopweb_lease_expiries_total",
        "loopweb_launch_pass_seconds",
        "loopweb_progress_compute_seconds",
        "loopweb_tasks_total",
    ):
        assert name in text, name
