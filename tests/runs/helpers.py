import datetime as dt

from django.utils import timezone

from loopweb.runs import services
from loopweb.runs.cells import CasePin
from loopweb.runs.models import Job

PERFECT = {
    "checklist": {"starts": True, "jump": True, "score": True, "music": True, "pause": True},
    "toolchain": {"build": "ok", "loaded": True},
}
BROKEN = {
    "checklist": {"starts": False, "jump": False},
    "toolchain": {"build": "ok", "loaded": True},
}


def pin_of(version, variant="default", engine=None) -> CasePin:
    return CasePin(version.case.slug, version.version, variant, engine)


def hand_job(owner, version, combination, retry_count=1, **pin_kwargs) -> Job:
    return services.launch_by_hand(
        owner=owner,
        pin=pin_of(version, **pin_kwargs),
        combination=combination,
        retry_count=retry_count,
    )


def claim(driver, job: Job) -> Job:
    """Claim jobs until ``job`` is leased to the driver."""
    for _ in range(1000):
        claimed = services.claim_jobs(driver=driver, limit=50)
        if any(j.pk == job.pk for j in claimed) or not claimed:
            break
    job.refresh_from_db()
    assert job.status == "pending", job.status
    return job


def finish(driver, job: Job, outcome="completed", record=None, finished_at=None):
    """Claim the job if it is queued, then push its run."""
    job.refresh_from_db()
    if job.status == "queued":
        claim(driver, job)
    run, _ = services.push_run(
        pushed_by=driver,
        job_id=job.pk,
        outcome=outcome,
        record=PERFECT if record is None else record,
        finished_at=finished_at or timezone.now(),
    )
    return run


def at(minutes: int) -> dt.datetime:
    return timezone.now().replace(microsecond=0) + dt.timedelta(minutes=minutes)


def outside_run(pushed_by, version, combination, outcome="completed", record=None, **kwargs):
    """Push a run launched outside Loopweb, naming its cell instead of a job."""
    run, _ = services.push_run(
        pushed_by=pushed_by,
        pin=pin_of(version, variant=kwargs.pop("variant", "default")),
        combination=combination,
        outcome=outcome,
        record=PERFECT if record is None else record,
        finished_at=kwargs.pop("finished_at", None) or timezone.now(),
        **kwargs,
    )
    return run


def push_body(job=None, outcome="completed", record=None, finished_at=None, **extra) -> dict:
    """A POST /api/runs/ body."""
    body = {
        "outcome": outcome,
        "record": PERFECT if record is None else record,
        "finishedAt": (finished_at or timezone.now()).isoformat(),
        **extra,
    }
    if job is not None:
        body["job"] = job.pk
    return body


def assert_field_error(response, field: str, status: int = 400) -> dict:
    """A 400 in the contract's shape whose errors name ``field``."""
    assert response.status_code == status, (response.status_code, response.content)
    body = response.json()
    assert isinstance(body["detail"], str) and body["detail"]
    assert field in body["errors"], body
    assert all(isinstance(m, str) for m in body["errors"][field])
    return body
