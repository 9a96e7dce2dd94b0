"""Writes of the ladder engine: configuration, Run, Stop, Retry and the launch pass.

The dispatch lock (SPEC §5 calls it "the claim"; here that word is a driver's, for jobs): launch
passes, Stop, Retry and Run of one ladder each hold a row lock on the ladder's dispatch for their
whole transaction, so they apply one after another. Locks are always taken ladder, then dispatch,
then the cells' advisory locks, then jobs.
"""

import logging
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from psycopg.types.json import Jsonb

from ladders import evidence, lifecycle, progress
from ladders.config import MAX_RUNGS, rung_problems
from ladders.models import (
    Dispatch,
    DispatchCell,
    DispatchClimber,
    DispatchStatus,
    FinalStanding,
    Ladder,
    LadderCombination,
    LadderGroup,
    Rung,
    mint_dispatch_id,
    mint_rung_id,
)
from ladders.standing import evaluate
from ladders.statuses import BLOCKED, RETRYABLE_REASONS, RUNNING
from ladders.tasks import launch_pass, requeue_interrupted
from loopweb import tasking
from loopweb.runs import changes
from loopweb.runs.cells import CombinationCell, cell_key
from loopweb.runs.errors import Conflict
from loopweb.runs.models import (
    IN_FLIGHT,
    NOT_STARTED,
    Combination,
    GroupMember,
    Job,
    Run,
)
from loopweb.runs.resolve import CatalogView, Unresolvable, combination_cell
from loopweb.runs.services import enqueue, lock_to_cancel, mark_canceled, new_job

log = logging.getLogger(__name__)


# Configuration ------------------------------------------------------------------------------


def save_ladder(*, owner, data: dict, ladder: Ladder | None = None, by=None) -> Ladder:
    """Create or replace a ladder's configuration. Never touches a running dispatch. ``by`` is
    who made the change (the owner unless said otherwise)."""
    problems = rung_problems(data["rungs"])
    if problems:
        raise ValidationError(problems)
    with transaction.atomic():
        created = ladder is None
        if ladder is None:
            ladder = Ladder(owner=owner)
        else:
            # Serialise concurrent edits and Runs of one ladder.
            ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        ladder.name = data["name"]
        ladder.gate = data["gate"]
        ladder.runs_per_cell = data["runsPerCell"]
        ladder.runs_in_flight_limit = data["runsInFlightLimit"]
        ladder.retry_count = data["retryCount"]
        ladder.outer_axis = data["outerAxis"]
        ladder.save()
        changes.touch([changes.ladder_key(ladder.pk)])
        _save_rungs(ladder, data["rungs"])
        LadderGroup.objects.filter(ladder=ladder).delete()
        LadderGroup.objects.bulk_create(
            LadderGroup(ladder=ladder, group_id=g, position=i) for i, g in enumerate(data["groups"])
        )
        LadderCombination.objects.filter(ladder=ladder).delete()
        LadderCombination.objects.bulk_create(
            LadderCombination(ladder=ladder, combination_id=c, position=i)
            for i, c in enumerate(data["combinations"])
        )
        ladder.reviewers.set(data["reviewers"])
        lifecycle.ladder_configured.send(
            Ladder, ladder=ladder, by=by or owner, change="created" if created else "edited"
        )
    return ladder


def _save_rungs(ladder: Ladder, rungs: list[dict]) -> None:
    existing = {r.rung_id: r for r in Rung.objects.filter(ladder=ladder)}
    unknown = [r["id"] for r in rungs if r.get("id") and r["id"] not in existing]
    if unknown:
        index = next(i for i, r in enumerate(rungs) if r.get("id") in unknown)
        raise ValidationError(
            {f"rungs.{index}.id": ["This rung id does not belong to the ladder."]}
        )
    # A rung's pin is its identity: an id given with another pin is a new rung in its place.
    kept = {r["id"] for r in rungs if r.get("id") and _pin_of(existing[r["id"]]) == _pin_of(r)}
    Rung.objects.filter(ladder=ladder).exclude(rung_id__in=kept).delete()
    # Positions are rewritten in two steps so no transient duplicate ever matters.
    to_update, to_create = [], []
    for position, spec in enumerate(rungs):
        rung = existing[spec["id"]] if spec.get("id") in kept else None
        rung = rung or Rung(ladder=ladder, rung_id=mint_rung_id())
        rung.position = position
        rung.case = spec["case"]
        rung.version = spec["version"]
        rung.variant = spec["variant"]
        rung.engine = spec["engine"]
        rung.runs = spec["runs"]
        (to_update if rung.pk else to_create).append(rung)
    Rung.objects.bulk_update(
        to_update, ["position", "case", "version", "variant", "engine", "runs"]
    )
    Rung.objects.bulk_create(to_create)


def _pin_of(rung) -> tuple:
    """A rung's pin, from a stored rung or a configuration's rung."""
    if isinstance(rung, Rung):
        return (rung.case, rung.version, rung.variant, rung.engine)
    return (rung["case"], rung["version"], rung["variant"], rung["engine"])


def reorder_rungs(*, ladder: Ladder, order: list[str], by=None) -> None:
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        changes.touch([changes.ladder_key(ladder.pk)])
        rungs = {r.rung_id: r for r in Rung.objects.filter(ladder=ladder)}
        if len(order) != len(rungs) or set(order) != set(rungs):
            raise ValidationError(
                {"order": ["Give every rung id of the ladder exactly once, and nothing else."]}
            )
        for position, rung_id in enumerate(order):
            rungs[rung_id].position = position
        Rung.objects.bulk_update(rungs.values(), ["position"])
        ladder.save(update_fields=["updated_at"])
        lifecycle.ladder_configured.send(
            Ladder, ladder=ladder, by=by or ladder.owner, change="rungs reordered"
        )


def delete_ladder(*, ladder: Ladder) -> None:
    """Deletes the ladder and its dispatch; the dispatch's jobs stay (they only name it)."""
    with transaction.atomic():
        changes.touch([changes.ladder_key(ladder.pk)])
        ladder.delete()


# Run -----------------------------------------------------------------------------------------


def declared_combinations(ladder: Ladder) -> list[Combination]:
    """Group members in group order, then the one-offs, in declaration order."""
    group_ids = list(
        LadderGroup.objects.filter(ladder=ladder)
        .order_by("position")
        .values_list("group_id", flat=True)
    )
    members = GroupMember.objects.filter(group_id__in=group_ids).select_related("combination")
    by_group: dict[int, list[Combination]] = {}
    for member in members.order_by("position"):
        by_group.setdefault(member.group_id, []).append(member.combination)
    declared = [c for g in group_ids for c in by_group.get(g, [])]
    declared += [
        link.combination
        for link in LadderCombination.objects.filter(ladder=ladder)
        .select_related("combination")
        .order_by("position")
    ]
    return declared


def start_dispatch(*, ladder: Ladder, run_pass: bool = True, by=None) -> Dispatch:
    """Run: snapshot the configuration, resolve the climbers, mint a dispatch, launch. ``by`` is
    who pressed Run."""
    with transaction.atomic():
        ladder = (
            Ladder.objects.select_for_update(of=("self",))
            .select_related("owner__account")
            .get(pk=ladder.pk)
        )
        # The dispatch lock: no pass, Stop or Retry of the previous dispatch runs while it is
        # replaced.
        dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
        if dispatch is not None and dispatch.status == DispatchStatus.RUNNING:
            raise Conflict("A dispatch of this ladder is running; stop it before a new Run.")
        changes.touch([changes.ladder_key(ladder.pk)])
        rungs = list(Rung.objects.filter(ladder=ladder).order_by("position"))
        specs = [
            {"case": r.case, "version": r.version, "variant": r.variant, "engine": r.engine}
            for r in rungs
        ]
        problems = rung_problems(specs)
        if problems:
            raise ValidationError(problems)
        if not rungs:
            raise ValidationError({"rungs": ["Add at least one rung before running the ladder."]})
        if len(rungs) > MAX_RUNGS:
            raise ValidationError({"rungs": [f"A ladder holds at most {MAX_RUNGS} rungs."]})
        climbers = _resolve_climbers(declared_combinations(ladder))
        if not climbers:
            raise ValidationError(
                {"climbers": ["Add a combination group or a combination before running."]}
            )
        snapshot = _snapshot(ladder, rungs)
        previous = dispatch.dispatch_id if dispatch is not None else None
        if dispatch is None:
            dispatch = Dispatch(ladder=ladder)
        else:
            DispatchClimber.objects.filter(dispatch=dispatch).delete()
            DispatchCell.objects.filter(dispatch=dispatch).delete()
            FinalStanding.objects.filter(dispatch=dispatch).delete()
        dispatch.dispatch_id = mint_dispatch_id()
        dispatch.status = DispatchStatus.RUNNING
        dispatch.snapshot = snapshot
        dispatch.started_at = timezone.now()
        dispatch.ended_at = None
        dispatch.passes = 0
        dispatch.started_by = by
        dispatch.stopped_by = None
        dispatch.save()
        for climber in climbers:
            climber.dispatch = dispatch
        DispatchClimber.objects.bulk_create(climbers)
        _hold_cells(
            dispatch,
            [c for c in climbers if c.combination_cell],
            evidence.snapshot_rungs(snapshot),
        )
        lifecycle.dispatch_started.send(Dispatch, dispatch=dispatch, by=by, previous=previous)
        tasking.enqueue(launch_pass, ladder.pk)
    if run_pass:
        launch_pass_now(ladder.pk)
    return dispatch


def _snapshot(ladder: Ladder, rungs: list[Rung]) -> dict:
    limit = ladder.runs_in_flight_limit
    if limit is None:
        limit = ladder.owner.account.runs_in_flight_limit
    return {
        "name": ladder.name,
        "rungs": [
            {
                "id": r.rung_id,
                "case": r.case,
                "version": r.version,
                "variant": r.variant,
                "engine": r.engine,
                "runs": r.runs or ladder.runs_per_cell,
            }
            for r in rungs
        ],
        "gate": ladder.gate,
        "outerAxis": ladder.outer_axis,
        "runsInFlightLimit": limit,
        "retryCount": min(ladder.retry_count, 10),
    }


def _resolve_climbers(declared: list[Combination]) -> list[DispatchClimber]:
    """One climber per distinct combination and per distinct cells; the first declaration wins."""
    catalog = CatalogView.load(declared)
    climbers, keys, cells = [], set(), set()
    for combination in declared:
        if combination.key in keys:
            continue
        try:
            cell = combination_cell(combination, catalog)
        except Unresolvable:
            cell = None
        if cell is not None and cell.key in cells:
            continue
        keys.add(combination.key)
        if cell is not None:
            cells.add(cell.key)
        climbers.append(
            DispatchClimber(
                position=len(climbers),
                combination_key=combination.key,
                combination=combination,
                combination_cell=cell.as_json() if cell else None,
                pinned_key=cell.key if cell else "",
            )
        )
    return climbers


def _hold_cells(dispatch: Dispatch, climbers, rungs) -> None:
    DispatchCell.objects.bulk_create(
        [
            DispatchCell(
                dispatch=dispatch,
                cell_key=cell_key(r.pin, CombinationCell.from_json(c.combination_cell)),
            )
            for c in climbers
            for r in rungs
        ],
        ignore_conflicts=True,
    )


# Stop and Retry ----------------------------------------------------------------------------


def stop_dispatch(*, ladder: Ladder, cancel_running: bool = False, by=None) -> int:
    """End the running dispatch and cancel the jobs this ladder's dispatches left in flight:
    queued and pending ones, and with ``cancel_running`` dispatched, starting and running ones.
    Returns how many jobs were cancelled. ``by`` is who pressed Stop."""
    with transaction.atomic():
        # The dispatch lock: a pass in progress finishes (or has not started) before the Stop
        # lands.
        dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
        if dispatch is None or dispatch.status != DispatchStatus.RUNNING:
            raise Conflict("This ladder has no running dispatch to stop.")
        changes.touch([changes.ladder_key(ladder.pk)])
        dispatch.status = DispatchStatus.STOPPED
        dispatch.ended_at = timezone.now()
        dispatch.stopped_by = by
        dispatch.save(update_fields=["status", "ended_at", "stopped_by"])
        jobs = lock_to_cancel(evidence.stop_cancels(ladder.pk, cancel_running=cancel_running))
        cancelled = mark_canceled(jobs)
        # The standing at the moment of the Stop is the dispatch's final one.
        [loaded] = evidence.load([dispatch])
        final = progress.freeze(dispatch, _evaluate(loaded, running=False))
        lifecycle.dispatch_ended.send(
            Dispatch,
            dispatch=dispatch,
            final=final,
            by=by,
            cancel_running=cancel_running,
            cancelled=cancelled,
        )
        return cancelled


def retry_climber(*, ladder: Ladder, combination_key: str, run_pass: bool = True, by=None) -> None:
    with transaction.atomic():
        dispatch, loaded, standing = _running_standing(ladder)
        for row, climber in zip(loaded.climbers, standing.climbers, strict=True):
            if row.combination_key != combination_key:
                continue
            if not _retryable(climber, standing, dispatch.snapshot["runsInFlightLimit"]):
                raise Conflict(
                    "Only a climber blocked as failing or unlaunchable can be retried; "
                    f"this one is {climber.status}"
                    + (f" ({climber.blocked_reason})" if climber.blocked_reason else "")
                    + "."
                )
            row.retried_at = timezone.now()
            row.save(update_fields=["retried_at"])
            lifecycle.climber_retried.send(Dispatch, dispatch=dispatch, climber=row, by=by)
            tasking.enqueue(launch_pass, ladder.pk)
            break
        else:
            raise ValidationError(
                {"climber": [f"The dispatch has no climber with key {combination_key!r}."]}
            )
    if run_pass:
        launch_pass_now(ladder.pk)


def retry_blocked(*, ladder: Ladder, run_pass: bool = True, by=None) -> list[str]:
    """Retry every climber blocked as failing or unlaunchable, in one transaction and with one
    launch pass after it. Returns the keys retried, in climb order."""
    with transaction.atomic():
        dispatch, loaded, standing = _running_standing(ladder)
        now = timezone.now()
        rows = [
            row
            for row, climber in zip(loaded.climbers, standing.climbers, strict=True)
            if climber.status == BLOCKED and climber.blocked_reason in RETRYABLE_REASONS
        ]
        if not rows:
            raise Conflict("No climber is blocked as failing or unlaunchable.")
        for row in rows:
            row.retried_at = now
        DispatchClimber.objects.bulk_update(rows, ["retried_at"])
        for row in rows:
            lifecycle.climber_retried.send(Dispatch, dispatch=dispatch, climber=row, by=by)
        tasking.enqueue(launch_pass, ladder.pk)
    if run_pass:
        launch_pass_now(ladder.pk)
    return [row.combination_key for row in rows]


def _running_standing(ladder: Ladder):
    """The ladder's running dispatch, locked, with its evidence and standing; 409 without one."""
    # Locked like a launch pass, so a Retry never interleaves with one.
    dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
    if dispatch is None or dispatch.status != DispatchStatus.RUNNING:
        raise Conflict("This ladder has no running dispatch; press Run instead.")
    changes.touch([changes.ladder_key(ladder.pk)])
    [loaded] = evidence.load([dispatch])
    return dispatch, loaded, _evaluate(loaded)


def _retryable(climber, standing, limit: int) -> bool:
    if climber.status == BLOCKED:
        return climber.blocked_reason in RETRYABLE_REASONS
    # Fixing an unlaunchable climber's configuration or catalog entry makes it read running at
    # once, yet nothing launches it until a pass runs: its Retry is that pass. Only such a
    # climber reads running with runs missing, none in flight and room under the limit.
    return (
        climber.status == RUNNING
        and climber.missing > 0
        and climber.tally is not None
        and climber.tally.in_flight == 0
        and standing.launched_in_flight < limit
    )


# The launch pass ---------------------------------------------------------------------------


@dataclass
class PassReport:
    dispatch: str
    launched: int
    cancelled: int
    published: int
    finished: bool


def _evaluate(loaded: evidence.Loaded, running: bool = True):
    return evaluate(
        rungs=loaded.rungs,
        climbers=loaded.inputs,
        gate=loaded.gate,
        evidence=loaded.evidence,
        running=running,
    )


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
        [loaded] = evidence.load([dispatch])
        standing = _evaluate(loaded)

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
            changes.touch([changes.ladder_key(ladder_id)])
        dispatch.passes += 1
        dispatch.save(update_fields=["status", "ended_at", "passes"])
        if finished:
            final = progress.freeze(dispatch, standing.ended())
            lifecycle.dispatch_ended.send(
                Dispatch, dispatch=dispatch, final=final, by=None, cancel_running=False, cancelled=0
            )
        return PassReport(dispatch.dispatch_id, len(jobs), cancelled, published, finished)


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
    less its counted runs and every job of it in flight, whoever launched them."""
    keys = list(targets)
    counted = evidence.count_by_cell(Run.objects.filter(cell_key__in=keys, counted=True))
    in_flight = evidence.count_by_cell(Job.objects.filter(cell_key__in=keys, status__in=IN_FLIGHT))
    return {
        key: max(0, target - min(counted.get(key, 0), target) - in_flight.get(key, 0))
        for key, target in targets.items()
    }


def _record(dispatch, loaded, standing) -> None:
    """Pin newly resolved cells, write newly decided verdicts and note blocks, announcing the
    new ones."""
    changed, pinned, blocked = [], [], []
    for row, climber in zip(loaded.climbers, standing.climbers, strict=True):
        if climber.pin_now:
            row.combination_cell = climber.combination_cell.as_json()
            row.pinned_key = climber.combination_cell.key
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
        _hold_cells(dispatch, pinned, loaded.rungs)
    if blocked:
        lifecycle.climbers_blocked.send(Dispatch, dispatch=dispatch, climbers=blocked)


def _write_climbers(climbers: list[DispatchClimber]) -> None:
    """One UPDATE for every changed climber, however many decisions the pass recorded."""
    if connection.vendor != "postgresql":
        DispatchClimber.objects.bulk_update(
            climbers, ["combination_cell", "pinned_key", "verdicts", "blocked"]
        )
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {DispatchClimber._meta.db_table} AS c"  # noqa: S608 - a model's table name
            " SET combination_cell = v.combination_cell, pinned_key = v.pinned_key,"
            " verdicts = v.verdicts, blocked = v.blocked"
            " FROM unnest(%s::bigint[], %s::jsonb[], %s::text[], %s::jsonb[], %s::text[])"
            " AS v(id, combination_cell, pinned_key, verdicts, blocked)"
            " WHERE c.id = v.id",
            [
                [c.pk for c in climbers],
                [
                    None if c.combination_cell is None else Jsonb(c.combination_cell)
                    for c in climbers
                ],
                [c.pinned_key for c in climbers],
                [Jsonb(c.verdicts) for c in climbers],
                [c.blocked for c in climbers],
            ],
        )


def _cancel_decided(dispatch, loaded, standing) -> int:
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
    return mark_canceled(lock_to_cancel(Job.objects.filter(decided, status__in=NOT_STARTED)))


def _publish(standing) -> int:
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
    return Run.objects.filter(pk__in=ids, published=False).update(published=True)


def _launch(dispatch, loaded, standing, cancelled: int) -> list[Job]:
    snapshot = dispatch.snapshot
    room = snapshot["runsInFlightLimit"] - (standing.launched_in_flight - cancelled)
    if room <= 0:
        return []
    rung_index = {r.id: i for i, r in enumerate(loaded.rungs)}
    rungs = {r.id: r for r in loaded.rungs}
    candidates = [
        (rung_index[c.current_rung], i, c, row)
        for i, (row, c) in enumerate(zip(loaded.climbers, standing.climbers, strict=True))
        if c.status == RUNNING and c.missing > 0
    ]
    if snapshot["outerAxis"] == "combination":
        candidates.sort(key=lambda x: (x[1], x[0]))
    else:
        candidates.sort(key=lambda x: (x[0], x[1]))
    if not candidates:
        return []
    cells = {}
    for _, _, climber, _ in candidates:
        rung = rungs[climber.current_rung]
        cells[cell_key(rung.pin, climber.combination_cell)] = rung.target
    _lock_cells(sorted(cells))
    free = _room_in_cells(cells)
    jobs = []
    for _, _, climber, row in candidates:
        rung = rungs[climber.current_rung]
        key = cell_key(rung.pin, climber.combination_cell)
        count = min(climber.missing, free[key], room - len(jobs))
        jobs.extend(
            new_job(
                owner=dispatch.ladder.owner,
                pin=rung.pin,
                combination=row.combination,
                combination_cell=climber.combination_cell,
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
        mark_canceled(created)
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


# Journaling -------------------------------------------------------------------------------

METRIC_FIELDS = ("usd_micros", "input_tokens", "output_tokens")


def journal_dispatch(*, ladder: Ladder, evalset_hash: str, journaled_by=None):
    """Journal the latest dispatch's standing as one run of an evalset: rung slots passed and
    failed, the runs its slots read, and their cost when the runs report it."""
    from evalsets.models import Evalset
    from evalsets.services import journal_run

    evalset = Evalset.objects.filter(hash=evalset_hash).first()
    if evalset is None:
        raise ValidationError({"evalset": [f"No evalset has the hash {evalset_hash!r}."]})
    with transaction.atomic():
        dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
        if dispatch is None:
            raise Conflict("This ladder has not been run; there is nothing to journal.")
        final = progress.final_of(dispatch)
        if final is not None:
            counts = final.slot_counts
            run_ids = {r for c in final.climbers for ids in c["runs"] for r in ids}
        else:
            [loaded] = evidence.load([dispatch])
            standing = _evaluate(loaded, running=dispatch.status == DispatchStatus.RUNNING)
            counts = standing.slot_counts()
            run_ids = {r for c in standing.climbers for s in c.slots for r in s.run_ids}
        summary = {
            "passed": counts["passed"],
            "failed": counts["failed"],
            "total": counts["passed"] + counts["failed"],
            "runs": len(run_ids),
        }
        decided = summary["total"]
        if decided:
            summary["error_rate"] = counts["failed"] / decided
        totals = dict.fromkeys(METRIC_FIELDS, 0)
        reported = set()
        for record in Run.objects.filter(pk__in=run_ids).values_list("record", flat=True):
            metrics = (record or {}).get("metrics") or {}
            for name in METRIC_FIELDS:
                value = metrics.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    totals[name] += value
                    reported.add(name)
        summary.update({name: totals[name] for name in reported})
        return journal_run(evalset=evalset, summary=summary, journaled_by=journaled_by)
