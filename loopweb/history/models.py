"""Dispatch records and the ladder's activity: what the ladder itself does not keep.

The ladder keeps only its latest dispatch (seed 004, "No history"); a record is a separate,
read-only copy of a dispatch's final standing, written in the transaction that ends it.
"""

from django.conf import settings
from django.db import models

from ladders.fields import JSONDocument
from ladders.statuses import STOPPED, ended_climber_status


def who_pressed() -> models.ForeignKey:
    """A reference to the user who pressed a button: emptied when the account is deleted."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        db_constraint=False,
    )


class DispatchRecord(models.Model):
    """One ended dispatch: who ran and stopped it, each climber's height and status, each slot's
    verdict and tally, and what its runs cost. Written once; never changed."""

    # No database constraints on a record's references: inserting a row with one takes a KEY
    # SHARE lock on the row it names, and a record is written while its dispatch is locked, so
    # a Run holding the ladder's row and waiting for the dispatch would deadlock with it.
    # Django's collector still deletes a ladder's records with it.
    ladder = models.ForeignKey(
        "ladders.Ladder", on_delete=models.CASCADE, related_name="records", db_constraint=False
    )
    dispatch_id = models.CharField(max_length=40, unique=True)
    status = models.CharField(max_length=16)  # finished or stopped
    # The configuration the dispatch ran, and its digest: two records with the same
    # ``configuration`` ran the same rungs, climbers' order, gate and limits.
    configuration = models.CharField(max_length=64)
    snapshot = JSONDocument()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField()
    # Who pressed Run and Stop; the names stay when the accounts are deleted.
    started_by = who_pressed()
    started_by_name = models.CharField(max_length=150, blank=True)
    stopped_by = who_pressed()
    stopped_by_name = models.CharField(max_length=150, blank=True)
    cancel_running = models.BooleanField(default=False)
    cancelled = models.PositiveIntegerField(default=0)
    slot_counts = JSONDocument()
    runs = JSONDocument()  # {total, done, inFlight} as the dispatch ended
    totals = JSONDocument()
    # [{key, label, status, blockedReason, reached, currentRung, totals}] in climb order: what
    # lists, charts and compares read without the slots.
    climbers = JSONDocument()
    # Per climber, per rung of the snapshot: [status, tally | null, totals | null] (``records``).
    slots = JSONDocument()
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["ladder", "-id"], name="record_of_ladder")]

    def __str__(self) -> str:
        return f"record of {self.dispatch_id} ({self.status})"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ValueError("A dispatch record is written once and never changed.")
        super().save(*args, **kwargs)

    @classmethod
    def from_db(cls, db, field_names, values, **kwargs):
        """A record of a stopped dispatch written before climbers could read stopped holds the
        climbers the Stop caught as running or blocked: every read (the API, the exports, the
        compare, the console) reads them stopped, as a record written now holds them."""
        record = super().from_db(db, field_names, values, **kwargs)
        loaded = record.__dict__
        if loaded.get("status") == STOPPED and loaded.get("climbers"):
            record.climbers = [_stopped(climber) for climber in record.climbers]
        return record


def _stopped(climber: dict) -> dict:
    status = ended_climber_status(climber["status"])
    if status == climber["status"]:
        return climber
    return {**climber, "status": status, "blockedReason": None}


class Action(models.TextChoices):
    RUN = "run"
    STOP = "stop"
    STOP_CANCEL_RUNNING = "stopCancelRunning"
    RETRY = "retry"
    CREATED = "created"
    EDITED = "edited"
    RUNGS_REORDERED = "rungsReordered"


class Activity(models.Model):
    """Who pressed Run, Stop, Stop and cancel running or Retry, or changed the configuration."""

    # Unconstrained, as a record's: a Retry writes its line while the dispatch is locked.
    ladder = models.ForeignKey(
        "ladders.Ladder", on_delete=models.CASCADE, related_name="activity", db_constraint=False
    )
    at = models.DateTimeField()
    by = who_pressed()
    by_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=24, choices=Action.choices)
    dispatch_id = models.CharField(max_length=40, blank=True)
    # {"climber": key} for a Retry, {"cancelled": n} for a Stop.
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "activity"
        indexes = [models.Index(fields=["ladder", "-at", "-id"], name="activity_of_ladder")]

    def __str__(self) -> str:
        return f"{self.action} by {self.by_name or 'nobody'} on ladder {self.ladder_id}"
