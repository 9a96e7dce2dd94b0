"""A dispatch's record: its standing's document (the final standing, stored once by the
ladder) and what its runs cost; or, while it runs, the same built from the ladder's board
(``live``), so a record and the running dispatch compare alike.

A record's ``slots`` read, per climber and per rung of its snapshot, ``[status, tally, totals]``
with the tally as a list in ``TALLY`` order (null for a slot the climber never reached) and the
totals as a list in ``costs.NAMES`` order (null for a slot whose cell had no run).
"""

import hashlib
import json

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet

from ladders import document, freezing, progress, shared_progress
from ladders.document import TALLY
from ladders.models import Dispatch, DispatchStatus, FinalStanding
from ladders.statuses import FAILED, PASSED
from loopweb import stats
from loopweb.history import costs
from loopweb.history.models import DispatchRecord

VERDICTS = (PASSED, FAILED)
CURRENT = "current"


def configuration_id(snapshot: dict) -> str:
    """A digest of the configuration a dispatch ran (its rungs, gate, limits and climb order)."""
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def build(dispatch: Dispatch, standing: FinalStanding) -> DispatchRecord:
    """The unsaved record of a dispatch's ``standing``: what its runs cost, by slot, by climber
    and in all."""
    held = standing.slots
    owner_of_cell: dict[str, tuple[int, int]] = {}
    for i, climber in enumerate(held):
        for j, slot in enumerate(climber["slots"]):
            if slot.get("cellKey"):  # two rungs of one cell: paid for once, on the lower
                owner_of_cell.setdefault(slot["cellKey"], (i, j))
    slot_totals: dict[tuple[int, int], dict] = {}
    dispatch_totals = costs.empty()
    for _, cell, metrics in costs.run_metrics(dispatch.origin_prefix):
        values = costs.reported(metrics)
        costs.add(dispatch_totals, values)
        where = owner_of_cell.get(cell)
        if where is not None:
            if where not in slot_totals:
                slot_totals[where] = costs.empty()
            costs.add(slot_totals[where], values)
    climber_totals, slots = [], []
    for i, climber in enumerate(held):
        mine = [slot_totals.get((i, j)) for j in range(len(climber["slots"]))]
        climber_totals.append(costs.total(mine))
        slots.append([[t[k] for k in costs.NAMES] if t else None for t in mine])
    return DispatchRecord(
        ladder_id=dispatch.ladder_id,
        dispatch_id=dispatch.dispatch_id,
        standing=standing,
        configuration=configuration_id(dispatch.snapshot),
        totals=dispatch_totals,
        climber_totals=climber_totals,
        slot_totals=slots,
    )


def keep(dispatch: Dispatch, final: FinalStanding | None = None) -> DispatchRecord | None:
    """The ended dispatch's record, written now if it was not yet (once: a writer that loses the
    race on the unique dispatch id reads the winner's)."""
    kept = _recorded(dispatch.dispatch_id)
    if kept is not None:
        return kept
    final = final or progress.final_of(dispatch)
    if final is None:
        return None  # running, or ended before final standings were kept
    record = build(dispatch, final)
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:  # another writer's, committed first (or raised)
        kept = _recorded(dispatch.dispatch_id)
        if kept is None:
            raise
        return kept
    return record


def _recorded(dispatch_id: str) -> DispatchRecord | None:
    return DispatchRecord.objects.select_related("standing").filter(dispatch_id=dispatch_id).first()


def unrecorded(ladder_id: int | None = None) -> QuerySet[Dispatch]:
    """Ended dispatches (with a final standing) whose record is not written yet."""
    ended = Dispatch.objects.exclude(status=DispatchStatus.RUNNING).filter(final__isnull=False)
    if ladder_id is not None:
        ended = ended.filter(ladder_id=ladder_id)
    recorded = DispatchRecord.objects.filter(dispatch_id=OuterRef("dispatch_id"))
    return ended.filter(~Exists(recorded))


def live(dispatch: Dispatch) -> DispatchRecord:
    """The dispatch as it stands now, as an unsaved record over an unsaved document: from the
    ladder's shared board while it runs, from its record once it has ended."""
    if dispatch.status != DispatchStatus.RUNNING:
        kept = keep(dispatch)
        if kept is not None:
            return kept
    board = shared_progress.read(dispatch.ladder)
    memo = board.memo.get("record")
    if memo is not None:
        return memo
    shown = board.dispatch
    if shown is None or shown.dispatch_id != dispatch.dispatch_id:  # replaced since it was read
        return live(Dispatch.objects.get(pk=dispatch.pk))
    figures = board.figures or {}
    known = progress.user_names(shown.started_by_id, shown.stopped_by_id)
    head = freezing.dispatch_head(
        shown,
        status=figures.get("status", shown.status),
        slot_counts=figures.get("slotCounts", {}),
        runs=figures.get("runs", {}),
        names=(known.get(shown.started_by_id, ""), known.get(shown.stopped_by_id, "")),
    )
    head, bodies, slots = document.compose(
        head,
        [
            {"body": part.body, "runs": [list(ids) for ids in part.runs], "completed": []}
            for part in board.parts
        ],
    )
    standing = FinalStanding(ladder_id=shown.ladder_id, head=head, bodies=bodies, slots=slots)
    record = build(shown, standing)
    board.memo["record"] = record
    return record


def head_json(record: DispatchRecord) -> dict:
    return {
        "id": record.pk if record.pk is not None else CURRENT,
        "schemaVersion": record.schema_version,
        "dispatch": record.dispatch_id,
        "status": record.status,
        "configuration": record.configuration,
        "startedAt": record.started_at,
        "endedAt": record.ended_at,
        "startedBy": record.started_by_name or None,
        "stoppedBy": record.stopped_by_name or None,
        "cancelRunning": record.cancel_running,
        "cancelled": record.cancelled,
    }


def summary_json(record: DispatchRecord) -> dict:
    """A record as the history lists it."""
    return {
        **head_json(record),
        "slotCounts": record.slot_counts,
        "runs": record.runs,
        "totals": record.totals,
        # As stored: key, label, reached, status, blockedReason, currentRung, totals.
        "climbers": record.climbers,
    }


def rungs_json(record: DispatchRecord) -> list[dict]:
    return [{**r, "number": i + 1} for i, r in enumerate(record.snapshot["rungs"])]


def slot_json(rung: dict, slot: list) -> dict:
    status, tally, totals = slot
    tallied = dict(zip(TALLY, tally, strict=True)) if tally else None
    return {
        "rung": rung["id"],
        "status": status,
        "verdict": status if status in VERDICTS else None,
        "tally": tallied,
        "passRate": stats.pass_rate_of(tallied),
        "totals": dict(zip(costs.NAMES, totals, strict=True)) if totals else None,
    }


def detail_json(record: DispatchRecord) -> dict:
    """One record, with every slot's verdict and tally. Most slots of a large record were never
    reached (no tally, no totals): each such slot of a rung is one shared object, made once."""
    snapshot = record.snapshot
    rungs = rungs_json(record)
    bare: dict[tuple[str, str], dict] = {}

    def slot(rung: dict, s: list) -> dict:
        if s[1] or s[2]:
            return slot_json(rung, s)
        key = (rung["id"], s[0])
        if key not in bare:
            bare[key] = slot_json(rung, s)
        return bare[key]

    return {
        **head_json(record),
        "gate": snapshot["gate"],
        "outerAxis": snapshot["outerAxis"],
        "runsInFlightLimit": snapshot["runsInFlightLimit"],
        "retryCount": snapshot["retryCount"],
        "rungs": rungs,
        "slotCounts": record.slot_counts,
        "runs": record.runs,
        "totals": record.totals,
        "climbers": [
            {**climber, "slots": [slot(r, s) for r, s in zip(rungs, slots, strict=True)]}
            for climber, slots in zip(record.climbers, record.slots, strict=True)
        ],
    }
