"""Run, Stop and Retry: starting a dispatch of a ladder, ending it, and retrying a blocked
climber.

Each holds the dispatch lock (SPEC §5 calls it "the claim"; here that word is a driver's, for
jobs) for its whole transaction: a row lock on the ladder's one dispatch row, which every launch
pass takes too, so they apply one after another. Locks are taken ladder, dispatch, climber, job
(docs/architecture.md, "Locks").
"""

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ladders import evidence, freezing, lifecycle, progress
from ladders.configuration import declared_combinations
from ladders.models import (
    Dispatch,
    DispatchCell,
    DispatchClimber,
    DispatchStatus,
    FinalStanding,
    Ladder,
    Rung,
    mint_dispatch_id,
)
from ladders.passes import hold_cells, launch_pass_now
from ladders.progress import standing_of
from ladders.rung_checks import MAX_RUNGS, rung_problems
from ladders.standing import ClimberStanding, Standing
from ladders.statuses import BLOCKED, FAILED, RETRYABLE_REASONS, RUNNING, UNLAUNCHABLE, UNRATED
from ladders.tasks import launch_pass
from loopweb import memory, tasking
from loopweb.runs.errors import Conflict
from loopweb.runs.models import CancelCause, Combination
from loopweb.runs.resolve import CatalogView, Unresolvable, combination_cell
from loopweb.runs.services import lock_to_cancel, mark_canceled


def start_dispatch(*, ladder: Ladder, run_pass: bool = True, by: User | None = None) -> Dispatch:
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
            final = progress.final_of(dispatch)
            if final is not None:
                lifecycle.dispatch_replaced.send(Dispatch, dispatch=dispatch, final=final)
            DispatchClimber.objects.filter(dispatch=dispatch).delete()
            DispatchCell.objects.filter(dispatch=dispatch).delete()
            # Kept for the dispatch's record; the row it named is the new dispatch's now.
            FinalStanding.objects.filter(dispatch=dispatch).update(dispatch=None)
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
        hold_cells(dispatch, climbers, evidence.snapshot_rungs(snapshot))
        lifecycle.dispatch_started.send(Dispatch, dispatch=dispatch, by=by, previous=previous)
        tasking.enqueue(launch_pass, ladder.pk)
    if run_pass:
        launch_pass_now(ladder.pk)
    return dispatch


def _snapshot(ladder: Ladder, rungs: list[Rung]) -> dict[str, Any]:
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
    climbers: list[DispatchClimber] = []
    keys: set[str] = set()
    cells: set[str] = set()
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


def stop_dispatch(*, ladder: Ladder, cancel_running: bool = False, by: User | None = None) -> int:
    """End the running dispatch and cancel the jobs this ladder's dispatches left in flight:
    queued and pending ones, and with ``cancel_running`` dispatched, starting and running ones.
    Returns how many jobs were cancelled. ``by`` is who pressed Stop."""
    with transaction.atomic():
        # The dispatch lock: a pass in progress finishes (or has not started) before the Stop
        # lands.
        dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
        if dispatch is None or dispatch.status != DispatchStatus.RUNNING:
            raise Conflict("This ladder has no running dispatch to stop.")
        dispatch.status = DispatchStatus.STOPPED
        dispatch.ended_at = timezone.now()
        dispatch.stopped_by = by
        dispatch.save(update_fields=["status", "ended_at", "stopped_by"])
        jobs = lock_to_cancel(evidence.stop_cancels(ladder.pk, cancel_running=cancel_running))
        cancelled = mark_canceled(jobs, cause=CancelCause.STOP)
        # The standing at the moment of the Stop is the dispatch's final one.
        with memory.collector_paused():
            [loaded] = evidence.load([dispatch])
            final = freezing.freeze(
                dispatch,
                standing_of(loaded, running=False),
                cancel_running=cancel_running,
                cancelled=cancelled,
            )
        lifecycle.dispatch_ended.send(
            Dispatch,
            dispatch=dispatch,
            final=final,
            by=by,
            cancel_running=cancel_running,
            cancelled=cancelled,
        )
        return cancelled


def retry_climber(
    *, ladder: Ladder, combination_key: str, run_pass: bool = True, by: User | None = None
) -> None:
    with transaction.atomic():
        dispatch, loaded, standing = _running_standing(ladder)
        for row, climber in zip(loaded.climbers, standing.climbers, strict=True):
            if row.combination_key != combination_key:
                continue
            refusal = _refusal(row, climber, loaded)
            if refusal:
                raise Conflict(
                    f"Only a climber blocked as failing or unlaunchable can be retried: {refusal}."
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


def retry_blocked(*, ladder: Ladder, run_pass: bool = True, by: User | None = None) -> list[str]:
    """Retry every climber blocked as failing or unlaunchable, in one transaction and with one
    launch pass after it. Returns the keys retried, in climb order."""
    with transaction.atomic():
        dispatch, loaded, standing = _running_standing(ladder)
        now = timezone.now()
        rows = [
            row
            for row, climber in zip(loaded.climbers, standing.climbers, strict=True)
            if not _refusal(row, climber, loaded)
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


def _running_standing(ladder: Ladder) -> tuple[Dispatch, evidence.Loaded, Standing]:
    """The ladder's running dispatch, locked like a launch pass (so a Retry never interleaves
    with one), with its evidence and standing; 409 without one."""
    dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
    if dispatch is None or dispatch.status != DispatchStatus.RUNNING:
        raise Conflict("This ladder has no running dispatch; press Run instead.")
    [loaded] = evidence.load([dispatch])
    return dispatch, loaded, standing_of(loaded, running=True)


def _refusal(row: DispatchClimber, climber: ClimberStanding, loaded: evidence.Loaded) -> str:
    """Why the climber cannot be retried ("" when it can), judged on where it stands now: its
    standing computed from the evidence read under the dispatch lock. The block a pass last
    recorded is read only to know a fixed unlaunchable climber no pass has launched yet."""
    key = climber.combination_key
    if climber.status == BLOCKED:
        if climber.blocked_reason in RETRYABLE_REASONS:
            return ""
        if climber.blocked_reason == UNRATED:
            return f"climber {key} is blocked as unrated: re-push its runs or Stop"
        return f"climber {key} is blocked as {climber.blocked_reason}"
    if (
        climber.status == RUNNING
        and row.blocked == UNLAUNCHABLE
        and climber.missing > 0
        and climber.tally is not None
        and climber.tally.in_flight == 0
    ):
        # Unlaunchable is read live: fixing the climber's configuration or catalog entry makes it
        # read running at once, and until a pass has launched its rung (the pass the catalog
        # change enqueued, or this Retry's) it is still the climber the dispatch found blocked.
        return ""
    if climber.status == FAILED:
        position = next(i for i, r in enumerate(loaded.rungs, 1) if r.id == climber.current_rung)
        return f"climber {key} failed at rung {position}, not blocked"
    return f"climber {key} is {climber.status}, not blocked"
