"""Progress, built climber by climber.

A board is the ladder's configuration, its dispatch's figures and one part per climber, which
carries what the figures add up beside the climber as progress shows it: when a cell changes
only the climbers holding it are computed again, and the figures summed anew
(``ladders.shared_progress``). A running dispatch's parts come from its evidence through the
gate (``ladders.standing``) and are kept with its climbers' catalog entries and ids (``Live``),
not with the evidence; an ended one's come from its final standing.
"""

import hashlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db.models import Count, Q

from ladders import access, document, evidence, origins
from ladders.models import (
    Dispatch,
    DispatchCell,
    DispatchClimber,
    DispatchStatus,
    FinalStanding,
    Ladder,
    Rung,
)
from ladders.standing import ClimberStanding, SlotStanding, Standing, evaluate, unrun
from ladders.statuses import (
    BLOCKED,
    NEEDS_ATTENTION,
    NOT_RUN_YET,
    RUNNING,
    SKIPPED,
    SLOT_STATUSES,
    STOPPED,
)
from loopweb import memory, stats
from loopweb.runs import jsonbytes
from loopweb.runs.arrays import in_ids, in_keys
from loopweb.runs.models import UNDER_WAY, CaseVersion, Outcome, Review
from loopweb.runs.resolve import CatalogView

COMPLETED = Outcome.COMPLETED.value


@dataclass(slots=True)
class Part:
    """One climber as progress shows it, and what it adds to the dispatch's figures."""

    key: str
    body: dict
    cells: frozenset[str]
    pinned: bool
    status: str
    slot_counts: Counter
    total: int
    done: int
    launched: int  # the dispatch's own jobs in flight for its slots
    completed: frozenset[int]  # completed runs its slots hold
    runs: tuple[tuple[int, ...], ...] = ()  # the runs each of its slots reads, in slot order
    unreviewed: int = 0
    skipped_by_stop: int = 0  # of ``done``, the runs a Stop left unrun (a stopped climber's)
    # The body encoded and its digest (a board's version names its parts by theirs), made once.
    encoding: bytes = field(default=b"", repr=False)
    digested: bytes = field(default=b"", repr=False)
    memo: dict = field(default_factory=dict, repr=False, compare=False)  # a console row, …

    @property
    def encoded(self) -> bytes:
        if not self.encoding:
            self.encoding = jsonbytes.dumps(self.body, str)
        return self.encoding

    @property
    def digest(self) -> bytes:
        if not self.digested:
            self.digested = hashlib.blake2b(self.encoded, digest_size=8).digest()
        return self.digested


@dataclass(slots=True)
class Head:
    ladder: dict
    rungs: list[dict]


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


def head(ladder: Ladder) -> Head:
    rungs = list(ladder.rungs.order_by("position"))
    stale = stale_versions(rungs)
    return Head(
        ladder={"id": ladder.pk, "name": ladder.name, "status": NOT_RUN_YET},
        rungs=[rung_json(r, ladder.runs_per_cell, stale) for r in rungs],
    )


def dispatch_of(ladder: Ladder) -> Dispatch | None:
    try:
        return ladder.dispatch
    except Dispatch.DoesNotExist:
        return None


def standing_of(loaded: evidence.Loaded, *, running: bool, whole: bool = True) -> Standing:
    return evaluate(
        rungs=loaded.rungs, climbers=loaded.inputs, gate=loaded.gate, evidence=loaded.evidence,
        running=running, whole=whole,
    )  # fmt: skip


def climber_json(climber: ClimberStanding, slots: list[dict] | None = None) -> dict:
    """The climber as progress shows it; ``slots``: its slots' JSON, if made already."""
    current = next((s for s in climber.slots if s.rung == climber.current_rung), None)
    return {
        "key": climber.combination_key,
        "label": climber.label,
        "status": climber.status,
        "blockedReason": climber.blocked_reason,
        "problem": climber.problem,
        "attempts": climber.attempts,
        "currentRung": climber.current_rung,
        "cellKey": current.cell_key if current else None,
        "tally": climber.tally.as_json() if climber.tally else None,
        "slots": [slot_json(s) for s in climber.slots] if slots is None else slots,
    }


def slot_json(slot: SlotStanding) -> dict:
    tally = slot.tally
    return {
        "rung": slot.rung,
        "status": slot.status,
        "cellKey": slot.cell_key,
        "tally": tally.as_json() if tally else None,
        # The 95 % Wilson interval of its passing runs of its counted ones (docs/statistics.md).
        "passRate": stats.shared_pass_rate(tally.passing, tally.counted) if tally else None,
    }


def completed_runs(climber: ClimberStanding) -> list[list[int]]:
    """The completed runs each of the climber's slots holds."""
    return [[r.id for r in slot.runs if r.outcome == COMPLETED] for slot in climber.slots]


def live_part(climber: ClimberStanding) -> Part:
    # One walk over the slots (ten thousand of them on a large board).
    cells, statuses, runs, completed, slots = set(), Counter(), [], set(), []
    total = done = launched = 0
    for slot in climber.slots:
        if slot.cell_key:
            cells.add(slot.cell_key)
        statuses[slot.status] += 1
        total += slot.target
        done += slot.done
        launched += slot.launched
        ids = []
        for run in slot.runs:
            ids.append(run.id)
            if run.outcome == COMPLETED:
                completed.add(run.id)
        runs.append(tuple(ids))
        slots.append(slot_json(slot))
    return Part(
        key=climber.combination_key,
        body=climber_json(climber, slots),
        cells=frozenset(cells),
        pinned=climber.combination_cell is not None and not climber.pin_now,
        status=climber.status,
        slot_counts=statuses,
        total=total,
        done=done,
        launched=launched,
        completed=frozenset(completed),
        runs=tuple(runs),
        skipped_by_stop=climber.skipped_by_stop,
    )


@dataclass(slots=True)
class Live:
    """The parts of a running dispatch (or an ended one with no final standing), and the catalog
    entries its climbers were resolved by: when some cells change, only the climbers holding
    them are computed again (``after_change``); a change to the catalog computes them all."""

    parts: list[Part]
    catalog: CatalogView
    #: Each climber's row and combination by its key: a climber read again must be the same one.
    climbers: dict[str, tuple[int, int | None]]


@memory.collector_paused()
def live(ladder: Ladder, dispatch: Dispatch) -> Live:
    """Every climber's part of a dispatch read from its evidence, with their unreviewed runs."""
    [loaded] = evidence.load([dispatch])
    standing = standing_of(loaded, running=dispatch.status == DispatchStatus.RUNNING)
    parts = [live_part(c) for c in standing.climbers]
    # Every slot run of a dispatch whose climbers are all pinned is in its held cells.
    whole = all(p.pinned for p in parts)
    count_unreviewed(ladder, parts, dispatch=dispatch if whole else None)
    return Live(parts, loaded.catalog, _identities(loaded.climbers))


def _identities(climbers: Iterable[DispatchClimber]) -> dict[str, tuple[int, int | None]]:
    return {c.combination_key: (c.pk, c.combination_id) for c in climbers}


@memory.collector_paused()
def after_change(ladder: Ladder, dispatch: Dispatch, live: Live, indexes: list[int]) -> Live:
    """``live`` after some of its cells changed: the climbers at ``indexes`` (pinned, holding
    them) read again, whole, and computed again; the others kept. ``evidence.Stale`` when one of
    them is gone or is another (a Run between the look and the read replaced them)."""
    keys = {live.parts[i].key for i in indexes}
    [loaded] = evidence.load([dispatch], only=keys, catalog=live.catalog)
    read = _identities(loaded.climbers)
    if read != {key: live.climbers.get(key) for key in keys}:
        raise evidence.Stale("a climber read again is gone or is another")
    standing = standing_of(loaded, running=dispatch.status == DispatchStatus.RUNNING)
    fresh = {c.combination_key: live_part(c) for c in standing.climbers}
    cells = {key for part in fresh.values() for key in part.cells}
    completed = {r for part in fresh.values() for r in part.completed}
    _count_unreviewed(list(fresh.values()), reviewed(ladder, completed, cells=cells))
    parts = list(live.parts)
    for i in indexes:
        parts[i] = fresh[parts[i].key]
    return Live(parts, live.catalog, live.climbers)


def user_names(*user_ids) -> dict[int, str]:
    """Usernames by id, of the users that still exist."""
    ids = {i for i in user_ids if i is not None}
    if not ids:
        return {}
    model = get_user_model()
    return dict(model.objects.filter(pk__in=ids).values_list("pk", model.USERNAME_FIELD))


def frozen_parts(
    dispatch: Dispatch, final: FinalStanding, previous: list[Part] | None = None
) -> list[Part]:
    """Parts of an ended dispatch: its final standing, with the jobs it launched still in flight
    read live. ``previous`` parts of the same standing keep their encoding and memo."""
    targets = {r["id"]: r["runs"] for r in dispatch.snapshot["rungs"]}
    launched = evidence.launched_in_flight(dispatch)
    parts = []
    for i, climber in enumerate(final.climbers):
        body = document.ended(climber["body"])
        slots = body["slots"]
        in_flight = [launched.get((s["rung"], s["cellKey"]), 0) for s in slots]
        skipped_by_stop = climber.get("skippedByStop")
        if skipped_by_stop is None:  # a standing written before they were counted
            skipped_by_stop = _skipped_by_stop(body, climber["runs"], in_flight, targets)
        part = Part(
            key=body["key"],
            body=body,
            cells=frozenset(s["cellKey"] for s in slots if s["cellKey"]),
            pinned=True,
            status=body["status"],
            slot_counts=Counter(s["status"] for s in slots),
            total=sum(targets[s["rung"]] for s in slots),
            # Every slot of an ended dispatch is passed, failed or skipped: done in full once
            # the jobs it launched for it finish.
            done=sum(
                targets[s["rung"]] - min(n, targets[s["rung"]])
                for s, n in zip(slots, in_flight, strict=True)
            ),
            launched=sum(in_flight),
            completed=frozenset(r for ids in climber["completed"] for r in ids),
            runs=tuple(tuple(ids) for ids in climber["runs"]),
            skipped_by_stop=skipped_by_stop,
            encoding=previous[i].encoding if previous else b"",
            digested=previous[i].digested if previous else b"",
        )
        if previous:
            part.memo = previous[i].memo  # the same body: the same rows
        parts.append(part)
    return parts


def _skipped_by_stop(
    body: dict, runs: list[list[int]], in_flight: list[int], targets: dict[str, int]
) -> int:
    """A stopped climber's runs the Stop left unrun, from its stored slots (the jobs in flight
    read now stand for those at the Stop)."""
    if body["status"] != STOPPED:
        return 0
    return sum(
        unrun(targets[s["rung"]], len(held), n)
        for s, held, n in zip(body["slots"], runs, in_flight, strict=True)
        if s["status"] == SKIPPED
    )


def final_of(dispatch: Dispatch) -> FinalStanding | None:
    """The final standing of an ended dispatch (none for one ended before they were recorded:
    it is read from its evidence, as ended)."""
    if dispatch.status == DispatchStatus.RUNNING:
        return None
    try:
        return dispatch.final
    except FinalStanding.DoesNotExist:
        return None


def reviewed(
    ladder: Ladder,
    run_ids: Iterable[int],
    *,
    dispatch: Dispatch | None = None,
    cells: Iterable[str] | None = None,
) -> set[int]:
    """Which of these runs the ladder's owner or one of its reviewers reviewed; found by the
    cells of the ``dispatch`` they are all slot runs of, or the ``cells`` they are all in,
    rather than by 30,000 ids (a parameter as costly to send as the query)."""
    ids = set(run_ids)
    if not ids:
        return set()
    if dispatch is not None:
        held = DispatchCell.objects.filter(dispatch=dispatch).values("cell_key")
        scope = Q(run__cell_key__in=held)
    elif cells is not None:
        scope = Q(run__cell_key__in=in_keys(cells))
    else:
        scope = Q(run_id__in=in_ids(ids))
    # No default ordering, whose columns DISTINCT would sort by too.
    found = Review.objects.filter(access.by_readers(ladder), scope).order_by().values_list("run_id")
    return {run_id for (run_id,) in found.distinct()} & ids


def count_unreviewed(
    ladder: Ladder, parts: list[Part], *, dispatch: Dispatch | None = None
) -> None:
    """Each part's completed runs no reader of the ladder reviewed (``dispatch``: see
    ``reviewed``)."""
    completed = {r for p in parts for r in p.completed}
    _count_unreviewed(parts, reviewed(ladder, completed, dispatch=dispatch))


def _count_unreviewed(parts: list[Part], done: set[int] | frozenset[int]) -> None:
    for part in parts:
        part.unreviewed = len(part.completed - done)


def under_way(ladder_id: int) -> int:
    """Jobs the ladder's dispatches launched that are under way: what Stop and cancel running
    would add to a plain Stop."""
    return under_way_of([ladder_id])[ladder_id]


def under_way_of(ladder_ids: Iterable[int]) -> dict[int, int]:
    """``under_way`` of each of the ladders, in one query however many they are."""
    counts = dict.fromkeys(ladder_ids, 0)
    if not counts:
        return counts
    jobs = evidence.stop_cancels(*counts, cancel_running=True).filter(status__in=UNDER_WAY)
    # Per origin (a dispatch's rung), a few rows per ladder, summed per ladder here.
    for origin, n in jobs.values("origin").annotate(n=Count("id")).values_list("origin", "n"):
        ladder_id = origins.ladder_id_of(origin)
        if ladder_id in counts:  # always: the jobs were found by the ladders' prefixes
            counts[ladder_id] += n
    return counts


def status_of(dispatch: Dispatch | None, parts: list[Part]) -> str:
    """The ladder's status word; Needs attention is derived whenever it is reported."""
    if dispatch is None:
        return NOT_RUN_YET
    if dispatch.status == DispatchStatus.RUNNING:
        launched = sum(p.launched for p in parts)
        statuses = {p.status for p in parts}
        if launched == 0 and RUNNING not in statuses and BLOCKED in statuses:
            return NEEDS_ATTENTION
    return dispatch.status


def runs_of(parts: list[Part], dispatch: Dispatch | None = None) -> dict:
    """The dispatch's runs: ``done`` counts what needs no more executing (a slot a Stop skipped
    whole: ``skippedByStop`` says how many it left unrun); ``reused``, the runs from before the
    Run its first pass found its slots reading."""
    return {
        "total": sum(p.total for p in parts),
        "done": sum(p.done for p in parts),
        "inFlight": sum(p.launched for p in parts),
        "skippedByStop": sum(p.skipped_by_stop for p in parts),
        "reused": (dispatch.reused or {}).get("runs", 0) if dispatch is not None else 0,
    }


def figures(dispatch: Dispatch, parts: list[Part], *, runs_under_way: int) -> dict:
    snapshot = dispatch.snapshot
    counts = dict.fromkeys(SLOT_STATUSES, 0)
    for part in parts:
        for status, n in part.slot_counts.items():
            counts[status] += n
    status = status_of(dispatch, parts)
    return {
        "id": dispatch.dispatch_id,
        "status": status,
        "startedAt": dispatch.started_at,
        "endedAt": dispatch.ended_at,
        "gate": snapshot["gate"],
        "outerAxis": snapshot["outerAxis"],
        "runsInFlightLimit": snapshot["runsInFlightLimit"],
        "retryCount": snapshot["retryCount"],
        "rungs": snapshot["rungs"],
        "slotCounts": counts,
        "runs": runs_of(parts, dispatch),
        "runsUnreviewed": sum(p.unreviewed for p in parts),
        "runsUnderWay": runs_under_way,
    }


def parts_of(ladder: Ladder, dispatch: Dispatch) -> list[Part]:
    """The dispatch's parts with their unreviewed counts."""
    final = final_of(dispatch)
    if final is None:
        return live(ladder, dispatch).parts
    parts = frozen_parts(dispatch, final)
    count_unreviewed(ladder, parts)
    return parts


#: What GET /ladders/{id}/progress answers, for the OpenAPI schema (API.md says the rest).
SCHEMA = {
    "type": "object",
    "required": ["schemaVersion", "ladder", "rungs", "dispatch", "climbers", "version"],
    "properties": {
        "schemaVersion": {"type": "integer", "const": document.SCHEMA_VERSION},
        "ladder": {"type": "object"},
        "rungs": {"type": "array", "items": {"type": "object"}},
        "dispatch": {"type": ["object", "null"]},
        "climbers": {"type": "array", "items": {"type": "object"}},
        "version": {"type": "string"},
        "since": {"type": ["string", "null"]},
    },
}


def body(head: Head, dispatch: Dispatch | None, parts: list[Part], *, runs_under_way: int):
    """Progress as GET /ladders/{id}/progress reports it."""
    ladder = dict(head.ladder)
    result = {
        "schemaVersion": document.SCHEMA_VERSION,
        "ladder": ladder,
        "rungs": head.rungs,
        "dispatch": None,
        "climbers": [],
    }
    if dispatch is None:
        return result
    result["dispatch"] = figures(dispatch, parts, runs_under_way=runs_under_way)
    ladder["status"] = result["dispatch"]["status"]
    result["climbers"] = [p.body for p in parts]
    return result


def compute(ladder: Ladder) -> dict:
    """The ladder's progress, computed afresh."""
    dispatch = dispatch_of(ladder)
    parts = parts_of(ladder, dispatch) if dispatch else []
    return body(head(ladder), dispatch, parts, runs_under_way=under_way(ladder.pk))
