from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from evalsets import verdict
from evalsets.policy import BASELINE_KINDS, Policy, parse_policy
from evalsets.verdict import COST_STATUSES, VERDICTS
from loopweb.runs.models.fields import Named, user_reference, word_choices


class Evalset(Named):
    """A named set of case pins. Shared like the catalog: owners and staff create them."""

    # In the order given; the hash is taken over the pins in canonical (sorted) order.
    pins = models.JSONField()
    hash = models.CharField(max_length=64, unique=True)
    created_by = user_reference()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.name} ({self.hash})"


class EvalsetRun(models.Model):
    """One journaled summary of an evalset."""

    evalset = models.ForeignKey(Evalset, on_delete=models.CASCADE, related_name="runs")
    journaled_at = models.DateTimeField(default=timezone.now)
    summary = models.JSONField()
    journaled_by = user_reference()
    # When the server recorded the run; ``journaled_at`` is the client's date, for display and
    # ordering. The gate judges what came before a proposal by this one.
    recorded_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-journaled_at", "-id"]
        indexes = [
            models.Index(fields=["evalset", "journaled_at", "id"], name="evalset_run_journaled"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(summary__has_keys=["passed", "failed"]),
                name="evalset_run_counts",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.evalset.hash} at {self.journaled_at:%Y-%m-%d %H:%M:%S}"

    def value(self, field: str):
        return verdict.value(self.summary, field)


class AuthoredBy(models.TextChoices):
    LLM = "llm"
    HUMAN = "human"


class GateOutcome(models.TextChoices):
    """How the gate closed a proposal."""

    MEASURED = "measured"
    NO_BASELINE = "no_baseline"
    # A baseline run, but no baseline value before the apply (and never one: see ``services``).
    UNMEASURABLE = "unmeasurable"


#: Proposals the gate still has checkpoints to record for.
GATE_OPEN = Q(
    applied_at__isnull=False,
    authored_by=AuthoredBy.LLM,
    applicable=True,
    verify_complete=False,
)


class Proposal(models.Model):
    """A change applied at a moment in time, re-measured against an evalset afterwards."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="proposals"
    )
    title = models.CharField(max_length=300)
    authored_by = models.CharField(max_length=8, choices=AuthoredBy.choices)
    applicable = models.BooleanField()
    # The canonical ``OutcomeEvalset`` policy, every default spelled out.
    outcome_evalset = models.JSONField()
    evalset = models.ForeignKey(Evalset, on_delete=models.PROTECT, related_name="proposals")
    # Whether a pushed run can bring one of its checkpoints due (so a push need not look).
    waits_on_grains = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)
    applied_at = models.DateTimeField(null=True, blank=True)
    # The gate has nothing left to do: every checkpoint has its result (``gate_outcome``
    # "measured"), or the schedule is over with no baseline run ("no_baseline") or no baseline
    # value ("unmeasurable").
    verify_complete = models.BooleanField(default=False)
    gate_outcome = models.CharField(max_length=16, choices=GateOutcome.choices, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="proposal_owner"),
            models.Index(fields=["evalset"], name="proposal_gate_open", condition=GATE_OPEN),
        ]

    def __str__(self) -> str:
        return f"proposal {self.pk}: {self.title}"

    @property
    def policy(self) -> Policy:
        return parse_policy(self.outcome_evalset)


class OutcomeResult(models.Model):
    """One checkpoint of one proposal, measured. Recorded at most once."""

    proposal = models.ForeignKey(Proposal, on_delete=models.CASCADE, related_name="results")
    # Canonical, a single key: {"after_ms": n}, {"after_runs": n} or {"after_grains": n}.
    checkpoint = models.JSONField()
    metric = models.CharField(max_length=200)
    baseline = models.FloatField()
    current = models.FloatField()
    verdict = models.CharField(max_length=16, choices=word_choices(VERDICTS))
    baseline_kind = models.CharField(max_length=24, choices=[(k, k) for k in BASELINE_KINDS])
    baseline_run = models.ForeignKey(
        EvalsetRun, on_delete=models.PROTECT, related_name="baseline_of"
    )
    best_before = models.FloatField()
    tolerance = models.FloatField()
    current_run = models.ForeignKey(EvalsetRun, on_delete=models.PROTECT, related_name="current_of")
    # The cost read; blank when the policy sets no cost bound. Each side is None when unreadable.
    cost_read = models.CharField(max_length=16, choices=word_choices(COST_STATUSES), blank=True)
    cost_baseline = models.FloatField(null=True, blank=True)
    cost_current = models.FloatField(null=True, blank=True)
    # With a significance policy: Fisher's exact p-value of the two runs, and the cases per run
    # a test would need to tell their pass rates apart (null without the policy).
    p_value = models.FloatField(null=True, blank=True)
    cases_needed = models.PositiveIntegerField(null=True, blank=True)
    measured_at = models.DateTimeField()

    class Meta:
        ordering = ["measured_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["proposal", "checkpoint"], name="one_result_per_checkpoint"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric} {self.checkpoint_label}: {self.verdict}"

    @property
    def checkpoint_label(self) -> str:
        return str(verdict.Checkpoint.from_json(self.checkpoint))


class RevertDraft(models.Model):
    """Opened on a proposal by its first regressed result."""

    SEVERITY_HIGH = "high"

    proposal = models.OneToOneField(Proposal, on_delete=models.CASCADE, related_name="revert_draft")
    result = models.OneToOneField(
        OutcomeResult, on_delete=models.CASCADE, related_name="revert_draft"
    )
    severity = models.CharField(max_length=8, default=SEVERITY_HIGH, choices=[("high", "high")])
    reason = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"revert draft for proposal {self.proposal_id}"


class AdvisoryFlag(models.Model):
    """Opened on a proposal by its first held_costlier result: a trade for a person to weigh."""

    proposal = models.OneToOneField(
        Proposal, on_delete=models.CASCADE, related_name="advisory_flag"
    )
    result = models.OneToOneField(
        OutcomeResult, on_delete=models.CASCADE, related_name="advisory_flag"
    )
    reason = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"advisory flag for proposal {self.proposal_id}"
