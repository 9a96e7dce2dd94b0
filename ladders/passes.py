"""The launch pass: record every verdict the gate can now decide, then launch what each
climber's current rung is missing (docs/architecture.md traces it step by step).

A pass holds the dispatch lock (``FOR NO KEY UPDATE``) for its whole transaction: one pass per
ladder at a time, never beside a Run, Stop or Retry, while pushes only share the row. Locks are
taken dispatch, climber, job, then the cells' advisory locks.
"""

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Count, Q, QuerySet, Value
from django.utils import timezone

from ladders import evidence, freezing, lifecycle, origins
from ladders.models import (
    Dispatch,
    DispatchCell,
    DispatchClimber,
    DispatchStatus,
)
from ladders.progress import standing_of
from ladders.standing import ClimberStanding, RungSnap, Standing
from ladders.statuses import BLOCKED, RUNNING
from ladders.tasks import requeue_interrupted
from loopweb import memory
from loopweb.runs import jsonbytes
from loopweb.runs.arrays import in_ids
from loopweb.runs.cells import CombinationCell, cell_key
from loopweb.runs.models import (
    IN_FLIGHT,
    NOT_STARTED,
    CancelCause,
    Job,
    Run,
)
from loopweb.runs.services import enqueue, lock_to_cancel, mark_canceled, new_job

log = logging.getLogger(__name__)


@dataclass
class PassReport:
    dispatch: str
    launched: int
    cancelled: int
    published: int
    finished: bool


def launch_pass_now(ladder_id: int) -> PassReport | None:
    """Run a pass for a request that triggered one; its task is already queued, so a failure
    here is logged, never raised."""
    try:
        return run_launch_pass(ladder_id=ladder_id)
    except Exception:
        log.exception("launch pass of ladder %s failed; its queued task will run it", ladder_id)
        return None


def run_launch_pass(*, ladder_id: int) -> PassReport | None:
    """Record every verdict the gate can now decide, then launch what each climber's current
    rung is missing, up to the dispatch's limit, in its climb order."""
    with transaction.atomic():
        # The dispatch lock: one pass at a time per ladder, and never beside a Stop, Retry or Run
        # (which hold the row exclusively); pushes only share it, so they go on beside a pass.
        dispatch = (
            Dispatch.objects.select_for_update(of=("self",), no_key=True)
            .select_related("ladder")
            .filter(ladder_id=ladder_id)
            .first()
        )
        if dispatch is None or dispatch.status != DispatchStatus.RUNNING:
            return None
        # Once the lock is held: waiting for it pauses nothing.
        with memory.collector_paused():
            return _pass(dispatch)


def _pass(dispatch: Dispatch) -> PassReport:
    """The pass of a running dispatch, under its lock."""
    # The first pass launches the dispatch's first jobs: every run its slots read now is
    # from before this Run, and where each came from is read with them.
    first = dispatch.passes == 0
    [loaded] = evidence.load([dispatch], origins=first)
    standing = standing_of(loaded, running=True, whole=False)
    if first:
        dispatch.reused = reused_runs(standing, loaded.evidence.origins)

    # Climbers before jobs, as a driver ending a job of an early-stopping dispatch takes
    # them (``receivers.lock_dispatch_of_origin``).
    _record(dispatch, loaded, standing)
    cancelled = _cancel_decided(dispatch, loaded, standing)
    published = _publish(standing)
    jobs = _launch(dispatch, loaded, standing, cancelled)

    in_flight = standing.launched_in_flight - cancelled + len(jobs)
    finished = standing.settled and in_flight == 0
    if finished:
        dispatch.status = DispatchStatus.FINISHED
        dispatch.ended_at = timezone.now()
    # The reading this pass leaves; a new Run's first pass enters it afresh.
    had_attention = dispatch.needs_attention and dispatch.passes > 0
    dispatch.needs_attention = standing.reads_needs_attention(in_flight)
    dispatch.passes += 1
    dispatch.save(update_fields=["status", "ended_at", "passes", "needs_attention", "reused"])
    if dispatch.needs_attention and not had_attention:
        blocked = [
            (row, climber)
            for row, climber in zip(loaded.climbers, standing.climbers, strict=True)
            if climber.status == BLOCKED
        ]
        lifecycle.dispatch_needs_attention.send(Dispatch, dispatch=dispatch, climbers=blocked)
    if finished:
        final = freezing.freeze(dispatch, standing.ended())
        lifecycle.dispatch_ended.send(
            Dispatch, dispatch=dispatch, final=final, by=None, cancel_running=False, cancelled=0
        )
    return PassReport(dispatch.dispatch_id, len(jobs), cancelled, published, finished)


def reused_runs(standing: Standing, job_origins: Mapping[int, str | None]) -> dict[str, Any]:
    """The runs the standing's slots read, by where they came from (``job_origins``: each slot
    run's job's origin): another dispatch (of any ladder), a launch by hand, or a push without a
    job; the most first, ties in the order of their names."""
    ids = {run.id for climber in standing.climbers for slot in climber.slots for run in slot.runs}
    found: Counter[tuple[str, str | None]] = Counter()
    for origin, n in Counter(job_origins[run_id] for run_id in ids).items():
        parsed = origins.parse(origin) if origin else None
        source: tuple[str, str | None]
        if parsed is not None:
            source = ("dispatch", parsed.dispatch_id)
        else:
            source = ("hand", None) if origin else ("outside", None)
        found[source] += n
    sources = [
        {"kind": kind, **({"dispatch": dispatch} if dispatch else {}), "runs": n}
        for (kind, dispatch), n in sorted(
            found.items(), key=lambda item: (-item[1], item[0][0], item[0][1] or "")
        )
    ]
    return {"runs": len(ids), "from": sources}


#: The first key of the advisory locks that stand for coverage cells.
CELL_LOCKS = 0x4C57


def _lock_cells(keys: list[str]) -> None:
    """Lock the cells a pass is about to launch into. Two dispatches (of two ladders) sharing a
    cell would otherwise each miss the other's uncommitted jobs and both fill the cell. Locks are
    taken in one global order, so passes sharing cells never deadlock; they end with the pass."""
    if connection.vendor != "postgresql":
        return  # SQLite runs one write transaction at a time
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, k) FROM"
            " (SELECT DISTINCT hashtext(c) AS k FROM unnest(%s::text[]) AS c ORDER BY k) AS cells",
            [CELL_LOCKS, keys],
        )


def _room_in_cells(targets: dict[str, int]) -> dict[str, int]:
    """How many more runs each cell can take now, re-read under the cells' locks: its target
    less its counted runs and every job of it in flight, whoever launched them.

    Both counts come from one statement, so from one snapshot. A push ends its job and stores
    its counted run in one transaction: counted in a statement of their own each, a push that
    commits between the two is in neither, and the cell reads a run short."""
    keys = list(targets)
    runs = _count_per_cell(Run.objects.filter(cell_key__in=keys, counted=True), "run")
    jobs = _count_per_cell(Job.objects.filter(cell_key__in=keys, status__in=IN_FLIGHT), "job")
    counts: dict[str, dict[str, int]] = {"run": {}, "job": {}}
    for kind, key, n in runs.union(jobs, all=True).order_by():
        counts[kind][key] = n
    counted, in_flight = counts["run"], counts["job"]
    return {
        key: max(0, target - min(counted.get(key, 0), target) - in_flight.get(key, 0))
        for key, target in targets.items()
    }


def _count_per_cell(
    queryset: QuerySet[Run] | QuerySet[Job], kind: str
) -> QuerySet[Any, tuple[str, str, int]]:
    """(kind, cellKey, count) rows of the queryset, one per cell, to union with another's."""
    return (
        queryset.values("cell_key")
        .annotate(kind=Value(kind), n=Count("id"))
        .values_list("kind", "cell_key", "n")
        .order_by()
    )


def _record(dispatch: Dispatch, loaded: evidence.Loaded, standing: Standing) -> None:
    """Pin newly resolved cells, write newly decided verdicts and note blocks, announcing the
    new ones."""
    changed: list[DispatchClimber] = []
    pinned: list[DispatchClimber] = []
    blocked: list[tuple[DispatchClimber, ClimberStanding]] = []
    for row, climber in zip(loaded.climbers, standing.climbers, strict=True):
        cell = climber.combination_cell
        if climber.pin_now and cell is not None:  # a climber pinned now has its cell
            row.combination_cell = cell.as_json()
            row.pinned_key = cell.key
            pinned.append(row)
        if climber.new_verdicts:
            row.verdicts = {**row.verdicts, **climber.new_verdicts}
        block = (climber.blocked_reason or "") if climber.status == BLOCKED else ""
        block_changed = block != row.blocked
        if block_changed:
            row.blocked = block
            if block:
                blocked.append((row, climber))
        if climber.pin_now or climber.new_verdicts or block_changed:
            changed.append(row)
    if changed:
        _write_climbers(changed)
    if pinned:
        hold_cells(dispatch, pinned, loaded.rungs)
    if blocked:
        lifecycle.climbers_blocked.send(Dispatch, dispatch=dispatch, climbers=blocked)


def _write_climbers(climbers: list[DispatchClimber]) -> None:
    """One UPDATE for every changed climber, however many decisions the pass recorded."""
    if connection.vendor != "postgresql":
        DispatchClimber.objects.bulk_update(
            climbers, ["combination_cell", "pinned_key", "verdicts", "blocked"]
        )
        return
    rows = [
        {
            "id": c.pk,
            "combination_cell": c.combination_cell,
            "pinned_key": c.pinned_key,
            "verdicts": c.verdicts,
            "blocked": c.blocked,
        }
        for c in climbers
    ]
    with connection.cursor() as cursor:
        # One JSON parameter: psycopg quotes a list of documents one by one, at several times
        # the cost of the UPDATE.
        cursor.execute(
            f"UPDATE {DispatchClimber._meta.db_table} AS c"  # noqa: S608 - a model's table name
            " SET combination_cell = v.combination_cell, pinned_key = v.pinned_key,"
            " verdicts = v.verdicts, blocked = v.blocked"
            " FROM jsonb_to_recordset(%s::jsonb) AS v(id bigint, combination_cell jsonb,"
            " pinned_key text, verdicts jsonb, blocked text)"
            " WHERE c.id = v.id",
            [jsonbytes.dumps(rows, str).decode()],
        )


def _cancel_decided(dispatch: Dispatch, loaded: evidence.Loaded, standing: Standing) -> int:
    """With earlyStop, a decision cancels the queued and pending jobs the dispatch launched for
    the slot; dispatched and running ones finish and their runs are kept."""
    if not loaded.gate.early_stop:
        return 0
    decided = Q()
    any_decided = False
    for climber in standing.climbers:
        for slot in climber.slots:
            if slot.rung in climber.new_verdicts and slot.launched:
                decided |= Q(origin=dispatch.origin_for(slot.rung), cell_key=slot.cell_key)
                any_decided = True
    if not any_decided:
        return 0
    # Cancelled by the decision: an automatic retry among them leaves its attempt's run kept.
    jobs = lock_to_cancel(Job.objects.filter(decided, status__in=NOT_STARTED))
    return mark_canceled(jobs, cause=CancelCause.DECISION)


def _publish(standing: Standing) -> int:
    """A completed run a dispatch counts is published, whoever launched it."""
    ids = {
        run.id
        for climber in standing.climbers
        for slot in climber.slots
        for run in slot.runs
        if run.outcome == "completed" and not run.published
    }
    if not ids:
        return 0
    return Run.objects.filter(pk__in=in_ids(ids), published=False).update(published=True)


def _launch(
    dispatch: Dispatch, loaded: evidence.Loaded, standing: Standing, cancelled: int
) -> list[Job]:
    snapshot = dispatch.snapshot
    room = snapshot["runsInFlightLimit"] - (standing.launched_in_flight - cancelled)
    if room <= 0:
        return []
    rung_index = {r.id: i for i, r in enumerate(loaded.rungs)}
    rungs = {r.id: r for r in loaded.rungs}
    # (rung index, climber index, climber, its row, its current rung, its combination cell): a
    # running climber missing runs has a current rung and a cell.
    candidates = []
    for i, (row, c) in enumerate(zip(loaded.climbers, standing.climbers, strict=True)):
        rung_id, cell = c.current_rung, c.combination_cell
        if c.status == RUNNING and c.missing > 0 and rung_id is not None and cell is not None:
            candidates.append((rung_index[rung_id], i, c, row, rungs[rung_id], cell))
    if snapshot["outerAxis"] == "combination":
        candidates.sort(key=lambda x: (x[1], x[0]))
    else:
        candidates.sort(key=lambda x: (x[0], x[1]))
    if not candidates:
        return []
    cells = {cell_key(rung.pin, cell): rung.target for *_, rung, cell in candidates}
    _lock_cells(sorted(cells))
    free = _room_in_cells(cells)
    jobs: list[Job] = []
    for _, _, climber, row, rung, cell in candidates:
        key = cell_key(rung.pin, cell)
        count = min(climber.missing, free[key], room - len(jobs))
        jobs.extend(
            new_job(
                owner=dispatch.ladder.owner,
                pin=rung.pin,
                combination=row.combination,
                combination_cell=cell,
                origin=dispatch.origin_for(rung.id),
                retry_count=snapshot["retryCount"],
            )
            for _ in range(count)
        )
        if len(jobs) >= room:
            break
    if not jobs:
        return []
    # Checked immediately before enqueuing and again after: a Stop never leaves a refilled queue.
    if not _still_running(dispatch):
        return []
    created = enqueue(jobs)
    if not _still_running(dispatch):
        mark_canceled(created, cause=CancelCause.STOP)
        return []
    return created


def _still_running(dispatch: Dispatch) -> bool:
    return Dispatch.objects.filter(
        pk=dispatch.pk, dispatch_id=dispatch.dispatch_id, status=DispatchStatus.RUNNING
    ).exists()


def launch_passes_for_running() -> int:
    """Start-up: one pass for every running dispatch, and the pass tasks a killed worker left
    running back in the queue."""
    requeue_interrupted()
    ids = list(
        Dispatch.objects.filter(status=DispatchStatus.RUNNING).values_list("ladder_id", flat=True)
    )
    for ladder_id in ids:
        launch_pass_now(ladder_id)
    return len(ids)


def hold_cells(dispatch: Dispatch, climbers: list[DispatchClimber], rungs: list[RungSnap]) -> None:
    """Record the coverage cells the climbers' slots read (of those pinned to a cell)."""
    pinned = [CombinationCell.from_json(c.combination_cell) for c in climbers if c.combination_cell]
    DispatchCell.objects.bulk_create(
        [
            DispatchCell(dispatch=dispatch, cell_key=cell_key(r.pin, cell))
            for cell in pinned
            for r in rungs
        ],
        ignore_conflicts=True,
    )
