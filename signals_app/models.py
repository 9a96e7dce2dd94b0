from django.conf import settings
from django.db import models

from loopweb.runs.capture import Captured
from loopweb.runs.models import Run
from loopweb.runs.models.fields import user_reference
from signals_app import acceptance, outcome, rules


class SignalKind(models.TextChoices):
    VERDICT = "verdict"
    SCORE = "score"
    EVENT = "event"


class Tier(models.TextChoices):
    VERIFIED = "verified"
    MEASURED = "measured"
    REPORTED = "reported"
    ASSERTED = "asserted"


class Source(models.TextChoices):
    """Which door a signal came in through; for the admin and for auditing, not for reading."""

    API = "api"
    PUSH = "push"
    PLATFORM = "platform"
    REVIEW = "review"
    EVENT = "event"


class Signal(models.Model):
    """One timestamped observation about a run's result (seed 000). Append-only."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="signals")
    # Seed 000's ``id``: chosen by the producer, unique within the run.
    signal_id = models.CharField(max_length=200)
    kind = models.CharField(max_length=8, choices=SignalKind.choices)
    name = models.CharField(max_length=200)
    value = models.JSONField(null=True, blank=True)
    unit = models.CharField(max_length=100, null=True, blank=True)
    better = models.CharField(max_length=8, null=True, blank=True)
    threshold = models.FloatField(null=True, blank=True)
    scale = models.CharField(max_length=8, null=True, blank=True)
    at_attempt = models.CharField(max_length=200, null=True, blank=True)
    observed_at = models.DateTimeField()
    tier = models.CharField(max_length=8, choices=Tier.choices)
    ext = models.JSONField(null=True, blank=True)
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.API)
    recorded_by = user_reference()
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "signal_id"], name="signal_id_unique_in_run"),
        ]
        indexes = [models.Index(fields=["run", "name"], name="signal_run_name")]

    def __str__(self) -> str:
        return f"{self.kind} {self.name}={self.value!r} on run {self.run_id}"

    @classmethod
    def from_data(cls, data: rules.SignalData, **fields) -> "Signal":
        return cls(
            signal_id=data.id,
            kind=data.kind,
            name=data.name,
            value=data.value,
            unit=data.unit,
            better=data.better,
            threshold=data.threshold,
            scale=data.scale,
            at_attempt=data.at_attempt,
            observed_at=data.observed_at,
            tier=data.tier,
            ext=data.ext,
            **fields,
        )

    @property
    def threshold_result(self) -> str | None:
        """``pass`` or ``fail`` against the signal's own threshold (None: nothing to read)."""
        return outcome.against_threshold(self.kind, self.value, self.threshold, self.better)

    @property
    def threshold_reading(self) -> str:
        """The threshold reading for people: ``pass (at least 2400)``, or "" when there is none."""
        result = self.threshold_result
        if result is None:
            return ""
        bound = "at least" if self.better == "higher" else "at most"
        return f"{result} ({bound} {self.threshold:g})"

    def as_data(self) -> rules.SignalData:
        return rules.SignalData(
            id=self.signal_id,
            kind=self.kind,
            name=self.name,
            value=self.value,
            observed_at=self.observed_at,
            tier=self.tier,
            unit=self.unit,
            better=self.better,
            threshold=self.threshold,
            scale=self.scale,
            at_attempt=self.at_attempt,
            ext=self.ext,
        )


class AcceptanceRule(models.Model):
    """A user's current acceptance rule. Runs copy it when they are recorded."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="acceptance_rule"
    )
    name = models.CharField(max_length=200)
    description = models.CharField(max_length=500)
    requires = models.JSONField(default=list, blank=True)
    score = models.JSONField(null=True, blank=True)
    excludes_events = models.JSONField(default=list, blank=True)
    window_days = models.PositiveIntegerField(default=rules.DEFAULT_WINDOW_DAYS)
    ext = models.JSONField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["user__username"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"

    def as_json(self) -> dict:
        return acceptance.normalized_rule(
            **{name: getattr(self, name) for name in rules.RULE_FIELDS}
        )


#: A signal changes how its run's outcome reads: its cell's boards and queues read it again.
CAPTURED = [
    Captured(
        Signal._meta.db_table,
        "(SELECT run.cell_key FROM runs_run AS run WHERE run.id = {r}.run_id)",
    )
]
