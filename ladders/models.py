import datetime as dt
import secrets

from django.conf import settings
from django.db import models
from django.utils.functional import cached_property

from ladders import document, origins, statuses
from ladders.fields import JSONText
from ladders.gate import defaults as gate_defaults
from loopweb.runs.capture import Captured
from loopweb.runs.models.fields import Named, user_reference


def mint_rung_id() -> str:
    return f"r_{secrets.token_hex(8)}"


def mint_dispatch_id() -> str:
    return f"d_{secrets.token_hex(8)}"


class OuterAxis(models.TextChoices):
    RUNG = "rung"
    COMBINATION = "combination"


def default_gate() -> dict:
    return gate_defaults()


class Ladder(Named):
    """A configuration: it does nothing by itself; Run starts a dispatch of it."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ladders"
    )
    gate = models.JSONField(default=default_gate)
    runs_per_cell = models.PositiveIntegerField(default=1)
    runs_in_flight_limit = models.PositiveIntegerField(null=True, blank=True)
    retry_count = models.PositiveSmallIntegerField(default=1)
    outer_axis = models.CharField(max_length=16, choices=OuterAxis.choices, default="rung")
    groups = models.ManyToManyField("runs.CoverageGroup", through="LadderGroup", blank=True)
    combinations = models.ManyToManyField(
        "runs.Combination", through="LadderCombination", blank=True
    )
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="reviewed_ladders"
    )
    # The review form beyond the aesthetic rating (``ladders.rubric``): [{id, kind, label,
    # description, required, min/max/step | labels}, …] in the form's order.
    rubric = models.JSONField(default=list, blank=True)
    # How many reviews a run of the queue wants before it leaves the reviewers' shared queue,
    # which of the reviewers work the queue (none named: every reviewer), and how long opening
    # a run keeps it for the reviewer who opened it.
    reviews_per_run = models.PositiveSmallIntegerField(default=1)
    assignees = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="assigned_ladders"
    )
    reservation_minutes = models.PositiveSmallIntegerField(default=15)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)


class Rung(models.Model):
    """One pinned case; ``rung_id`` is minted when the rung is added and never reused."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="rungs")
    rung_id = models.CharField(max_length=40, unique=True, default=mint_rung_id)
    position = models.PositiveIntegerField()
    case = models.CharField(max_length=100)
    version = models.CharField(max_length=64)
    variant = models.CharField(max_length=64, default="default")
    engine = models.CharField(max_length=64, null=True, blank=True)
    runs = models.PositiveIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["ladder", "position"]

    def __str__(self) -> str:
        return f"{self.rung_id} {self.case}@{self.version}"


class LadderGroup(models.Model):
    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="group_links")
    group = models.ForeignKey("runs.CoverageGroup", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["ladder", "position"]

    def __str__(self) -> str:
        return f"group {self.group_id} of ladder {self.ladder_id}"


class LadderCombination(models.Model):
    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="combination_links")
    combination = models.ForeignKey("runs.Combination", on_delete=models.CASCADE)
    position = models.PositiveIntegerField()

    class Meta:
        ordering = ["ladder", "position"]

    def __str__(self) -> str:
        return f"combination {self.combination_id} of ladder {self.ladder_id}"


class ReviewReservation(models.Model):
    """A run of the ladder's queue kept for one reviewer until ``expires_at``: while it holds,
    it takes one of the run's reviews, so other reviewers are not handed the same run."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="reservations")
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "run", "reviewer"], name="one_reservation_per_reviewer"
            ),
        ]
        indexes = [models.Index(fields=["ladder", "run"], name="reservation_ladder_run")]

    def __str__(self) -> str:
        return f"run {self.run_id} kept for {self.reviewer_id} on ladder {self.ladder_id}"


class DispatchStatus(models.TextChoices):
    RUNNING = statuses.RUNNING
    FINISHED = statuses.FINISHED
    STOPPED = statuses.STOPPED


class Dispatch(models.Model):
    """The ladder's latest dispatch. A new Run rewrites this row in place with a new id, so the
    row every launch pass, Stop, Retry and Run locks is the same for the ladder's whole life."""

    ladder = models.OneToOneField(Ladder, on_delete=models.CASCADE, related_name="dispatch")
    dispatch_id = models.CharField(max_length=40, unique=True, default=mint_dispatch_id)
    status = models.CharField(max_length=16, choices=DispatchStatus.choices)
    # The configuration as it stood at Run: rungs with targets, gate, climb order, limits.
    snapshot = models.JSONField()
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    passes = models.PositiveIntegerField(default=0)
    # Whether the last launch pass left the dispatch reading Needs attention: a pass that brings
    # it there announces it once (``lifecycle.dispatch_needs_attention``). A new Run's first pass
    # reads it as false, whatever the dispatch it replaced left here.
    needs_attention = models.BooleanField(default=False)
    # What its first launch pass found its slots reading already: runs from before this Run,
    # reused rather than launched again (``passes.reused_runs``): {"runs": n, "from": [{"kind":
    # "dispatch" | "hand" | "outside", "dispatch": id (a dispatch's), "runs": n}, …]}.
    reused = models.JSONField(default=dict, blank=True)
    # Who pressed Run and Stop (empty for a script, or once the user is deleted).
    started_by = user_reference()
    stopped_by = user_reference()

    class Meta:
        verbose_name_plural = "dispatches"
        indexes = [models.Index(fields=["status"], name="dispatch_status")]

    def __str__(self) -> str:
        return f"{self.dispatch_id} of {self.ladder_id} ({self.status})"

    @property
    def origin_prefix(self) -> str:
        return origins.dispatch_prefix(self.ladder_id, self.dispatch_id)

    def origin_for(self, rung_id: str) -> str:
        return origins.origin(self.ladder_id, self.dispatch_id, rung_id)


class DispatchClimber(models.Model):
    dispatch = models.ForeignKey(Dispatch, on_delete=models.CASCADE, related_name="climbers")
    position = models.PositiveIntegerField()
    combination_key = models.CharField(max_length=500)
    combination = models.ForeignKey(
        "runs.Combination", null=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The combination cell, pinned when the climber first resolves and never resolved again, and
    # its key (empty while unpinned): the slot cells' keys end with it.
    combination_cell = models.JSONField(null=True, blank=True)
    pinned_key = models.CharField(max_length=500, blank=True, default="")
    # Verdicts the launch passes wrote: {rungId: "passed" | "failed"}.
    verdicts = models.JSONField(default=dict)
    retried_at = models.DateTimeField(null=True, blank=True)
    # Why the last launch pass found the climber blocked ("" when it was not): a pass that finds
    # a new block announces it once (``lifecycle.climbers_blocked``).
    blocked = models.CharField(max_length=32, blank=True, default="")

    class Meta:
        ordering = ["dispatch", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["dispatch", "combination_key"], name="one_climber_per_key"
            ),
        ]
        indexes = [models.Index(fields=["dispatch", "pinned_key"], name="climber_pinned")]

    def __str__(self) -> str:
        return f"{self.combination_key} in dispatch {self.dispatch_id}"


class DispatchCell(models.Model):
    """A coverage cell one of the dispatch's rung slots reads: one indexed lookup finds every
    running dispatch a finished job feeds, and every ladder whose slots read a run."""

    dispatch = models.ForeignKey(Dispatch, on_delete=models.CASCADE, related_name="cells")
    cell_key = models.CharField(max_length=700)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dispatch", "cell_key"], name="unique_dispatch_cell"),
        ]
        indexes = [models.Index(fields=["cell_key"], name="dispatch_cell_key")]

    def __str__(self) -> str:
        return f"{self.cell_key} held by dispatch {self.dispatch_id}"


class FinalStanding(models.Model):
    """The standing of an ended dispatch, stored once: written in the transaction that ends it
    (Stop, Stop and cancel running, or the pass that finds it finished) as one versioned
    document (``ladders.document``). Nothing that lands later changes it. While its dispatch is
    the ladder's latest, progress, the summary, the review queue and the journal read it; a new
    Run detaches it (``dispatch`` emptied) and the dispatch's record (``loopweb.history``) keeps
    reading it."""

    # Unconstrained, as a record's reference: a standing is written while its dispatch is
    # locked, and a Run holding the ladder's row waits for that lock. Django's collector still
    # deletes a ladder's standings with it.
    ladder = models.ForeignKey(
        Ladder, on_delete=models.CASCADE, related_name="+", db_constraint=False
    )
    #: The ladder's dispatch row while this is its latest dispatch's standing (empty once a new
    #: Run rewrote the row).
    dispatch = models.OneToOneField(
        Dispatch, null=True, blank=True, on_delete=models.SET_NULL, related_name="final"
    )
    #: The document's ``schemaVersion`` and the dispatch's head (``ladders.document``).
    head = JSONText()
    #: Each climber as progress shows it but for its slots, with how high it reached.
    bodies = JSONText()
    #: Per climber, ``{"slots", "runs", "completed"}``: its slots as progress shows them, the runs
    #: each held and the completed ones.
    slots = JSONText()

    class Meta:
        db_table = "ladders_final_standing"

    def __str__(self) -> str:
        return f"final standing of {self.dispatch_key}"

    @property
    def schema_version(self) -> int:
        return self.head["schemaVersion"]

    @property
    def about(self) -> dict:
        """The dispatch's head: id, status, configuration, who ran and stopped it, how it ended,
        its slot counts and runs."""
        return self.head["dispatch"]

    @property
    def dispatch_key(self) -> str:
        return self.about["id"]

    @property
    def status(self) -> str:
        """How the dispatch ended: finished or stopped."""
        return self.about["status"]

    @property
    def snapshot(self) -> dict:
        """The configuration the dispatch ran."""
        return self.about["snapshot"]

    @property
    def started_at(self) -> dt.datetime | None:
        return _moment(self.about["startedAt"])

    @property
    def ended_at(self) -> dt.datetime | None:
        return _moment(self.about["endedAt"])

    @property
    def runs(self) -> dict:
        return self.about["runs"]

    @property
    def slot_counts(self) -> dict:
        return self.about["slotCounts"]

    @property
    def cancel_running(self) -> bool:
        return self.about["cancelRunning"]

    @property
    def cancelled(self) -> int:
        return self.about["cancelled"]

    @property
    def started_by_name(self) -> str:
        return self.about["startedBy"] or ""

    @property
    def stopped_by_name(self) -> str:
        return self.about["stoppedBy"] or ""

    @cached_property
    def climbers(self) -> list[dict]:
        """``[{"body", "runs", "completed", "skippedByStop"}]``: each climber as progress shows
        it, the runs each of its slots held and the completed ones."""
        return document.entries(self.bodies, self.slots)

    def as_document(self) -> dict:
        """The whole document."""
        return document.join(self.head, self.bodies, self.slots)


def _moment(value: str | None) -> dt.datetime | None:
    return dt.datetime.fromisoformat(value) if value else None


_LADDER_OF_DISPATCH = (
    "(SELECT 'ladder:' || d.ladder_id FROM ladders_dispatch AS d WHERE d.id = {r}.dispatch_id)"
)

#: What a ladder's boards read of its own tables: the configuration, who it is shared with, the
#: dispatch and its climbers' cells and retries. A pass counting itself, a verdict it wrote down
#: (progress computes it live first) or the block it announced changes none of it.
CAPTURED = [
    Captured(Ladder._meta.db_table, "'ladder:' || {r}.id"),
    *(
        Captured(model._meta.db_table, "'ladder:' || {r}.ladder_id")
        for model in (Rung, LadderGroup, LadderCombination, Ladder.reviewers.through)
    ),
    Captured(
        Dispatch._meta.db_table,
        "'ladder:' || {r}.ladder_id",
        watched=tuple(
            f"{{r}}.{column}"
            for column in (
                "dispatch_id", "status", "snapshot", "started_at", "ended_at", "started_by_id",
                "stopped_by_id", "reused",
            )
        ),
    ),
    Captured(
        DispatchClimber._meta.db_table,
        _LADDER_OF_DISPATCH,
        watched=tuple(
            f"{{r}}.{column}"
            for column in (
                "position", "combination_key", "combination_id", "combination_cell", "pinned_key",
                "retried_at",
            )
        ),
    ),
    Captured(DispatchCell._meta.db_table, _LADDER_OF_DISPATCH),
]  # fmt: skip
