"""Reads of the ladder engine: progress, the summary and the review queue.

Progress is a read: verdicts the gate has resolved that no launch pass has written yet are
computed live here and persisted by the next pass.
"""

from django.db.models import Count, Q

from ladders import evidence
from ladders.models import Dispatch, DispatchCell, DispatchStatus, Ladder, Rung
from ladders.standing import Standing, evaluate
from loopweb.runs.models import UNDER_WAY, CaseVersion, Job, Outcome, Review, Run

COMPLETED = Outcome.COMPLETED.value

NOT_RUN_YET = "notRunYet"
NEEDS_ATTENTION = "needsAttention"


def ladders_for(user):
    """Ladders the user owns or is a reviewer of."""
    if user.is_staff:
        return Ladder.objects.all()
    return Ladder.objects.filter(Q(owner=user) | Q(reviewers=user)).distinct()


def _standing(loaded: evidence.Loaded) -> Standing:
    return evaluate(
        rungs=loaded.rungs,
        climbers=loaded.inputs,
        gate=loaded.gate,
        evidence=loaded.evidence,
        running=loaded.dispatch.status == DispatchStatus.RUNNING,
    )


def dispatch_status(dispatch: Dispatch | None, standing: Standing | None) -> str:
    if dispatch is None:
        return NOT_RUN_YET
    if dispatch.status == DispatchStatus.RUNNING and standing is not None:
        if standing.needs_attention:
            return NEEDS_ATTENTION
    return dispatch.status


def stale_versions(rungs) -> set[tuple[str, str]]:
    """(case, version) pins whose version is ingested while a newer one of the case is too."""
    slugs = {r.case for r in rungs}
    newest: dict[str, tuple] = {}
    ingested = set()
    for slug, version, at in CaseVersion.objects.filter(case__slug__in=slugs).values_list(
        "case__slug", "version", "ingested_at"
    ):
        ingested.add((slug, version))
        if slug not in newest or at > newest[slug][1]:
            newest[slug] = (version, at)
    return {
        (r.case, r.version)
        for r in rungs
        if (r.case, r.version) in ingested and newest[r.case][0] != r.version
    }


def rung_json(rung: Rung, runs_per_cell: int, stale: set) -> dict:
    return {
        "id": rung.rung_id,
        "case": rung.case,
        "version": rung.version,
        "variant": rung.variant,
        "engine": rung.engine,
        "runs": rung.runs,
        "target": rung.runs or runs_per_cell,
        "stale": (rung.case, rung.version) in stale,
    }


def _dispatch_of(ladder: Ladder) -> Dispatch | None:
    try:
        return ladder.dispatch
    except Dispatch.DoesNotExist:
        return None


def ladder_progress(ladder: Ladder, *, viewer=None) -> dict:
    rungs = list(ladder.rungs.order_by("position"))
    stale = stale_versions(rungs)
    dispatch = _dispatch_of(ladder)
    body = {
        "ladder": {"id": ladder.pk, "name": ladder.name, "status": NOT_RUN_YET},
        "rungs": [rung_json(r, ladder.runs_per_cell, stale) for r in rungs],
        "dispatch": None,
        "climbers": [],
    }
    if dispatch is None:
        return body
    [loaded] = evidence.load([dispatch])
    standing = _standing(loaded)
    status = dispatch_status(dispatch, standing)
    snapshot = dispatch.snapshot
    body["ladder"]["status"] = status
    body["dispatch"] = {
        "id": dispatch.dispatch_id,
        "status": status,
        "startedAt": dispatch.started_at,
        "endedAt": dispatch.ended_at,
        "gate": snapshot["gate"],
        "outerAxis": snapshot["outerAxis"],
        "runsInFlightLimit": snapshot["runsInFlightLimit"],
        "retryCount": snapshot["retryCount"],
        "rungs": snapshot["rungs"],
        "slotCounts": standing.slot_counts(),
        "runs": standing.runs(),
        "runsUnreviewed": _unreviewed_count(ladder, loaded, standing),
        "runsUnderWay": _under_way(dispatch),
    }
    rung_cells = {}
    body["climbers"] = []
    for climber in standing.climbers:
        current = next((s for s in climber.slots if s.rung == climber.current_rung), None)
        rung_cells[climber.key] = current.cell_key if current else None
        body["climbers"].append(
            {
                "key": climber.key,
                "label": climber.label,
                "status": climber.status,
                "blockedReason": climber.blocked_reason,
                "problem": climber.problem,
                "attempts": climber.attempts,
                "currentRung": climber.current_rung,
                "cellKey": current.cell_key if current else None,
                "tally": climber.tally.as_json() if climber.tally else None,
                "slots": [
                    {
                        "rung": s.rung,
                        "status": s.status,
                        "cellKey": s.cell_key,
                        "tally": s.tally.as_json() if s.tally else None,
                    }
                    for s in climber.slots
                ],
            }
        )
    return body


def _under_way(dispatch: Dispatch) -> int:
    """Jobs this ladder's dispatches launched that are dispatched, starting or running: what
    Stop and cancel running would additionally cancel."""
    return Job.objects.filter(
        origin__startswith=f"ladder:{dispatch.ladder_id}/", status__in=UNDER_WAY
    ).count()


def _unreviewed(ladder: Ladder, loaded: evidence.Loaded, standing: Standing) -> list[tuple]:
    """Completed slot runs nobody on the ladder has reviewed, in ladder order (rung order, then
    climber order), a run two rungs share listed once under the lower rung:
    (run, rungId, climberKey) triples."""
    entries, seen = [], set()
    for index, rung in enumerate(loaded.rungs):
        for climber in standing.climbers:
            for run in climber.slots[index].runs:
                if run.outcome == COMPLETED and run.id not in seen:
                    seen.add(run.id)
                    entries.append((run, rung.id, climber.key))
    if not entries:
        return []
    reviewed = _reviewed(ladder, loaded.dispatch)
    return [entry for entry in entries if entry[0].id not in reviewed]


def _unreviewed_count(ladder: Ladder, loaded: evidence.Loaded, standing: Standing) -> int:
    """How many entries ``_unreviewed`` lists (progress's ``runsUnreviewed``), without ordering
    them."""
    completed = {
        run.id
        for climber in standing.climbers
        for slot in climber.slots
        for run in slot.runs
        if run.outcome == COMPLETED
    }
    return len(completed - _reviewed(ladder, loaded.dispatch)) if completed else 0


def _reviewed(ladder: Ladder, dispatch: Dispatch) -> set[int]:
    """Runs of the dispatch's cells reviewed by the ladder's owner or one of its reviewers."""
    readers = Q(reviewer=ladder.owner_id) | Q(reviewer__in=ladder.reviewers.values("pk"))
    # By a join with the dispatch's cells rather than thousands of ids.
    cells = DispatchCell.objects.filter(dispatch=dispatch).values("cell_key")
    return set(
        Review.objects.filter(readers, run__cell_key__in=cells).values_list("run_id", flat=True)
    )


def review_queue(ladder: Ladder) -> list[dict]:
    dispatch = _dispatch_of(ladder)
    if dispatch is None:
        return []
    [loaded] = evidence.load([dispatch])
    entries = _unreviewed(ladder, loaded, _standing(loaded))
    finished = dict(
        Run.objects.filter(pk__in=[run.id for run, _, _ in entries]).values_list(
            "id", "finished_at"
        )
    )
    return [
        {
            "run": run.id,
            "rung": rung_id,
            "climber": key,
            "validatorRating": run.rating,
            "finishedAt": finished.get(run.id),
        }
        for run, rung_id, key in entries
    ]


def ladder_summaries(ladders: list[Ladder]) -> list[dict]:
    """One row per ladder, loaded together: a fixed number of queries for any page size."""
    ladders = list(
        Ladder.objects.filter(pk__in=[ladder.pk for ladder in ladders])
        .select_related("dispatch")
        .annotate(
            rung_count=Count("rungs", distinct=True),
            group_count=Count("group_links", distinct=True),
            oneoff_count=Count("combination_links", distinct=True),
        )
        .order_by("name", "id")
    )
    dispatches = [d for d in (_dispatch_of(ladder) for ladder in ladders) if d is not None]
    standings = {
        loaded.dispatch.pk: (_standing(loaded), loaded) for loaded in evidence.load(dispatches)
    }
    rows = []
    for ladder in ladders:
        dispatch = _dispatch_of(ladder)
        standing, loaded = standings.get(dispatch.pk if dispatch else None, (None, None))
        rows.append(
            {
                "id": ladder.pk,
                "name": ladder.name,
                "status": dispatch_status(dispatch, standing),
                "climbers": len(loaded.climbers) if loaded else None,
                "rungs": ladder.rung_count,
                "slotCounts": standing.slot_counts() if standing else None,
                "runs": standing.runs() if standing else None,
            }
        )
    return rows
