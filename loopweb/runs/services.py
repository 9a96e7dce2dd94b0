"""Writes of the run substrate: hand launches, the driver protocol, pushes and retries.

Every function is one transaction. Locks are taken scheduler first (through the
``attempt_ending`` signal), then job, so a Stop sweeping a dispatch's jobs and a driver ending one
of them never wait on each other in opposite orders.
"""

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from loopweb.runs import budgeting, claim, hooks
from loopweb.runs.access import is_driver, reviewable_runs
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.errors import Conflict, NotReviewable
from loopweb.runs.models import (
    IN_FLIGHT,
    NEVER_COUNTED,
    RETRYABLE_OUTCOMES,
    CancelCause,
    CaseKind,
    CaseVersion,
    ChecklistOverride,
    Combination,
    Job,
    JobStatus,
    Outcome,
    Review,
    Run,
)
from loopweb.runs.resolve import CatalogView, Unresolvable, combination_cell, launch_problem
from loopweb.runs.validators import build_loaded, fold, rate

STATUS_ORDER: dict[str, int] = {
    JobStatus.PENDING: 0,
    JobStatus.DISPATCHED: 1,
    JobStatus.STARTING: 2,
    JobStatus.RUNNING: 3,
}


def new_job(
    *,
    owner: User,
    pin: CasePin,
    combination: Combination | None,
    combination_cell: CombinationCell,
    origin: str,
    retry_count: int,
) -> Job:
    """An unsaved queued job of a cell; callers save it or bulk-create many."""
    return Job(
        owner=owner,
        **cell_fields(pin, combination, combination_cell),
        origin=origin,
        retry_count=min(max(retry_count, 0), 10),
    )


def cell_fields(
    pin: CasePin, combination: Combination | None, combination_cell: CombinationCell
) -> dict[str, Any]:
    """The fields naming the coverage cell of a pin and a combination, for a new job or run."""
    return {
        "case": pin.case,
        "version": pin.version,
        "variant": pin.variant,
        "engine": pin.engine,
        "combination": combination,
        "combination_cell": combination_cell.as_json(),
        "cell_key": cell_key(pin, combination_cell),
    }


def launch_by_hand(
    *, owner: User, pin: CasePin, combination: Combination, retry_count: int = 1
) -> Job:
    catalog = CatalogView.load([combination])
    try:
        cell = combination_cell(combination, catalog)
    except Unresolvable as exc:
        raise ValidationError({"combination": [str(exc)]}) from exc
    problem = launch_problem(combination, catalog)
    if problem:
        raise ValidationError({"combination": [f"unlaunchable: {problem}"]})
    with transaction.atomic():
        job = new_job(
            owner=owner,
            pin=pin,
            combination=combination,
            combination_cell=cell,
            origin="manual",
            retry_count=retry_count,
        )
        job.save()
    return job


def enqueue(jobs: list[Job]) -> list[Job]:
    """Store new queued jobs (from ``new_job``) in one statement."""
    created = Job.objects.bulk_create(jobs)
    return created


def cancel_job(*, job: Job) -> Job:
    with transaction.atomic():
        hooks.attempt_ending.send(sender=Job, origin=job.origin, cell_key=job.cell_key)
        # Lock the job so a driver's concurrent report or push sees the cancel, not a stale row.
        job = Job.objects.select_for_update().get(pk=job.pk)
        if not job.in_flight:
            raise Conflict(f"job {job.pk} is already {job.status}")
        mark_canceled([job], cause=CancelCause.HAND)
    return job


def lock_to_cancel(jobs: QuerySet[Job]) -> list[Job]:
    """Lock the jobs of a queryset for ``mark_canceled``, loading what it reads: a claim or a
    status report in progress lands before the cancel."""
    return list(
        jobs.select_for_update().only("id", "cell_key", "origin", "status", "attempt", "started_at")
    )


def mark_canceled(jobs: list[Job], *, cause: str, now: datetime | None = None) -> int:
    """Cancel in-flight jobs the caller has locked or filtered, stamping why (a
    ``CancelCause``); announces them as ended."""
    if not jobs:
        return 0
    now = now or timezone.now()
    ids = [job.pk for job in jobs]
    Job.objects.filter(pk__in=ids, status__in=IN_FLIGHT).update(
        status=JobStatus.CANCELED,
        cancel_cause=cause,
        finished_at=now,
        updated_at=now,
        lease_expires_at=None,
    )
    for job in jobs:
        job.status = JobStatus.CANCELED
        job.cancel_cause = cause
        job.finished_at = now
    if cause == CancelCause.DECISION:
        _count_unretried([job.pk for job in jobs if job.attempt > 1 and job.started_at is None])
    hooks.jobs_ended.send(sender=Job, jobs=jobs)
    return len(ids)


def _count_unretried(retry_ids: list[int]) -> None:
    """An attempt whose automatic retry its slot's early-stop decision cancels before it started
    was not retried: its run is kept and counts (SPEC §3), unless its outcome never counts. A
    retry cancelled any other way (by hand, by a driver, by a Stop) leaves the attempt retried."""
    if retry_ids:
        Run.objects.filter(job__retry_id__in=retry_ids, counted=False).exclude(
            outcome__in=NEVER_COUNTED
        ).update(counted=True)


def retried(job_id: int) -> bool:
    """Whether the attempt was retried: it has a retry, and that retry was not cancelled by an
    early-stop decision before it started (and then produced no run)."""
    return (
        Job.objects.filter(pk=job_id, retry__isnull=False)
        .exclude(
            retry__status=JobStatus.CANCELED,
            retry__cancel_cause=CancelCause.DECISION,
            retry__started_at__isnull=True,
            retry__run__isnull=True,
        )
        .exists()
    )


def claim_jobs(*, driver: User, limit: int) -> list[Job]:
    """Lease up to ``limit`` queued jobs to the driver, oldest first (``loopweb.runs.claim``).
    Related rows are not loaded; callers that present the jobs prefetch what they show."""
    now = timezone.now()
    expires = now + timedelta(seconds=settings.LOOPWEB_LEASE_SECONDS)
    jobs = claim.lease_queued(driver_id=driver.pk, limit=limit, now=now, expires=expires)
    for job in jobs:
        job.lease_holder = driver
    return jobs


def _driver_job(job_id: int, driver: User) -> Job:
    # Lock the job: a report, a push and a cancel of one job apply one after another.
    job = Job.objects.select_for_update().filter(pk=job_id).first()
    if job is None:
        raise Job.DoesNotExist(job_id)
    _check_lease(job, driver)
    return job


def _check_lease(job: Job, driver: User) -> None:
    if job.in_flight and job.lease_holder_id not in (None, driver.pk):
        raise Conflict(f"job {job.pk} is leased to another driver")


def report_status(*, job_id: int, driver: User, status: str) -> tuple[Job, bool]:
    """Record a driver's status report and renew its lease. Returns (job, cancel)."""
    with transaction.atomic():
        job = _driver_job(job_id, driver)
        if job.status == JobStatus.CANCELED:
            return job, True
        if not job.in_flight:
            raise Conflict(f"job {job_id} is already {job.status}")
        if job.status == JobStatus.QUEUED:
            raise Conflict(f"job {job_id} has not been claimed")
        if STATUS_ORDER[status] < STATUS_ORDER[job.status]:
            raise Conflict(f"job {job_id} is already {job.status}; it cannot go back to {status}")
        now = timezone.now()
        job.status = status
        job.lease_expires_at = now + timedelta(seconds=settings.LOOPWEB_LEASE_SECONDS)
        fields = ["status", "lease_expires_at", "updated_at"]
        if job.started_at is None and status != JobStatus.PENDING:
            job.started_at = now
            fields.append("started_at")
        job.save(update_fields=fields)
    return job, False


def fail_job(*, job_id: int, driver: User, failure: str, detail: str = "") -> Job:
    """The driver ends the attempt with no run."""
    if failure not in Outcome.values or failure == Outcome.COMPLETED:
        raise ValidationError({"failure": [f"{failure!r} is not a failure."]})
    with transaction.atomic():
        found = Job.objects.filter(pk=job_id).values_list("origin", "cell_key").first()
        if found is None:
            raise Job.DoesNotExist(job_id)
        origin, key = found
        hooks.attempt_ending.send(sender=Job, origin=origin, cell_key=key)
        job = _driver_job(job_id, driver)
        if not job.in_flight:
            raise Conflict(f"job {job_id} is already {job.status}")
        if job.status == JobStatus.QUEUED:
            raise Conflict(f"job {job_id} has not been claimed by a driver")
        end_attempt(job, outcome=failure, detail=detail)
    return job


RELEASE_REASONS = ("rateLimited",)


def release_job(*, job_id: int, driver: User, reason: str, retry_after: float | None = None) -> Job:
    """The driver hands back a job it claimed and has not started the model on, because the
    provider refused it (API.md, "Provider budgets"): the job is queued again as it was (same
    attempt, no retry used) and the budgets it is under back off."""
    if reason not in RELEASE_REASONS:
        raise ValidationError({"reason": [f"{reason!r} is not a release reason."]})
    with transaction.atomic():
        job = _driver_job(job_id, driver)
        if job.status == JobStatus.QUEUED:
            raise Conflict(f"job {job_id} has not been claimed")
        if not job.in_flight:
            raise Conflict(f"job {job_id} is already {job.status}")
        budgeting.release(job=job, now=timezone.now(), retry_after=retry_after)
    return job


def is_retried(job: Job, outcome: str) -> bool:
    """Whether an in-flight attempt ending with ``outcome`` gets an automatic retry."""
    return outcome in RETRYABLE_OUTCOMES and job.attempt <= job.retry_count


def end_attempt(job: Job, *, outcome: str, detail: str = "") -> Job | None:
    """Make a locked, in-flight attempt terminal; enqueue its automatic retry first.

    The retry is created and stamped on the attempt before the attempt becomes terminal, in the
    same transaction, so a launch pass sees either the attempt in flight or its retry in flight.
    Returns the retry, if any.
    """
    now = timezone.now()
    retry = None
    if is_retried(job, outcome):
        retry = Job.objects.create(
            owner_id=job.owner_id,
            **job.cell_fields(),
            origin=job.origin,
            retry_count=job.retry_count,
            attempt=job.attempt + 1,
        )
        job.retry = retry
    if outcome == Outcome.COMPLETED:
        job.status = JobStatus.COMPLETED
        job.failure = ""
    else:
        job.status = JobStatus.FAILED
        job.failure = outcome
    job.failure_detail = detail
    job.finished_at = now
    job.lease_expires_at = None
    job.save(
        update_fields=[
            "retry",
            "status",
            "failure",
            "failure_detail",
            "finished_at",
            "lease_expires_at",
            "updated_at",
        ]
    )
    if retry is not None:
        hooks.retry_enqueued.send(sender=Job, retry=retry, attempt=job)
    else:
        hooks.jobs_ended.send(sender=Job, jobs=[job])
    return retry


def expire_leases(*, now: datetime | None = None) -> int:
    """End every attempt whose lease ran out as ``infrastructure`` (retrying it if it may)."""
    now = now or timezone.now()
    expired = list(
        Job.objects.filter(status__in=IN_FLIGHT[1:], lease_expires_at__lt=now).values_list(
            "pk", "origin", "cell_key"
        )
    )
    ended = 0
    for job_id, origin, key in expired:
        with transaction.atomic():
            hooks.attempt_ending.send(sender=Job, origin=origin, cell_key=key)
            job = (
                Job.objects.select_for_update(skip_locked=True)
                .filter(pk=job_id, status__in=IN_FLIGHT[1:], lease_expires_at__lt=now)
                .first()
            )
            if job is None:
                continue
            end_attempt(job, outcome=Outcome.INFRASTRUCTURE, detail="lease expired")
            ended += 1
    return ended


class VersionChecklist(NamedTuple):
    """What the validators read of a run's case version: whether they rate its runs (SPEC §4)
    and its checklist."""

    rated: bool
    checklist: list[dict[str, Any]]


def version_checklist(pin: CasePin) -> VersionChecklist | None:
    """The case version's checklist, or None when the backend does not hold the version."""
    found = CaseVersion.objects.filter(case__slug=pin.case, version=pin.version).values_list(
        "case__kind", "legacy", "checklist"
    )[:1]  # (case, version) is unique
    if not found:
        return None
    [(kind, legacy, checklist)] = found
    return VersionChecklist(kind == CaseKind.FUNCTIONAL and not legacy, checklist)


def ratings(
    version: VersionChecklist | None,
    outcome: str,
    record: Mapping[str, Any],
    overrides: Mapping[str, bool],
) -> tuple[str | None, str | None]:
    """A run's validator rating, and its stored rating: the same rule over the record with the
    reviewers' overrides (item id -> passed) folded in. Both None when the validators do not rate
    the run."""
    if outcome != Outcome.COMPLETED or version is None or not version.rated:
        return None, None
    return rate(record, version.checklist), rate(fold(record, overrides), version.checklist)


def standing_overrides(run_id: int) -> dict[str, bool]:
    """The override that stands for each item of the run: the latest, whoever made it."""
    rows = ChecklistOverride.objects.filter(run_id=run_id).order_by("id")
    return dict(rows.values_list("item", "passed"))


def push_run(
    *,
    pushed_by: User,
    outcome: str,
    record: Mapping[str, Any],
    finished_at: datetime,
    job_id: int | None = None,
    pin: CasePin | None = None,
    combination: Combination | None = None,
    commit: str = "",
    merge_artifact: str = "",
    payload: Mapping[str, Any] | None = None,
) -> tuple[Run, bool]:
    """Store a run pushed for a job, or for a cell launched outside Loopweb.

    A second push for a job that already has its run rewrites that run (a driver retrying its
    own call must not create a second run). Returns (run, created).

    The whole transaction, step by step with each hook's consumers in order and the locks each
    takes: ``loopweb.pipeline.consumers.PUSH``.
    """
    report = Report(outcome, record, finished_at, commit, merge_artifact)
    with transaction.atomic():
        if job_id is not None:
            found = Job.objects.filter(pk=job_id).values_list("origin", "cell_key").first()
            if found is None:
                raise ValidationError(
                    {"job": [ValidationError(f"job {job_id} does not exist", "does_not_exist")]}
                )
            origin, key = found
            hooks.attempt_ending.send(sender=Job, origin=origin, cell_key=key)
            job = Job.objects.select_for_update().get(pk=job_id)
            # A job's run is stored in the transaction that ends its attempt, under this lock, so
            # an attempt still in flight has none. Otherwise a query of its own, after the lock:
            # a run committed by a concurrent push of this job is visible to it, where a join in
            # the locking query would read the older snapshot. Locked like a re-push locks it,
            # so rewrites of one run apply whole, one at a time.
            existing = (
                None if job.in_flight else Run.objects.select_for_update().filter(job=job).first()
            )
            if existing is not None:
                run = _rewrite(existing, report)
                hooks.run_pushed.send(sender=Run, run=run, created=False, payload=payload or {})
                return run, False
            if job.status == JobStatus.QUEUED:
                raise Conflict(f"job {job_id} has not been claimed by a driver")
            if is_driver(pushed_by):
                _check_lease(job, pushed_by)
            if not job.in_flight and job.status != JobStatus.CANCELED:
                raise Conflict(f"job {job_id} already ended {job.status} without this run")
            if job.status == JobStatus.CANCELED and job.attempt > 1:
                # A retry an early-stop decision cancelled before it started ran after all: the
                # attempt it retries was retried, and its run is left out in favour of this one.
                Run.objects.filter(job__retry=job, counted=True).update(counted=False)
            run = Run(job=job, owner_id=job.owner_id, **job.cell_fields())
        else:
            assert pin is not None and combination is not None, "a push names its job or cell"
            catalog = CatalogView.load([combination])
            try:
                cell = combination_cell(combination, catalog)
            except Unresolvable as exc:
                raise ValidationError({"combination": [str(exc)]}) from exc
            job = None
            run = Run(owner=pushed_by, **cell_fields(pin, combination, cell))
        run.pushed_by = pushed_by
        _fill(run, report)
        attempt = job if job is not None and job.in_flight else None
        retried = attempt is not None and is_retried(attempt, outcome)
        run.counted = outcome not in NEVER_COUNTED and not retried
        hooks.run_pushing.send(sender=Run, run=run, payload=payload or {})
        run.save()
        if attempt is not None:
            retry = end_attempt(attempt, outcome=outcome)
            if retry is not None and retry.cancel_cause == CancelCause.DECISION:
                # Its slot was decided early: the retry never runs, and this run is kept.
                run.counted = outcome not in NEVER_COUNTED
        hooks.run_pushed.send(sender=Run, run=run, created=True, payload=payload or {})
    return run, True


def repush_run(
    *,
    run: Run,
    outcome: str,
    record: Mapping[str, Any],
    finished_at: datetime,
    commit: str = "",
    merge_artifact: str = "",
    payload: Mapping[str, Any] | None = None,
) -> Run:
    with transaction.atomic():
        # Lock the run: two re-pushes of one run apply whole, one after the other.
        run = Run.objects.select_for_update().get(pk=run.pk)
        run = _rewrite(run, Report(outcome, record, finished_at, commit, merge_artifact))
        hooks.run_pushed.send(sender=Run, run=run, created=False, payload=payload or {})
    return run


class Report(NamedTuple):
    """What a push says of its run."""

    outcome: str
    record: Mapping[str, Any]
    finished_at: datetime
    commit: str
    merge_artifact: str


def _fill(run: Run, report: Report) -> None:
    outcome, record, finished_at, commit, merge_artifact = report
    run.outcome = outcome
    run.record = dict(record)
    run.finished_at = finished_at
    run.commit = commit or ""
    run.merge_artifact = merge_artifact or ""
    run.build_loaded = build_loaded(record)
    pin = CasePin(run.case, run.version, run.variant, run.engine)
    # A re-push keeps the overrides the run has (its caller holds the run's lock).
    overrides = standing_overrides(run.pk) if run.pk is not None else {}
    run.validator_rating, run.stored_rating = ratings(
        version_checklist(pin), outcome, record, overrides
    )


def _rewrite(run: Run, report: Report) -> Run:
    _fill(run, report)
    run.counted = report.outcome not in NEVER_COUNTED and not (
        run.job_id is not None and retried(run.job_id)
    )
    run.save()
    return run


def _may_review(reviewer: User, run: Run) -> None:
    if not reviewable_runs(reviewer).filter(pk=run.pk).exists():
        raise NotReviewable(f"No run {run.pk} to review.")


def review_run(
    *,
    run: Run,
    reviewer: User,
    aesthetic_rating: int,
    writeup: str,
    verdict: str = "",
    values: dict[str, Any] | None = None,
) -> Review:
    """``values``: answers to a ladder's rubric, checked by the caller against it."""
    with transaction.atomic():
        _may_review(reviewer, run)
        try:
            # The unique constraint, not a prior check, decides between two concurrent reviews.
            with transaction.atomic():
                review = Review.objects.create(
                    run=run,
                    reviewer=reviewer,
                    aesthetic_rating=aesthetic_rating,
                    writeup=writeup,
                    verdict=verdict or "",
                    values=values or {},
                )
        except IntegrityError:
            raise Conflict(f"you have already reviewed run {run.pk}") from None
        hooks.run_reviewed.send(sender=Review, review=review)
    return review


def edit_review(
    *,
    run: Run,
    reviewer: User,
    aesthetic_rating: int,
    writeup: str,
    verdict: str = "",
    values: dict[str, Any] | None = None,
) -> Review:
    """A reviewer corrects their own review. A changed verdict is recorded as a new referee
    verdict (the latest one is read); the earlier one stays in the run's history. ``values``
    (checked by the caller) replace the review's rubric answers; None keeps them."""
    with transaction.atomic():
        _may_review(reviewer, run)
        # Locked so two corrections of one review apply one after the other.
        review = Review.objects.select_for_update().filter(run=run, reviewer=reviewer).first()
        if review is None:
            raise Conflict(f"you have not reviewed run {run.pk}")
        new_verdict = (verdict or "") != review.verdict
        review.aesthetic_rating = aesthetic_rating
        review.writeup = writeup
        review.verdict = verdict or ""
        if values is not None:
            review.values = values
        review.save(update_fields=["aesthetic_rating", "writeup", "verdict", "values"])
        if new_verdict and review.verdict:
            hooks.run_reviewed.send(sender=Review, review=review)
    return review
