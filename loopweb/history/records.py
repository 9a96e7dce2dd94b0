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
    """A digest of the configuration a dispatch ran: the same for the same rungs, gate,
    limits and climb order."""
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def build(dispatch: Dispatch, standing: FinalStanding) -> DispatchRecord:
    """The record (unsaved) of a dispatch's ``standing``: what the runs the dispatch launched
    cost, by slot, by climber and in all."""
    held = standing.slots
    owner_of_cell: dict[str, tuple[int, int]] = {}
    for i, climber in enumerate(held):
        for j, slot in enumerate(climber["slots"]):
            if slot.get("cellKey"):
                # Two rungs pinning one cell read the same runs: they are paid for once, on the
                # lower rung.
                owner_of_cell.setdefault(slot["cellKey"], (i, j))
    slot_totals: dict[tuple[int, int], dict] = {}
    dispatch_totals = costs.empty()
    for _, cell, metrics in costs.run_metrics(dispatch.origin_prefix):
        values = costs.reported(metrics)
        costs.add(dispatch_totals, values)
        where = owner_of_cell.get(cell)
        if where is not None:
            totals = slot_totals.get(where)
            if totals is None:
                totals = slot_totals[where] = costs.empty()
            costs.add(totals, values)
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
    """The ended dispatch's record, written now if it was not yet (once: the record's dispatch
    id is unique, and a writer that loses the race reads the winner's)."""
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
    except IntegrityError:
        # Another writer's record, committed first; any other integrity error is raised.
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
    # One probe of the unique index per dispatch, not the dispatch ids of every record kept.
    recorded = DispatchRecord.objects.filter(dispatch_id=OuterRef("dispatch_id"))
    return ended.filter(~Exists(recorded))


def live(dispatch: Dispatch) -> DispatchRecord:
    """The dispatch as it stands now, as an unsaved record (``pk`` None) over an unsaved
    document: from the ladder's shared board while it runs (the computation its viewers share,
    made again only where it changed), from its record once it has ended."""
    if dispatch.status != DispatchStatus.RUNNING:
        kept = keep(dispatch)
        if kept is not None:
            return kept
    board = shared_progress.read(dispatch.ladder)
    memo = board.memo.get("record")
    if memo is not None:
        return memo
    if board.dispatch is None or board.dispatch.dispatch_id != dispatch.dispatch_id:
        # Replaced since it was read: the board is the new dispatch's.
        return live(Dispatch.objects.get(pk=dispatch.pk))
    figures = board.figures or {}
    known = progress.user_names(board.dispatch.started_by_id, board.dispatch.stopped_by_id)
    head = freezing.dispatch_head(
        board.dispatch,
        status=figures.get("status", board.dispatch.status),
        slot_counts=figures.get("slotCounts", {}),
        runs=figures.get("runs", {}),
        names=(
            known.get(board.dispatch.started_by_id, ""),
            known.get(board.dispatch.stopped_by_id, ""),
        ),
    )
    head, bodies, slots = document.compose(
        head,
        [
            {"body": part.body, "runs": [list(ids) for ids in part.runs], "completed": []}
            for part in board.parts
        ],
    )
    standing = FinalStanding(
        ladder_id=board.dispatch.ladder_id, head=head, bodies=bodies, slots=slots
    )
    record = build(board.dispatch, standing)
    board.memo["record"] = record
    return record


# As the API shows them ------------------------------------------------------------------------


def _user(name: str) -> str | None:
    return name or None


def head_json(record: DispatchRecord) -> dict:
    return {
        "id": record.pk if record.pk is not None else CURRENT,
        "schemaVersion": record.schema_version,
        "dispatch": record.dispatch_id,
        "status": record.status,
        "configuration": record.configuration,
        "startedAt": record.started_at,
        "endedAt": record.ended_at,
        "startedBy": _user(record.started_by_name),
        "stoppedBy": _user(record.stopped_by_name),
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
    """One record, with every slot's verdict and tally.

    A climb stops at its first rung not passed, so most slots of a large record were never
    reached: no tally, no totals, the same few statuses. Each such slot of a rung is one shared
    (read-only) object, made once, not once per climber."""
    snapshot = record.snapshot
    rungs = rungs_json(record)
    bare: dict[tuple[str, str], dict] = {}

    def slot(rung: dict, s: list) -> dict:
        if s[1] or s[2]:
            return slot_json(rung, s)
        key = (rung["id"], s[0])
        made = bare.get(key)
        if made is None:
            made = bare[key] = slot_json(rung, s)
        return made

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
