"""Reads of the ladder engine: progress, the summary and the review queue.

Progress is a read: verdicts the gate has resolved that no launch pass has written yet are
computed live here and persisted by the next pass. A dispatch that has ended is read from the
final standing written when it ended (``ladders.progress``).
"""

from django.db.models import Count, OuterRef, Q, Subquery

from ladders import evidence, progress
from ladders.models import Dispatch, DispatchClimber, DispatchStatus, FinalStanding, Ladder
from ladders.progress import rung_json, stale_versions
from ladders.statuses import NEEDS_ATTENTION, NOT_RUN_YET, SLOT_STATUSES
from loopweb.runs.models import Run

__all__ = [
    "NEEDS_ATTENTION",
    "NOT_RUN_YET",
    "ladder_config_json",
    "ladder_progress",
    "ladder_summaries",
    "ladders_for",
    "review_queue",
    "rung_json",
    "stale_versions",
]


def ladders_for(user):
    """Ladders the user owns or is a reviewer of."""
    if user.is_staff:
        return Ladder.objects.all()
    return Ladder.objects.filter(Q(owner=user) | Q(reviewers=user)).distinct()


def ladder_progress(ladder: Ladder) -> dict:
    """GET /ladders/{id}/progress, computed afresh (``ladders.shared_progress`` shares it)."""
    return progress.compute(ladder)


def _queue_entries(dispatch: Dispatch, climbers: list[dict]) -> list[tuple[int, str, str]]:
    """Completed slot runs in ladder order (rung order, then climber order), a run two rungs
    share listed once under the lower rung: (runId, rungId, climberKey) triples.
    ``climbers``: ``{"key", "completed": [[runId, …] per slot]}`` in climber order."""
    entries, seen = [], set()
    for index, rung in enumerate(dispatch.snapshot["rungs"]):
        for climber in climbers:
            for run_id in climber["completed"][index]:
                if run_id not in seen:
                    seen.add(run_id)
                    entries.append((run_id, rung["id"], climber["key"]))
    return entries


def _slot_runs(dispatch: Dispatch) -> list[dict]:
    final = progress.final_of(dispatch)
    if final is not None:
        return [{"key": c["body"]["key"], "completed": c["completed"]} for c in final.climbers]
    [loaded] = evidence.load([dispatch])
    standing = progress.standing_of(loaded, running=dispatch.status == DispatchStatus.RUNNING)
    return [
        {"key": c.combination_key, "completed": progress.completed_runs(c)}
        for c in standing.climbers
    ]


def review_queue(ladder: Ladder) -> list[dict]:
    """The completed slot runs of the latest dispatch that nobody on the ladder has reviewed."""
    return slot_run_entries(ladder, unreviewed=True)


def slot_run_entries(ladder: Ladder, *, unreviewed: bool = False) -> list[dict]:
    """The completed slot runs of the latest dispatch in ladder order (only those nobody on the
    ladder has reviewed, with ``unreviewed``)."""
    dispatch = progress.dispatch_of(ladder)
    if dispatch is None:
        return []
    entries = _queue_entries(dispatch, _slot_runs(dispatch))
    if unreviewed:
        done = progress.reviewed(ladder, [run_id for run_id, _, _ in entries])
        entries = [entry for entry in entries if entry[0] not in done]
    runs = {
        run_id: (rating, finished_at)
        for run_id, rating, finished_at in Run.objects.filter(
            pk__in=[run_id for run_id, _, _ in entries]
        ).values_list("id", "validator_rating", "finished_at")
    }
    return [
        {
            "run": run_id,
            "rung": rung_id,
            "climber": key,
            "validatorRating": runs[run_id][0],
            "finishedAt": runs[run_id][1],
        }
        for run_id, rung_id, key in entries
        if run_id in runs
    ]


def _ended_runs(dispatch: Dispatch, climbers: int) -> dict:
    """An ended dispatch's runs: every slot is passed, failed or skipped, so done in full once
    the jobs it launched for it finish; only those jobs are read live."""
    targets = {r["id"]: r["runs"] for r in dispatch.snapshot["rungs"]}
    launched = evidence.launched_in_flight(dispatch)
    total = climbers * sum(targets.values())
    done = total - sum(min(n, targets.get(rung, 0)) for (rung, _), n in launched.items())
    return {
        "total": total,
        "done": done,
        "inFlight": sum(launched.values()),
        "skippedByStop": 0,
        "reused": (dispatch.reused or {}).get("runs", 0),
    }


def ladder_summaries(ladders: list[Ladder]) -> list[dict]:
    """One row per ladder, loaded together: a fixed number of queries for any page size, and one
    more per ladder whose dispatch has ended (its jobs still in flight). A stopped dispatch's
    runs are read from its final standing's climbers (one query for them all), which say how
    many runs the Stop left unrun."""
    climbers = (
        DispatchClimber.objects.filter(dispatch__ladder=OuterRef("pk"))
        .values("dispatch")
        .annotate(n=Count("id"))
        .values("n")
    )
    ladders = list(
        Ladder.objects.filter(pk__in=[ladder.pk for ladder in ladders])
        .select_related("dispatch", "dispatch__final")
        .defer("dispatch__final__slots")
        .annotate(rung_count=Count("rungs"), climber_count=Subquery(climbers))
        .order_by("name", "id")
    )
    dispatches = {ladder.pk: progress.dispatch_of(ladder) for ladder in ladders}
    live = [d for d in dispatches.values() if d is not None and progress.final_of(d) is None]
    parts = {
        loaded.dispatch.pk: [
            progress.live_part(c)
            for c in progress.standing_of(
                loaded, running=loaded.dispatch.status == DispatchStatus.RUNNING
            ).climbers
        ]
        for loaded in evidence.load(live)
    }
    stopped = [
        d.pk
        for d in dispatches.values()
        if d is not None and d.status == DispatchStatus.STOPPED and progress.final_of(d)
    ]
    standings = (
        {f.dispatch_id: f for f in FinalStanding.objects.filter(dispatch__in=stopped)}
        if stopped
        else {}
    )
    rows = []
    for ladder in ladders:
        dispatch = dispatches[ladder.pk]
        row = {
            "id": ladder.pk,
            "name": ladder.name,
            "status": NOT_RUN_YET,
            "climbers": None,
            "rungs": ladder.rung_count,
            "configuredRungs": ladder.rung_count,
            "slotCounts": None,
            "runs": None,
        }
        if dispatch is not None:
            final = progress.final_of(dispatch)
            if final is None:
                figures = progress.figures(dispatch, parts[dispatch.pk], runs_under_way=0)
                row.update(
                    status=figures["status"], slotCounts=figures["slotCounts"], runs=figures["runs"]
                )
            else:
                held = standings.get(dispatch.pk)
                row.update(
                    status=dispatch.status,
                    slotCounts={s: final.slot_counts.get(s, 0) for s in SLOT_STATUSES},
                    runs=_ended_runs(dispatch, ladder.climber_count or 0)
                    if held is None
                    else progress.runs_of(progress.frozen_parts(dispatch, held), dispatch),
                )
            row["climbers"] = ladder.climber_count or 0
            # The slot counts and runs are the dispatch's: so is the rung count beside them.
            row["rungs"] = len(dispatch.snapshot["rungs"])
        rows.append(row)
    return rows


def ladder_config_json(ladder: Ladder, stale: set) -> dict:
    return {
        "id": ladder.pk,
        "name": ladder.name,
        "rungs": [rung_json(r, ladder.runs_per_cell, stale) for r in ladder.rungs.all()],
        "groups": [link.group_id for link in ladder.group_links.all()],
        "combinations": [link.combination_id for link in ladder.combination_links.all()],
        "gate": ladder.gate,
        "runsPerCell": ladder.runs_per_cell,
        "runsInFlightLimit": ladder.runs_in_flight_limit,
        "retryCount": ladder.retry_count,
        "outerAxis": ladder.outer_axis,
        "reviewers": sorted(u.username for u in ladder.reviewers.all()),
        "owner": ladder.owner.username,
        "rubric": ladder.rubric,
        "reviewsPerRun": ladder.reviews_per_run,
        "assignedReviewers": sorted(u.username for u in ladder.assignees.all()),
        "reservationMinutes": ladder.reservation_minutes,
    }
