from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce

from loopweb.runs import outcomes

from .fields import user_reference


class JobStatus(models.TextChoices):
    QUEUED = "queued"
    PENDING = "pending"
    DISPATCHED = "dispatched"
    STARTING = "starting"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELED = "canceled"


IN_FLIGHT = (
    JobStatus.QUEUED,
    JobStatus.PENDING,
    JobStatus.DISPATCHED,
    JobStatus.STARTING,
    JobStatus.RUNNING,
)
#: Jobs a driver has not yet handed to an execution host: a plain Stop cancels these.
NOT_STARTED = (JobStatus.QUEUED, JobStatus.PENDING)
#: Jobs under way on a host: only Stop and cancel running reaches these.
UNDER_WAY = (JobStatus.DISPATCHED, JobStatus.STARTING, JobStatus.RUNNING)


class CancelCause(models.TextChoices):
    """Why a job was cancelled: only a cancel by its slot's early-stop decision keeps the run of
    the attempt it retries (SPEC §3, "Which runs count")."""

    HAND = "hand"  # its owner cancelled it (POST /api/jobs/{id}/cancel)
    STOP = "stop"  # its ladder's dispatch was stopped (or replaced) before or as it was enqueued
    DECISION = "decision"  # its slot was decided by an early-stop decision


class Outcome(models.TextChoices):
    COMPLETED = outcomes.COMPLETED
    CATASTROPHIC = outcomes.CATASTROPHIC
    TIMED_OUT = outcomes.TIMED_OUT
    HARNESS_ERROR = outcomes.HARNESS_ERROR
    LIMIT_EXCEEDED = outcomes.LIMIT_EXCEEDED
    HUNG = outcomes.HUNG
    INFRASTRUCTURE = outcomes.INFRASTRUCTURE
    CANCELED = outcomes.CANCELED


class Rating(models.TextChoices):
    FLAWLESS = outcomes.FLAWLESS
    GREAT = outcomes.GREAT
    PASSABLE = outcomes.PASSABLE
    SCUFFED = outcomes.SCUFFED
    BROKEN = outcomes.BROKEN


class CellFields(models.Model):
    """The coverage cell a job or run belongs to: a case pin and a combination cell, and the
    coverage cell's key. The API shows ``combination_cell`` as ``cell``."""

    case = models.CharField(max_length=100)
    version = models.CharField(max_length=64)
    variant = models.CharField(max_length=64)
    engine = models.CharField(max_length=64, null=True, blank=True)
    combination = models.ForeignKey(
        "runs.Combination", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    combination_cell = models.JSONField(default=dict)
    cell_key = models.CharField(max_length=700)

    class Meta:
        abstract = True

    def cell_fields(self) -> dict:
        """These fields' values, to give a job's retry or run the same cell."""
        return {name: getattr(self, name) for name in CELL_FIELDS}


#: ``CellFields``' fields by attribute name.
CELL_FIELDS = (
    "case",
    "version",
    "variant",
    "engine",
    "combination_id",
    "combination_cell",
    "cell_key",
)


class Job(CellFields):
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="jobs"
    )
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    origin = models.CharField(max_length=300, default="manual")
    retry_count = models.PositiveSmallIntegerField(default=1, validators=[MaxValueValidator(10)])
    attempt = models.PositiveSmallIntegerField(default=1)
    # Stamped on a failed attempt in the transaction that ends it: the attempt that retries it.
    retry = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retry_of"
    )
    failure = models.CharField(max_length=32, blank=True)
    failure_detail = models.TextField(blank=True)
    # Stamped with its status by the cancel that ends a job ``canceled``; blank otherwise.
    cancel_cause = models.CharField(max_length=16, choices=CancelCause.choices, blank=True)
    lease_holder = user_reference("leased_jobs")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # When a driver first reported it handed the job to an execution host (dispatched or later).
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            models.Index(
                fields=["cell_key"], name="job_cell_in_flight", condition=Q(status__in=IN_FLIGHT)
            ),
            models.Index(fields=["cell_key", "status"], name="job_cell_status"),
            models.Index(
                fields=["origin"], name="job_origin_prefix", opclasses=["varchar_pattern_ops"]
            ),
            # A ladder's jobs in flight by origin prefix, read on every progress poll.
            models.Index(
                fields=["origin"],
                name="job_origin_in_flight",
                opclasses=["varchar_pattern_ops"],
                condition=Q(status__in=IN_FLIGHT),
            ),
            models.Index(fields=["id"], name="job_queued", condition=Q(status="queued")),
            models.Index(
                fields=["lease_expires_at"],
                name="job_lease",
                condition=Q(status__in=IN_FLIGHT[1:]),
            ),
            models.Index(fields=["owner", "-id"], name="job_owner"),
            # A claim under provider budgets: the oldest queued jobs of each origin and
            # combination (a skip scan), and the jobs drivers hold, by combination.
            models.Index(
                F("origin"),
                Coalesce("combination", Value(0)),
                F("id"),
                name="job_queued_by_origin",
                condition=Q(status="queued"),
            ),
            models.Index(
                fields=["combination"],
                name="job_leased_by_combination",
                condition=Q(status__in=IN_FLIGHT[1:]),
            ),
        ]

    def __str__(self) -> str:
        return f"job {self.pk} {self.cell_key} ({self.status})"

    @property
    def in_flight(self) -> bool:
        return self.status in IN_FLIGHT


class Run(CellFields):
    job = models.OneToOneField(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="run"
    )
    owner = user_reference("owned_runs")
    pushed_by = user_reference("pushed_runs")
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    record = models.JSONField(default=dict, blank=True)
    build_loaded = models.BooleanField(null=True, blank=True)
    validator_rating = models.CharField(
        max_length=16, choices=Rating.choices, null=True, blank=True
    )
    # The validator rating with every reviewer's checklist overrides folded in (seed 004): shown
    # beside it, never read by the gate.
    stored_rating = models.CharField(max_length=16, choices=Rating.choices, null=True, blank=True)
    # Whether the run counts for its cell: not infrastructure, not canceled, attempt not retried.
    counted = models.BooleanField(default=False)
    published = models.BooleanField(default=False)
    finished_at = models.DateTimeField()
    commit = models.CharField(max_length=200, blank=True)
    merge_artifact = models.CharField(max_length=200, blank=True)
    acceptance_rule = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-finished_at", "-id"]
        indexes = [
            models.Index(
                fields=["cell_key", "finished_at", "id"],
                name="run_counted_in_cell",
                condition=Q(counted=True),
            ),
            models.Index(fields=["cell_key"], name="run_cell"),
            models.Index(fields=["commit"], name="run_commit", condition=~Q(commit="")),
            models.Index(
                fields=["merge_artifact"], name="run_merge", condition=~Q(merge_artifact="")
            ),
            models.Index(fields=["created_at"], name="run_created"),
        ]

    def __str__(self) -> str:
        return f"run {self.pk} {self.cell_key} ({self.outcome})"


class ReviewVerdict(models.TextChoices):
    ACCEPT = "accept"
    REJECT = "reject"


class Review(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviews"
    )
    aesthetic_rating = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(1), MaxValueValidator(5)]
    )
    writeup = models.TextField(blank=True)
    verdict = models.CharField(max_length=8, choices=ReviewVerdict.choices, blank=True)
    # Answers to the rubric of the ladder whose queue the review was taken from: {criterion id:
    # number | label | boolean} (empty without a rubric).
    values = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "reviewer"], name="one_review_per_reviewer"),
        ]

    def __str__(self) -> str:
        return f"review of run {self.run_id} by {self.reviewer}"
