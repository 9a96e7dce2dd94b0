from django.core.validators import MinValueValidator
from django.db import models
from django.db.models import Q


class ProviderBudget(models.Model):
    """A fleet-wide cap on a provider's jobs (or one model's), enforced at claim
    (``loopweb.runs.claim``; the rules are ``loopweb.runs.budgets``).

    Staff set ``provider``, ``model``, the caps and ``enabled``. The rest is the budget's state,
    written only under a lock on this row by the claims and releases that change it: its back-off
    and the starts and turns of the last minute.
    """

    provider = models.CharField(max_length=100)
    # Blank: every model of the provider.
    model = models.CharField(max_length=200, blank=True, default="")
    max_in_flight = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)]
    )
    per_minute = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)]
    )
    enabled = models.BooleanField(default=True)
    # Back-off after a driver released a job as rate limited: the cap it fell to, the cap it
    # recovers to, and when it starts recovering (one a step).
    backoff_cap = models.PositiveIntegerField(null=True, blank=True)
    backoff_from = models.PositiveIntegerField(null=True, blank=True)
    backoff_until = models.DateTimeField(null=True, blank=True)
    # {unix second: jobs started in it}, the last minute's only.
    starts = models.JSONField(default=dict, blank=True)
    # {source of an origin: unix time it was last served}, for the round-robin.
    turns = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["provider", "model", "id"]
        constraints = [
            models.UniqueConstraint(fields=["provider", "model"], name="one_budget_per_target"),
            models.CheckConstraint(
                condition=Q(max_in_flight__isnull=True) | Q(max_in_flight__gte=1),
                name="budget_max_in_flight_positive",
            ),
            models.CheckConstraint(
                condition=Q(per_minute__isnull=True) | Q(per_minute__gte=1),
                name="budget_per_minute_positive",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}" if self.model else self.provider
