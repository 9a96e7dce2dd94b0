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
    # Whether it was full (no room) when its readers last noted it, for the marks of the slots
    # that begin or stop waiting on it (``loopweb.runs.waiting_marks``).
    marked_full = models.BooleanField(default=False, editable=False)
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


class BudgetPlace(models.Model):
    """One place of a budget a claim takes together with its job, so claims under one budget
    never wait on one row (``loopweb.runs.budget_claim_sql``).

    ``FLIGHT`` places: one per job the budget may have in flight; ``job_id`` is the job holding
    it, set by the claim that leased the job and cleared by the database when the job leaves
    flight. ``MINUTE`` places: shards of the rolling minute, each allowed its share of the
    per-minute cap and keeping its own ``starts``. Both remember the source they last served and
    when (``source``, ``served_at``), which the round-robin reads. Laid out by
    ``loopweb.runs.budgeting.lay_out_places``; a budget's flight places are removed by the
    database when its caps or ``enabled`` change, and laid out again at the next claim.
    """

    FLIGHT = 0
    MINUTE = 1

    # Found through ``one_budget_place``, which leads with it: no index of its own to update.
    budget = models.ForeignKey(
        ProviderBudget, on_delete=models.CASCADE, related_name="places", db_index=False
    )
    kind = models.PositiveSmallIntegerField()
    place = models.PositiveIntegerField()
    # Not a foreign key: a claim leasing a job must not take a share lock on it a second time.
    job_id = models.BigIntegerField(null=True, blank=True)
    starts = models.JSONField(default=dict, blank=True)
    source = models.CharField(max_length=300, blank=True, default="")
    served_at = models.FloatField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["budget", "kind", "place"], name="one_budget_place"),
        ]
        indexes = [
            models.Index(
                fields=["job_id"], condition=Q(job_id__isnull=False), name="budget_place_job"
            ),
            # A claim's free place: the first, found at once however many are held.
            models.Index(
                fields=["budget", "kind", "place"],
                condition=Q(job_id__isnull=True),
                name="budget_place_free",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.budget_id}/{self.kind}/{self.place}"
