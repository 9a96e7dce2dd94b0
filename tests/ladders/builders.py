"""Building ladders and driving their jobs in tests."""

from collections.abc import Callable

from django.utils import timezone

from ladders import services
from ladders.bodies import ladder_body, rung_body
from ladders.models import Ladder
from loopweb.runs import services as run_services
from loopweb.runs.cells import CasePin
from loopweb.runs.models import Job, JobStatus, Run
from loopweb.runs.resolve import CatalogView, combination_cell
from tests.factories import CaseFactory, CaseVersionFactory, CombinationFactory
from tests.runs.helpers import BROKEN, PERFECT

UNLOADED = {**PERFECT, "toolchain": {"build": "ok", "loaded": False}}
UNRATABLE = PERFECT  # rated once its version is ingested


def versions(n: int, prefix: str = "step"):
    return [
        CaseVersionFactory(case=CaseFactory(slug=f"{prefix}-{i + 1}"), version="1")
        for i in range(n)
    ]


def climbers(n: int, prefix: str = "m"):
    return [CombinationFactory(model=f"{prefix}{i + 1}") for i in range(n)]


def config(**overrides) -> dict:
    """The standard ladder (``ladders.bodies.ladder_body``) with ``overrides``; a partial
    ``gate`` is laid over the gate's defaults."""
    return ladder_body(gate_given=overrides.pop("gate", None), **overrides)


def rung(version, runs=None, engine=None, variant="default") -> dict:
    return rung_body(version.case.slug, version.version, variant=variant, engine=engine, runs=runs)


def make_ladder(owner, rung_versions, combos, **overrides) -> Ladder:
    rungs = overrides.pop("rungs", None) or [rung(v) for v in rung_versions]
    data = config(rungs=rungs, combinations=[c.pk for c in combos], **overrides)
    return services.save_ladder(owner=owner, data=data)


def queued(ladder: Ladder | None = None):
    jobs = Job.objects.filter(status=JobStatus.QUEUED).order_by("id")
    if ladder is not None:
        jobs = jobs.filter(origin__startswith=f"ladder:{ladder.pk}/")
    return list(jobs)


def in_flight(ladder: Ladder):
    return list(
        Job.objects.filter(
            origin__startswith=f"ladder:{ladder.pk}/",
            status__in=["queued", "pending", "dispatched", "starting", "running"],
        ).order_by("id")
    )


def work(
    driver,
    run_tasks,
    record: dict | Callable[[Job], object] = PERFECT,
    *,
    limit: int = 100,
    rounds: int = 50,
) -> list[Run]:
    """Act as a driver until nothing is queued: claim, push a run (or fail), run the passes.

    ``record`` is a run record, or a function of the job returning a record, an outcome word,
    or a (outcome, record) pair.
    """
    runs = []
    run_tasks()
    for _ in range(rounds):
        jobs = run_services.claim_jobs(driver=driver, limit=limit)
        if not jobs:
            break
        for job in jobs:
            result = record(job) if callable(record) else record
            outcome, body = "completed", result
            if isinstance(result, str):
                outcome, body = result, {}
            elif isinstance(result, tuple):
                outcome, body = result
            if outcome == "infrastructure" and not body:
                run_services.fail_job(job_id=job.pk, driver=driver, failure=outcome)
                continue
            run, _ = run_services.push_run(
                pushed_by=driver,
                job_id=job.pk,
                outcome=outcome,
                record=body,
                finished_at=timezone.now(),
            )
            runs.append(run)
        run_tasks()
    return runs


# Helpers for the seed-heading modules -------------------------------------------------------


def climber_of(body: dict, key: str) -> dict:
    return next(c for c in body["climbers"] if c["key"] == key)


def slot_statuses(body: dict) -> list[list[str]]:
    return [[s["status"] for s in c["slots"]] for c in body["climbers"]]


def outside(
    pushed_by,
    version,
    combination,
    record=PERFECT,
    *,
    outcome: str = "completed",
    engine: str | None = None,
    variant: str = "default",
    finished_at=None,
) -> Run:
    """Push a run launched outside Loopweb for a cell (no job)."""
    run, _ = run_services.push_run(
        pushed_by=pushed_by,
        pin=CasePin(version.case.slug, version.version, variant, engine),
        combination=combination,
        outcome=outcome,
        record=record,
        finished_at=finished_at or timezone.now(),
    )
    return run


def foreign_job(owner, version, combination, origin: str, *, engine=None, retry_count=1) -> Job:
    """A queued job of a cell enqueued by someone else: a coverage plan or another scheduler."""
    catalog = CatalogView.load([combination])
    job = run_services.new_job(
        owner=owner,
        pin=CasePin(version.case.slug, version.version, "default", engine),
        combination=combination,
        combination_cell=combination_cell(combination, catalog),
        origin=origin,
        retry_count=retry_count,
    )
    job.save()
    return job


def set_status(driver, job: Job, status: str) -> Job:
    """Claim the job if needed and move it to ``status`` (dispatched, starting or running)."""
    job.refresh_from_db()
    if job.status == JobStatus.QUEUED:
        run_services.claim_jobs(driver=driver, limit=10_000)
    run_services.report_status(job_id=job.pk, driver=driver, status=status)
    job.refresh_from_db()
    return job


def push_run_of(
    driver, job: Job, record=PERFECT, *, outcome: str = "completed", finished_at=None
) -> Run:
    """Claim the job if needed and push its run."""
    job.refresh_from_db()
    if job.status == JobStatus.QUEUED:
        run_services.claim_jobs(driver=driver, limit=10_000)
    return push(driver, job, outcome, record, finished_at=finished_at)


def fail_attempt(driver, job: Job, failure: str = "infrastructure") -> Job:
    """Claim the job if needed and end it with no run."""
    job.refresh_from_db()
    if job.status == JobStatus.QUEUED:
        run_services.claim_jobs(driver=driver, limit=10_000)
    run_services.fail_job(job_id=job.pk, driver=driver, failure=failure)
    job.refresh_from_db()
    return job


def api_ladder(api, **overrides) -> dict:
    """POST /api/ladders/ with the given configuration; returns the created ladder."""
    response = api.post("/api/ladders/", config(**overrides), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


__all__ = ["BROKEN", "PERFECT", "UNLOADED"]


# Driving single jobs and reading a dispatch (seed-heading modules) --------------------------


def claim_all(driver) -> list[Job]:
    """Lease every queued job to the driver, oldest first."""
    return run_services.claim_jobs(driver=driver, limit=10_000)


def push(driver, job: Job, outcome: str = "completed", record: dict | None = None, **kwargs):
    """Push the run of a job the driver has claimed."""
    run, _ = run_services.push_run(
        pushed_by=driver,
        job_id=job.pk,
        outcome=outcome,
        record=PERFECT if record is None else record,
        finished_at=kwargs.pop("finished_at", None) or timezone.now(),
        **kwargs,
    )
    return run


def fail(driver, job: Job, failure: str = "infrastructure") -> Job:
    """End a claimed job with no run."""
    return run_services.fail_job(job_id=job.pk, driver=driver, failure=failure)


def dispatch_of(ladder: Ladder):
    from ladders.models import Dispatch

    return Dispatch.objects.get(ladder_id=ladder.pk)


def progress_of(ladder: Ladder) -> dict:
    """The progress board, read afresh (the selector the API view renders)."""
    from ladders import selectors

    return selectors.ladder_progress(Ladder.objects.get(pk=ladder.pk))


def ready_passes(ladder: Ladder) -> int:
    """Launch passes of this ladder queued as background tasks and not yet run."""
    from django_tasks_db.models import DBTaskResult

    from ladders.tasks import launch_pass

    return sum(
        1
        for args in DBTaskResult.objects.filter(
            task_path=launch_pass.module_path, status="READY"
        ).values_list("args_kwargs", flat=True)
        if args["args"] == [ladder.pk]
    )


def ladder_jobs(ladder: Ladder, **filters) -> list[Job]:
    """Every job the ladder's dispatches launched, oldest first."""
    return list(
        Job.objects.filter(origin__startswith=f"ladder:{ladder.pk}/", **filters).order_by("id")
    )


def stopped_mid_climb(
    owner, driver, run_tasks, *, cancel_running: bool = False, prefix: str = "step"
) -> Ladder:
    """A two-rung dispatch of four climbers stopped mid-climb (retryCount 0): m1 had completed,
    m2 had failed rung 1, m3 was running rung 2 (its job running) and m4 was blocked at rung 1
    (failing). Each rung's target is one run."""
    ladder = make_ladder(owner, versions(2, prefix=prefix), climbers(4), retryCount=0)
    services.start_dispatch(ladder=ladder, by=owner)
    run_tasks()
    first = {job.combination.model: job for job in claim_all(driver)}
    push(driver, first["m1"])
    push(driver, first["m2"], record=BROKEN)
    push(driver, first["m3"])
    fail(driver, first["m4"])
    run_tasks()
    second = {job.combination.model: job for job in claim_all(driver)}
    push(driver, second["m1"])
    set_status(driver, second["m3"], "running")
    run_tasks()
    services.stop_dispatch(ladder=ladder, cancel_running=cancel_running, by=owner)
    return ladder
