"""Loading what standings are computed from, in a fixed number of queries for any number of
dispatches, climbers, rungs and runs (``tests/ladders/test_query_budgets.py``):

  1. the dispatches' climbers with their combinations
  2-3. the catalog rows those combinations name (gg configurations, model entries), unless given
  4. the dispatches' own jobs in flight, per origin and cell
  5. jobs in flight per slot cell, whoever launched them
  6. the dispatches' exhausted failures (and, only when there are some, their slots' latest
     launches)
  7. the first counted runs of every slot cell

A board whose cells changed reads again the climbers holding them, whole (``only``): the same
statements, narrowed to their cells.
"""

import operator
from collections import defaultdict
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from functools import reduce
from itertools import groupby
from operator import itemgetter

from django.db import connection
from django.db.models import Count, F, Max, Q, QuerySet, Window
from django.db.models.expressions import RawSQL
from django.db.models.functions import RowNumber

from ladders import origins
from ladders.gate import Gate
from ladders.models import Dispatch, DispatchCell, DispatchClimber
from ladders.standing import ClimberInput, Evidence, Failure, RungSnap, SlotRun
from loopweb.runs.arrays import among
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.models import IN_FLIGHT, NOT_STARTED, Job, JobStatus, Outcome, Run
from loopweb.runs.resolve import CatalogView, Unresolvable, combination_cell, launch_problem


def stop_cancels(*ladder_ids: int, cancel_running: bool) -> QuerySet[Job]:
    """The jobs a Stop of the ladders cancels: those their dispatches (any of them) launched that
    no driver has handed to a host yet, and with ``cancel_running`` those under way too."""
    statuses = IN_FLIGHT if cancel_running else NOT_STARTED
    prefixes = [origins.ladder_prefix(ladder_id) for ladder_id in ladder_ids]
    return Job.objects.filter(_of_dispatches(prefixes), status__in=statuses)


@dataclass(slots=True)
class Loaded:
    dispatch: Dispatch
    rungs: list[RungSnap]
    gate: Gate
    climbers: list[DispatchClimber]
    inputs: list[ClimberInput]
    evidence: Evidence
    catalog: CatalogView


def snapshot_rungs(snapshot: dict) -> list[RungSnap]:
    return [
        RungSnap(
            r["id"], CasePin(r["case"], r["version"], r["variant"], r.get("engine")), r["runs"]
        )
        for r in snapshot["rungs"]
    ]


def climber_label(climber: DispatchClimber, catalog: CatalogView) -> str:
    combination = climber.combination
    if combination is None:
        return climber.combination_key
    configuration = catalog.configurations.get(combination.configuration_id)
    return combination.label(configuration.name if configuration else None)


def _input(climber: DispatchClimber, catalog: CatalogView) -> ClimberInput:
    cell = climber.combination_cell
    pinned = CombinationCell.from_json(cell) if cell else None
    live, problem = None, None
    if climber.combination is None:
        problem = "its combination was deleted"
    else:
        try:
            live = combination_cell(climber.combination, catalog)
        except Unresolvable as exc:
            problem = str(exc)
        else:
            problem = launch_problem(climber.combination, catalog)
    return ClimberInput(
        combination_key=climber.combination_key,
        label=climber_label(climber, catalog),
        pinned=pinned,
        live=live,
        problem=problem,
        verdicts=climber.verdicts or {},
        retried_at=climber.retried_at,
    )


def load(
    dispatches: list[Dispatch],
    *,
    only: Collection[str] | None = None,
    catalog: CatalogView | None = None,
    origins: bool = False,
) -> list[Loaded]:
    """The evidence of the dispatches' climbers, or of one dispatch's climbers keyed ``only``,
    with the ``catalog`` if read already; with ``origins``, the origin of each slot run's job
    too (``Evidence.origins``)."""
    if not dispatches:
        return []
    assert only is None or len(dispatches) == 1, "some climbers of one dispatch"
    by_id = {d.pk: d for d in dispatches}
    climbers: dict[int, list[DispatchClimber]] = defaultdict(list)
    rows = DispatchClimber.objects.filter(dispatch__in=by_id)
    if only is not None:
        rows = rows.filter(combination_key__in=sorted(only))
    for climber in rows.select_related("combination").order_by("dispatch_id", "position"):
        climbers[climber.dispatch_id].append(climber)
    if catalog is None:
        catalog = CatalogView.load(
            c.combination for cs in climbers.values() for c in cs if c.combination is not None
        )

    # Pinned climbers' cells are held in DispatchCell and joined; only the cells of climbers
    # resolved for the first time (or, reading some climbers, theirs) travel as a parameter.
    loaded, keys, max_target = [], set(), 1
    for dispatch in dispatches:
        rungs = snapshot_rungs(dispatch.snapshot)
        inputs = [_input(c, catalog) for c in climbers[dispatch.pk]]
        for item in inputs:
            if only is not None:
                cell = item.pinned or item.live
            else:
                cell = item.live if item.pinned is None else None
            if cell is not None:
                keys.update(cell_key(r.pin, cell) for r in rungs)
        max_target = max([max_target, *(r.target for r in rungs)])
        loaded.append(
            Loaded(
                dispatch=dispatch,
                rungs=rungs,
                gate=Gate.from_json(dispatch.snapshot["gate"]),
                climbers=climbers[dispatch.pk],
                inputs=inputs,
                evidence=Evidence(),
                catalog=catalog,
            )
        )

    cells = _cells([] if only is not None else list(by_id), keys)
    prefixes = {d.origin_prefix: d.pk for d in dispatches}
    own = Job.objects.filter(_of_dispatches(prefixes))
    own = own.filter(cell_key__in=cells) if only is not None else own
    # Jobs in flight, then failures, then runs: read by a pass under READ COMMITTED (a board
    # reads one snapshot), a job ending between two of them is in flight in the read before and
    # ended (its failure, its run) in the read after, never gone from both: no block that never
    # happened, no slot launched again beside a failure that blocks it.
    own_in_flight, exhausted = _own_jobs(own)
    own_rows, in_flight_rows, exhausted_rows, run_rows = fetch_rows(
        own_in_flight,
        _cell_in_flight(Q(cell_key__in=cells)),
        exhausted,
        _slot_runs(cells, max_target, origins=origins),
    )
    runs = _by_cell(run_rows)
    run_origins = {row[1]: row[-1] for row in run_rows} if origins else {}
    cell_in_flight = dict(in_flight_rows)
    launched, failures, last_launch = _read_own_jobs(own, prefixes, own_rows, exhausted_rows)
    for item in loaded:
        pk = item.dispatch.pk
        item.evidence = Evidence(
            runs=runs,
            cell_in_flight=cell_in_flight,
            launched_in_flight=launched.get(pk, {}),
            failures=failures.get(pk, {}),
            last_launch=last_launch.get(pk, {}),
            origins=run_origins,
        )
    return loaded


def fetch_rows(*queries: QuerySet | tuple[str, list]) -> list[list[tuple]]:
    """Each query's rows (a ``values_list`` queryset's, or a statement's), in the order given."""
    found = []
    for query in queries:
        if isinstance(query, QuerySet):
            found.append([tuple(row) for row in query])
            continue
        with connection.cursor() as cursor:
            cursor.execute(*query)
            found.append(cursor.fetchall())
    return found


def _cells(dispatch_ids: list[int], keys: Iterable[str]) -> RawSQL:
    """A subquery of the cells the dispatches hold and of the cells keyed ``keys``."""
    parts = []
    if dispatch_ids:
        held = DispatchCell.objects.filter(dispatch_id__in=dispatch_ids).order_by()
        parts.append(held.values_list("cell_key").query.sql_with_params())
    keys = sorted(keys)
    if keys or not parts:
        listed = among(keys, "varchar")
        parts.append((listed.sql, listed.params))
    # UNION, not a DISTINCT of one dispatch's cells: a dispatch holds a cell once.
    sql = " UNION ".join(part for part, _ in parts)
    return RawSQL(sql, [p for _, params in parts for p in params])  # noqa: S611 - our own


def _slot_runs(cells: RawSQL, max_target: int, *, origins: bool = False) -> tuple[str, list]:
    """The first ``max_target`` counted runs of each of the cells, oldest first by finish then
    id, for ``_by_cell``; with ``origins``, each row ends with its run's job's origin. PostgreSQL
    reads each cell's from the ``run_counted_in_cell`` index (a LATERAL join with a LIMIT)
    instead of ranking every counted run; SQLite, with no LATERAL, ranks."""
    if connection.vendor != "postgresql":
        ranked = (
            Run.objects.filter(cell_key__in=cells, counted=True)
            .annotate(
                rank=Window(
                    RowNumber(),
                    partition_by=[F("cell_key")],
                    order_by=[F("finished_at").asc(), F("id").asc()],
                )
            )
            .filter(rank__lte=max_target)
            .order_by("cell_key", "finished_at", "id")
            .values_list(*SLOT_RUN_COLUMNS, *(["job__origin"] if origins else []))
        )
        return ranked.query.sql_with_params()
    origin = job = ""
    if origins:
        origin, job = ", j.origin", f"LEFT JOIN {Job._meta.db_table} AS j ON j.id = r.job_id"
    return (
        f"""
        SELECT cells.cell_key, r.id, r.outcome, r.validator_rating, r.build_loaded,
               r.published{origin}
        FROM ({cells.sql}) AS cells (cell_key)
        CROSS JOIN LATERAL (
            SELECT id, outcome, validator_rating, build_loaded, published, job_id
            FROM {Run._meta.db_table}
            WHERE counted AND cell_key = cells.cell_key
            ORDER BY finished_at, id
            LIMIT %s
        ) AS r {job}
        """,  # noqa: S608 - only models' table names and our subquery are formatted in
        [*cells.params, max_target],
    )


#: A slot run's columns, as ``_slot_runs`` reads them.
SLOT_RUN_COLUMNS = ("cell_key", "id", "outcome", "validator_rating", "build_loaded", "published")


def _by_cell(rows: list[tuple]) -> dict[str, list[SlotRun]]:
    """``SLOT_RUN_COLUMNS`` rows (and what follows them), each cell's in order, as each cell's
    slot runs (a stretch of rows at a time: tens of thousands of them for a large board)."""
    runs: dict[str, list[SlotRun]] = {}
    make = tuple.__new__  # SlotRun._make without its checks: the rows have its five fields
    width = len(SLOT_RUN_COLUMNS)
    for key, group in groupby(rows, itemgetter(0)):
        found = [make(SlotRun, row[1:width]) for row in group]
        runs.setdefault(key, []).extend(found)
    return runs


def _cell_in_flight(cells: Q) -> QuerySet:
    jobs = Job.objects.filter(cells, status__in=IN_FLIGHT).values("cell_key")
    return jobs.annotate(n=Count("id")).values_list("cell_key", "n").order_by()


def _per_origin_and_cell(jobs, aggregate):
    rows = jobs.values("origin", "cell_key").annotate(value=aggregate).order_by()
    return rows.values_list("origin", "cell_key", "value")


def _by_slot(rows, prefixes: dict[str, int]):
    """(dispatch pk, (rungId, cellKey), the rest) of each (origin, cellKey, …) row of a job the
    dispatches launched."""
    for origin, key, *rest in rows:
        dispatch_prefix, rung_id = origins.split(origin)
        pk = prefixes.get(dispatch_prefix)
        if pk is not None:
            yield pk, (rung_id, key), rest


def _of_dispatches(prefixes: Iterable[str]) -> Q:
    """Jobs launched by the dispatches of these origin prefixes; none for no prefix."""
    return reduce(operator.or_, (Q(origin__startswith=p) for p in prefixes), Q(pk__in=[]))


def launched_in_flight(dispatch: Dispatch) -> dict[tuple[str, str], int]:
    """The dispatch's own jobs in flight, per (rungId, cellKey)."""
    prefixes = {dispatch.origin_prefix: dispatch.pk}
    jobs = Job.objects.filter(_of_dispatches(prefixes), status__in=IN_FLIGHT)
    rows = _per_origin_and_cell(jobs, Count("id"))
    return {slot: n for _, slot, (n,) in _by_slot(rows, prefixes)}


def _own_jobs(jobs: QuerySet) -> list[QuerySet]:
    """The dispatches' own jobs (of some cells) in flight, and their failed attempts."""
    in_flight = _per_origin_and_cell(jobs.filter(status__in=IN_FLIGHT), Count("id"))
    exhausted = (
        jobs.filter(status=JobStatus.FAILED, retry__isnull=True)
        .exclude(failure=Outcome.CANCELED)  # a cancelled attempt leaves the rung launchable
        .filter(Q(run__isnull=True) | Q(run__counted=False))
        .values_list("origin", "cell_key", "finished_at", "attempt")
    )
    return [in_flight, exhausted]


def _read_own_jobs(jobs: QuerySet, prefixes: dict[str, int], in_flight, exhausted):
    """``_own_jobs``' rows as the jobs in flight, the failures and, when some failed, the latest
    first launches (asked then), per dispatch and slot."""
    launched: dict[int, dict] = defaultdict(dict)
    failures: dict[int, dict] = defaultdict(lambda: defaultdict(list))
    last_launch: dict[int, dict] = defaultdict(dict)
    for pk, slot, (n,) in _by_slot(in_flight, prefixes):
        launched[pk][slot] = n
    for pk, slot, (finished_at, attempt) in _by_slot(exhausted, prefixes):
        failures[pk][slot].append(Failure(finished_at, attempt))
    if any(failures.values()):
        first = _per_origin_and_cell(jobs.filter(attempt=1), Max("created_at"))
        for pk, slot, (latest,) in _by_slot(first, prefixes):
            last_launch[pk][slot] = latest
    return launched, failures, last_launch


class Stale(Exception):
    """A climber a board holds is gone or is another: it is computed afresh."""
