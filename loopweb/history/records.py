"""A dispatch's standing as a record: built from its final standing when it ends, or from its
evidence while it runs (``live``), so a record and the running dispatch compare alike.

A record's ``slots`` hold, per climber and per rung of its snapshot, ``[status, tally, totals]``
with the tally as a list in ``TALLY`` order (null for a slot the climber never reached) and the
totals as a list in ``costs.NAMES`` order (null for a slot whose cell had no run).
"""

import hashlib
import json
from collections.abc import Sequence

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, QuerySet

from ladders import progress, shared_progress
from ladders.models import Dispatch, DispatchStatus, FinalStanding
from ladders.statuses import FAILED, PASSED
from loopweb import stats
from loopweb.history import costs
from loopweb.history.models import DispatchRecord

TALLY = ("counted", "rated", "unrated", "passing", "pending", "inFlight", "required")
VERDICTS = (PASSED, FAILED)
CURRENT = "current"


def reached(slots: Sequence) -> int:
    """The highest rung passed (1 for the lowest), 0 for none: a climb stops at its first
    rung not passed."""
    height = 0
    for status in slots:
        if status != PASSED:
            break
        height += 1
    return height


def configuration_id(snapshot: dict) -> str:
    """A digest of the configuration a dispatch ran: the same for the same rungs, gate,
    limits and climb order."""
    text = json.dumps(snapshot, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def build(
    dispatch: Dispatch,
    bodies: list[dict],
    *,
    status: str,
    slot_counts: dict,
    runs: dict,
    cancel_running: bool = False,
    cancelled: int = 0,
    names: tuple[str, str] | None = None,
) -> DispatchRecord:
    """The record (unsaved) of a dispatch's standing: ``bodies`` are its climbers as progress
    shows them; what the runs the dispatch launched cost, by slot."""
    owner_of_cell: dict[str, tuple[int, int]] = {}
    for i, body in enumerate(bodies):
        for j, slot in enumerate(body["slots"]):
            if slot.get("cellKey"):
                # Two rungs pinning one cell read the same runs: they are paid for once, on the
                # lower rung.
                owner_of_cell.setdefault(slot["cellKey"], (i, j))
    slot_totals: dict[tuple[int, int], dict] = {}
    dispatch_totals = costs.empty()
    rows = costs.run_metrics(dispatch.origin_prefix)
    for _, cell, metrics in rows:
        values = costs.reported(metrics)
        costs.add(dispatch_totals, values)
        where = owner_of_cell.get(cell)
        if where is not None:
            totals = slot_totals.get(where)
            if totals is None:
                totals = slot_totals[where] = costs.empty()
            costs.add(totals, values)

    climbers, slots = [], []
    for i, body in enumerate(bodies):
        statuses = [s["status"] for s in body["slots"]]
        mine = [slot_totals.get((i, j)) for j in range(len(statuses))]
        climbers.append(
            {
                "key": body["key"],
                "label": body["label"],
                "status": body["status"],
                "blockedReason": body.get("blockedReason"),
                "currentRung": body.get("currentRung"),
                "reached": reached(statuses),
                "totals": costs.total(mine),
            }
        )
        slots.append(
            [
                [
                    s["status"],
                    [s["tally"][k] for k in TALLY] if s.get("tally") else None,
                    [t[k] for k in costs.NAMES] if t else None,
                ]
                for s, t in zip(body["slots"], mine, strict=True)
            ]
        )
    if names is None:
        known = progress.user_names(dispatch.started_by_id, dispatch.stopped_by_id)
        names = known.get(dispatch.started_by_id, ""), known.get(dispatch.stopped_by_id, "")
    return DispatchRecord(
        ladder_id=dispatch.ladder_id,
        dispatch_id=dispatch.dispatch_id,
        status=status,
        configuration=configuration_id(dispatch.snapshot),
        snapshot=dispatch.snapshot,
        started_at=dispatch.started_at,
        ended_at=dispatch.ended_at,
        started_by_id=dispatch.started_by_id,
        started_by_name=names[0],
        stopped_by_id=dispatch.stopped_by_id,
        stopped_by_name=names[1],
        cancel_running=cancel_running,
        cancelled=cancelled,
        slot_counts=slot_counts,
        runs=runs,
        totals=dispatch_totals,
        climbers=climbers,
        slots=slots,
    )


def of_final(dispatch: Dispatch, final: FinalStanding) -> DispatchRecord:
    """The record of an ended dispatch, from its frozen final standing."""
    parts = progress.frozen_parts(dispatch, final)
    figures = progress.figures(dispatch, parts, runs_under_way=0)
    return build(
        dispatch,
        [part.body for part in parts],
        status=dispatch.status,
        slot_counts=final.slot_counts,
        runs=figures["runs"],
        cancel_running=final.cancel_running,
        cancelled=final.cancelled,
        names=(final.started_by_name, final.stopped_by_name),
    )


def keep(dispatch: Dispatch, final: FinalStanding | None = None) -> DispatchRecord | None:
    """The ended dispatch's record, written now if it was not yet (once: the record's dispatch
    id is unique, and a writer that loses the race reads the winner's)."""
    kept = DispatchRecord.objects.filter(dispatch_id=dispatch.dispatch_id).first()
    if kept is not None:
        return kept
    final = final or progress.final_of(dispatch)
    if final is None:
        return None  # running, or ended before final standings were kept
    record = of_final(dispatch, final)
    try:
        with transaction.atomic():
            record.save()
    except IntegrityError:
        # Another writer's record, committed first; any other integrity error is raised.
        kept = DispatchRecord.objects.filter(dispatch_id=dispatch.dispatch_id).first()
        if kept is None:
            raise
        return kept
    return record


def unrecorded(ladder_id: int | None = None) -> QuerySet[Dispatch]:
    """Ended dispatches (with a final standing) whose record is not written yet."""
    ended = Dispatch.objects.exclude(status=DispatchStatus.RUNNING).filter(final__isnull=False)
    if ladder_id is not None:
        ended = ended.filter(ladder_id=ladder_id)
    # One probe of the unique index per dispatch, not the dispatch ids of every record kept.
    recorded = DispatchRecord.objects.filter(dispatch_id=OuterRef("dispatch_id"))
    return ended.filter(~Exists(recorded))


def live(dispatch: Dispatch) -> DispatchRecord:
    """The dispatch as it stands now, as an unsaved record (``pk`` None): from the ladder's shared
    board while it runs (the computation its viewers share, made again only where it changed),
    from its record once it has ended."""
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
    record = build(
        board.dispatch,
        [part.body for part in board.parts],
        status=figures.get("status", board.dispatch.status),
        slot_counts=figures.get("slotCounts", {}),
        runs=figures.get("runs", {}),
    )
    board.memo["record"] = record
    return record


# As the API shows them ------------------------------------------------------------------------


def _user(name: str) -> str | None:
    return name or None


def head_json(record: DispatchRecord) -> dict:
    return {
        "id": record.pk if record.pk is not None else CURRENT,
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
