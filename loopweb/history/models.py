"""Dispatch records and the ladder's activity: what the ladder itself does not keep.

The ladder keeps only its latest dispatch (seed 004, "No history"); a record keeps an ended one
for the history: it reads the dispatch's final standing, which a new Run leaves in place, and
adds what its runs cost.
"""

from django.db import models
from django.utils.functional import cached_property

from ladders.document import TALLY
from ladders.fields import JSONDocument
from loopweb.runs.models.fields import user_reference


def who_pressed() -> models.ForeignKey:
    """A reference to the user who pressed a button: emptied when the account is deleted."""
    return user_reference(db_constraint=False)


def _of_standing(name: str) -> property:
    """A record's read of its standing's own accessor, by that accessor's name."""
    return property(lambda record: getattr(record.standing, name))


class DispatchRecord(models.Model):
    """One ended dispatch as the history keeps it: its standing is the dispatch's own document
    (``ladders.models.FinalStanding``, stored once), which the record reads; the record adds
    what is the history's own: what the runs the dispatch launched cost, in all, per climber and
    per slot, and a digest of the configuration it ran. Written once; never changed."""

    # No database constraints on a record's references: inserting a row with one takes a KEY
    # SHARE lock on the row it names, and a record is written while its dispatch is locked, so
    # a Run holding the ladder's row and waiting for the dispatch would deadlock with it.
    # Django's collector still deletes a ladder's records with it.
    ladder = models.ForeignKey(
        "ladders.Ladder", on_delete=models.CASCADE, related_name="records", db_constraint=False
    )
    dispatch_id = models.CharField(max_length=40, unique=True)
    standing = models.OneToOneField(
        "ladders.FinalStanding",
        on_delete=models.CASCADE,
        related_name="record",
        db_constraint=False,
    )
    # A digest of the configuration the dispatch ran: two records with the same
    # ``configuration`` ran the same rungs, climbers' order, gate and limits.
    configuration = models.CharField(max_length=64)
    totals = JSONDocument()
    # Per climber, in climb order: the totals of its slots.
    climber_totals = JSONDocument(default=list)
    # Per climber, per rung of the snapshot: its slot's totals as a list in ``costs.NAMES``
    # order, null for a slot whose cell had no run the dispatch launched.
    slot_totals = JSONDocument(default=list)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["ladder", "-id"], name="record_of_ladder")]

    def __str__(self) -> str:
        return f"record of {self.dispatch_id}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ValueError("A dispatch record is written once and never changed.")
        super().save(*args, **kwargs)

    # The dispatch's standing, as its document holds it: the standing reads its head itself
    # (``ladders.models.FinalStanding``).
    schema_version = _of_standing("schema_version")
    status = _of_standing("status")
    snapshot = _of_standing("snapshot")
    started_at = _of_standing("started_at")
    ended_at = _of_standing("ended_at")
    started_by_name = _of_standing("started_by_name")
    stopped_by_name = _of_standing("stopped_by_name")
    cancel_running = _of_standing("cancel_running")
    cancelled = _of_standing("cancelled")
    slot_counts = _of_standing("slot_counts")
    runs = _of_standing("runs")

    @cached_property
    def climbers(self) -> list[dict]:
        """``[{key, label, status, blockedReason, currentRung, reached, totals}]`` in climb
        order: what lists, charts and compares read without the slots."""
        return [
            {
                "key": c["key"],
                "label": c["label"],
                "status": c["status"],
                "blockedReason": c.get("blockedReason"),
                "currentRung": c.get("currentRung"),
                "reached": c["reached"],
                "totals": totals,
            }
            for c, totals in zip(self.standing.bodies, self.climber_totals, strict=True)
        ]

    @cached_property
    def slots(self) -> list[list]:
        """Per climber, per rung of the snapshot: ``[status, tally | null, totals | null]``,
        the tally as a list in ``TALLY`` order."""
        return [
            [
                [
                    s["status"],
                    [s["tally"][k] for k in TALLY] if s.get("tally") else None,
                    totals,
                ]
                for s, totals in zip(held["slots"], row, strict=True)
            ]
            for held, row in zip(self.standing.slots, self.slot_totals, strict=True)
        ]


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
