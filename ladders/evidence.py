"""Loading what standings are computed from, in a fixed number of queries for any number of
dispatches, climbers, rungs and runs.

Queries (see ``tests/ladders/test_query_budgets.py``):
  1. the dispatches' climbers with their combinations
  2-3. the catalog rows those combinations name (gg configurations, model entries)
  4. the first counted runs of every slot cell (one window query)
  5. jobs in flight per slot cell, whoever launched them
  6. the dispatches' own jobs in flight, per origin and cell
  7. the dispatches' exhausted failures (and, only when there are some, 8: their slots' latest
     launches)

What was loaded and made ``reloadable`` is brought up to date after some of its cells changed by
``reload``: those cells and the climbers holding them read again, in one round trip on
PostgreSQL.
"""

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import groupby
from operator import itemgetter

from django.db import connection, connections
from django.db.models import Count, F, Max, Q, QuerySet, Window
from django.db.models.expressions import RawSQL
from django.db.models.functions import RowNumber

from ladders import origins
from ladders.gate import Gate
from ladders.models import Dispatch, DispatchCell, DispatchClimber
from ladders.standing import ClimberInput, Evidence, Failure, RungSnap, SlotRun
from loopweb.runs.arrays import in_keys
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.models import IN_FLIGHT, NOT_STARTED, Job, JobStatus, Outcome, Run
from loopweb.runs.prepared import Prepared
from loopweb.runs.resolve import CatalogView, Unresolvable, combination_cell, launch_problem
from loopweb.runs.rows import Columns
from loopweb.runs.together import Query, fetch_rows


def stop_cancels(ladder_id: int, *, cancel_running: bool) -> QuerySet[Job]:
    """The jobs a Stop of the ladder cancels: those its dispatches launched (found by their
    origin) that no driver has handed to a host yet, and with ``cancel_running`` (Stop and cancel
    running) those under way too. A job of an earlier dispatch of the ladder is among them."""
    statuses = IN_FLIGHT if cancel_running else NOT_STARTED
    return Job.objects.filter(
        origin__startswith=origins.ladder_prefix(ladder_id), status__in=statuses
    )


@dataclass(slots=True)
class Loaded:
    dispatch: Dispatch
    rungs: list[RungSnap]
    gate: Gate
    climbers: list[DispatchClimber]
    inputs: list[ClimberInput]
    evidence: Evidence
    catalog: CatalogView
    #: How ``reload`` brings it up to date, once made ``reloadable``.
    reloads: "Reloads | None" = None


def snapshot_rungs(snapshot: dict) -> list[RungSnap]:
    return [
        RungSnap(
            id=r["id"],
            pin=CasePin(r["case"], r["version"], r["variant"], r.get("engine")),
            target=r["runs"],
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
    pinned = (
        CombinationCell.from_json(climber.combination_cell) if climber.combination_cell else None
    )
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


def load(dispatches: list[Dispatch]) -> list[Loaded]:
    """The evidence of the dispatches' climbers (``reload`` reads some of its cells again)."""
    if not dispatches:
        return []
    by_id = {d.pk: d for d in dispatches}
    climbers: dict[int, list[DispatchClimber]] = defaultdict(list)
    rows = DispatchClimber.objects.filter(dispatch__in=by_id)
    for climber in rows.select_related("combination").order_by("dispatch_id", "position"):
        climbers[climber.dispatch_id].append(climber)
    catalog = CatalogView.load(
        c.combination for cs in climbers.values() for c in cs if c.combination is not None
    )

    # Pinned climbers' cells are held in DispatchCell and matched by a join; only the cells of
    # climbers that resolve for the first time now travel as parameters.
    loaded, unpinned, max_target = [], set(), 1
    for dispatch in dispatches:
        rungs = snapshot_rungs(dispatch.snapshot)
        inputs = [_input(c, catalog) for c in climbers[dispatch.pk]]
        for item in inputs:
            if item.pinned is None and item.live is not None:
                unpinned.update(cell_key(r.pin, item.live) for r in rungs)
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

    cells = Q(cell_key__in=DispatchCell.objects.filter(dispatch__in=by_id).values("cell_key"))
    if unpinned:
        cells |= Q(cell_key__in=unpinned)
    cells_sql = _held_cells(list(by_id), unpinned)
    prefixes = {d.origin_prefix: d.pk for d in dispatches}
    jobs = _dispatch_jobs(prefixes)
    # The dispatches' own jobs in flight and their failed attempts, the cells' jobs in flight,
    # then the slots' runs: asked in one round trip, jobs before runs. Read by a board they are
    # one snapshot (``shared_progress.one_snapshot``); read by a pass, under READ COMMITTED,
    # each statement sees what had committed when it began, and in this order a push landing
    # between them shows its job still in flight beside its run (a slot waits or launches less
    # for a moment), never a job gone with no run (a block that never happened).
    if connection.vendor == "postgresql":
        *job_rows, in_flight_rows, run_rows = fetch_rows(
            *jobs.queries, _cell_in_flight(cells), _slot_runs_sql(cells_sql, max_target)
        )
        runs = _by_cell(run_rows)
    else:  # SQLite (the demo): statement by statement, runs first
        runs = _slot_runs(cells, max_target)
        in_flight_rows, *job_rows = fetch_rows(_cell_in_flight(cells), *jobs.queries)
    cell_in_flight = dict(in_flight_rows)
    launched, failures, last_launch = jobs.read(*job_rows)
    for item in loaded:
        pk = item.dispatch.pk
        item.evidence = Evidence(
            runs=runs,
            cell_in_flight=cell_in_flight,
            launched_in_flight=launched.get(pk, {}),
            failures=failures.get(pk, {}),
            last_launch=last_launch.get(pk, {}),
        )
    return loaded


def _slot_runs(cells: Q, max_target: int) -> dict[str, list[SlotRun]]:
    """The first ``max_target`` counted runs of each cell, oldest first, by finish then id."""
    rows = (
        Run.objects.filter(cells, counted=True)
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("cell_key")],
                order_by=[F("finished_at").asc(), F("id").asc()],
            )
        )
        .filter(rank__lte=max_target)
        .order_by("cell_key", "finished_at", "id")
        .values_list(
            "cell_key",
            "id",
            "outcome",
            "validator_rating",
            "build_loaded",
            "published",
        )
    )
    # Tens of thousands of plain rows: fetched straight from the cursor, without the ORM's
    # per-row machinery (none of these columns needs a converter).
    sql, params = rows.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return _by_cell(cursor.fetchall())


def _held_cells(dispatch_ids: list[int], unpinned: Iterable[str]) -> RawSQL:
    """The cells the dispatches hold and the ``unpinned`` ones, each once, as a subquery
    (PostgreSQL)."""
    table = DispatchCell._meta.db_table
    held = f"SELECT cell_key FROM {table} WHERE dispatch_id = ANY(%s)"  # noqa: S608
    unpinned = sorted(unpinned)
    if len(dispatch_ids) == 1 and not unpinned:
        # A dispatch holds a cell once (unique_dispatch_cell): nothing to make distinct, and a
        # large dispatch's 10,000 cells are not hashed to find that out.
        return RawSQL(held, (dispatch_ids,))  # noqa: S611 - our own statement
    return RawSQL(  # noqa: S611 - our own statement, its values as parameters
        f"{held} UNION SELECT unnest(%s::varchar[])", (dispatch_ids, unpinned)
    )


def _slot_runs_sql(cells: RawSQL, max_target: int) -> tuple[str, list]:
    """``_slot_runs`` on PostgreSQL, for the cells the subquery ``cells`` names, as a statement
    whose rows go to ``_by_cell``: for each cell, its first counted runs straight from the
    ``run_counted_in_cell`` index (a LATERAL join with a LIMIT), instead of ranking and sorting
    every counted run of every cell."""
    return (
        f"""
        SELECT cells.cell_key, r.id, r.outcome, r.validator_rating, r.build_loaded,
               r.published
        FROM ({cells.sql}) AS cells (cell_key)
        CROSS JOIN LATERAL (
            SELECT id, outcome, validator_rating, build_loaded, published
            FROM {Run._meta.db_table}
            WHERE counted AND cell_key = cells.cell_key
            ORDER BY finished_at, id
            LIMIT %s
        ) AS r
        """,  # noqa: S608 - only models' table names and our subquery are formatted in
        [*cells.params, max_target],
    )


def _by_cell(rows: list[tuple]) -> dict[str, list[SlotRun]]:
    """(cellKey, id, outcome, rating, build loaded, published) rows, each cell's in its order,
    as each cell's slot runs. The rows of a cell come one after another (a run of rows at a
    time is made into runs at once: tens of thousands of them for a large board)."""
    runs: dict[str, list[SlotRun]] = {}
    make = tuple.__new__  # SlotRun._make without its checks: the rows have its five fields
    for key, group in groupby(rows, itemgetter(0)):
        found = [make(SlotRun, row[1:]) for row in group]
        if key in runs:  # the cell's rows came in more than one stretch: still in order
            runs[key].extend(found)
        else:
            runs[key] = found
    return runs


def count_by_cell(queryset) -> dict[str, int]:
    """How many rows of the queryset each cell has, in one grouped query."""
    return dict(_counted_by_cell(queryset))


def _counted_by_cell(queryset) -> QuerySet:
    """(cellKey, rows) of the queryset."""
    return (
        queryset.values("cell_key").annotate(n=Count("id")).values_list("cell_key", "n").order_by()
    )


def _cell_in_flight(cells: Q) -> QuerySet:
    """(cellKey, jobs in flight) of the cells, whoever launched them."""
    return _counted_by_cell(Job.objects.filter(cells, status__in=IN_FLIGHT))


def _split(origin: str, prefixes: dict[str, int]) -> tuple[int, str] | None:
    dispatch_prefix, rung_id = origins.split(origin)
    pk = prefixes.get(dispatch_prefix)
    if pk is None:
        return None
    return pk, rung_id


def _per_origin_and_cell(jobs, aggregate):
    """(origin, cellKey, aggregate) rows of the jobs, in one grouped query."""
    return (
        jobs.values("origin", "cell_key")
        .annotate(value=aggregate)
        .values_list("origin", "cell_key", "value")
        .order_by()
    )


def _by_slot(rows, prefixes: dict[str, int]):
    """(dispatch pk, (rungId, cellKey), the rest) for each (origin, cellKey, …) row of a job one
    of the dispatches launched."""
    for origin, key, *rest in rows:
        where = _split(origin, prefixes)
        if where:
            yield where[0], (where[1], key), rest


def _of_dispatches(prefixes: dict[str, int]) -> Q:
    of_dispatches = Q()
    for prefix in prefixes:
        of_dispatches |= Q(origin__startswith=prefix)
    return of_dispatches


def launched_in_flight(dispatch: Dispatch) -> dict[tuple[str, str], int]:
    """The dispatch's own jobs in flight, per (rungId, cellKey)."""
    prefixes = {dispatch.origin_prefix: dispatch.pk}
    jobs = Job.objects.filter(_of_dispatches(prefixes), status__in=IN_FLIGHT)
    rows = _per_origin_and_cell(jobs, Count("id"))
    return {slot: n for _, slot, (n,) in _by_slot(rows, prefixes)}


@dataclass
class _DispatchJobs:
    """What the dispatches' own jobs say: the two queries to ask (``queries``), and ``read``
    making their rows into the jobs in flight, the failed attempts and, when some failed, the
    latest first launches (a query of its own, asked only then)."""

    prefixes: dict[str, int]
    jobs: QuerySet | None

    @property
    def queries(self) -> list[QuerySet]:
        if self.jobs is None:
            return []
        in_flight = _per_origin_and_cell(self.jobs.filter(status__in=IN_FLIGHT), Count("id"))
        exhausted = (
            self.jobs.filter(status=JobStatus.FAILED, retry__isnull=True)
            .exclude(failure=Outcome.CANCELED)  # a cancelled attempt leaves the rung launchable
            .filter(Q(run__isnull=True) | Q(run__counted=False))
            .values_list("origin", "cell_key", "finished_at", "attempt")
        )
        return [in_flight, exhausted]

    @property
    def first_launches(self) -> QuerySet:
        """(origin, cellKey, the latest first attempt's creation) of the jobs."""
        assert self.jobs is not None
        return _per_origin_and_cell(self.jobs.filter(attempt=1), Max("created_at"))

    def read(self, in_flight=(), exhausted=(), first=None):
        """The rows of ``queries`` as the jobs in flight, the failed attempts and the latest first
        launches, from the rows of ``first_launches`` when given, else asked when some failed."""
        launched: dict[int, dict] = defaultdict(dict)
        failures: dict[int, dict] = defaultdict(lambda: defaultdict(list))
        last_launch: dict[int, dict] = defaultdict(dict)
        for pk, slot, (n,) in _by_slot(in_flight, self.prefixes):
            launched[pk][slot] = n
        for pk, slot, (finished_at, attempt) in _by_slot(exhausted, self.prefixes):
            failures[pk][slot].append(Failure(finished_at, attempt))
        if first is None and self.jobs is not None and any(failures.values()):
            first = self.first_launches
        for pk, slot, (latest,) in _by_slot(first or (), self.prefixes):
            last_launch[pk][slot] = latest
        return launched, failures, last_launch


def _dispatch_jobs(prefixes: dict[str, int], cells: Q | None = None) -> _DispatchJobs:
    if not prefixes:
        return _DispatchJobs(prefixes, None)
    jobs = Job.objects.filter(_of_dispatches(prefixes))
    if cells is not None:
        jobs = jobs.filter(cells)
    return _DispatchJobs(prefixes, jobs)


# Reloading some cells ----------------------------------------------------------------------


class Stale(Exception):
    """What was loaded cannot be brought up to date by reading some cells again (a climber it
    holds is gone or names another combination): it is to be loaded afresh."""


#: Makes, from the subquery of the cells a reload reads, the queries asked with it.
Also = Callable[[RawSQL], Sequence[Query]]


def _nothing_else(cells: RawSQL) -> Sequence[Query]:
    return ()


@dataclass(frozen=True, slots=True)
class Reloads:
    """How what one ``load`` read is brought up to date: the queries asked with every reload
    (``also``), and on PostgreSQL the statements of every reload, written by the ORM once."""

    also: Also
    prepared: Prepared | None


def reloadable(loaded: Loaded, *, also: Also = _nothing_else) -> None:
    """Make ``loaded`` one ``reload`` can bring up to date, asking the queries ``also`` makes of
    the reloaded cells' subquery with each reload (one ladder's reviews of their runs)."""
    prepared = None
    if connection.vendor == "postgresql":
        # What the statements are written from, and nothing more: they keep no evidence alive.
        dispatch, max_target = loaded.dispatch, _max_target(loaded.rungs)
        prepared = Prepared(
            lambda cells, keys: _reloading(
                dispatch, max_target, in_keys(cells), in_keys(keys), also
            ),
            "cells",
            "keys",
        )
    loaded.reloads = Reloads(also, prepared)


def reload(
    loaded: Loaded, cells: Collection[str], keys: Collection[str]
) -> tuple[Loaded, list[list[tuple]]]:
    """``loaded`` (made ``reloadable``) brought up to date after some of its cells changed: what
    those cells hold (their counted runs, jobs in flight, the dispatch's jobs in flight, failed
    attempts and first launches) and the climbers keyed ``keys`` (pinned ones, holding the cells)
    read again, the other cells' evidence kept; with the rows of its ``also`` queries. One round
    trip on PostgreSQL (``loopweb.runs.prepared``). ``Stale`` when a climber is not the one
    loaded."""
    reloads = loaded.reloads
    assert reloads is not None, "made reloadable when it was loaded"
    cells, keys = sorted(set(cells)), sorted(set(keys))
    if reloads.prepared is not None:
        climber_rows, run_rows, *rest = fetch_rows(*reloads.prepared.bind(cells=cells, keys=keys))
        columns = _climber_columns(connection.alias)
        climbers = [columns.instance(row, connection) for row in climber_rows]
        runs = _by_cell(run_rows)
    else:
        where = in_keys(cells)
        climbers = list(_climbers_of(loaded.dispatch, in_keys(keys)))
        runs = _slot_runs(Q(cell_key__in=where), _max_target(loaded.rungs))
        rest = fetch_rows(*_jobs_in(loaded.dispatch, where), *reloads.also(where))
    in_flight, dispatch_in_flight, exhausted, first, *extra = rest
    jobs = _DispatchJobs({loaded.dispatch.origin_prefix: loaded.dispatch.pk}, None)
    launched, failures, last_launch = (
        found.get(loaded.dispatch.pk, {})
        for found in jobs.read(dispatch_in_flight, exhausted, first)
    )
    old = loaded.evidence
    evidence = Evidence(
        runs=_replaced(old.runs, cells, runs),
        cell_in_flight=_replaced(old.cell_in_flight, cells, dict(in_flight)),
        launched_in_flight=_replaced_slots(old.launched_in_flight, loaded.rungs, cells, launched),
        failures=_replaced_slots(old.failures, loaded.rungs, cells, failures),
        last_launch=_replaced_slots(old.last_launch, loaded.rungs, cells, last_launch),
    )
    fresh = Loaded(
        dispatch=loaded.dispatch,
        rungs=loaded.rungs,
        gate=loaded.gate,
        climbers=list(loaded.climbers),
        inputs=list(loaded.inputs),
        evidence=evidence,
        catalog=loaded.catalog,
        reloads=reloads,
    )
    _replace_climbers(fresh, climbers, expected=len(keys))
    return fresh, extra


@cache
def _climber_columns(alias: str) -> Columns[DispatchClimber]:
    """A climber's columns as a reload's statement names them (once per process and database)."""
    return Columns(DispatchClimber, connections[alias])


def _max_target(rungs: list[RungSnap]) -> int:
    return max([1, *(r.target for r in rungs)])


def _climbers_of(dispatch: Dispatch, keys: RawSQL) -> QuerySet[DispatchClimber]:
    return DispatchClimber.objects.filter(dispatch=dispatch, combination_key__in=keys).order_by(
        "position"
    )


def _jobs_in(dispatch: Dispatch, cells: RawSQL) -> list[QuerySet]:
    """The cells' jobs in flight, whoever launched them; the dispatch's own jobs in flight, its
    failed attempts and its first launches in them."""
    where = Q(cell_key__in=cells)
    jobs = _dispatch_jobs({dispatch.origin_prefix: dispatch.pk}, where)
    return [_cell_in_flight(where), *jobs.queries, jobs.first_launches]


def _reloading(
    dispatch: Dispatch, max_target: int, cells: RawSQL, keys: RawSQL, also: Also
) -> list[Query]:
    """A reload's statements on PostgreSQL: the climbers, the cells' runs, their jobs, ``also``."""
    names = _climber_columns(connection.alias).names
    return [
        _climbers_of(dispatch, keys).values_list(*names),
        _slot_runs_sql(cells, max_target),
        *_jobs_in(dispatch, cells),
        *also(cells),
    ]


def _replaced[K, V](old: Mapping[K, V], cells: list[str], fresh: Mapping[K, V]) -> dict[K, V]:
    """``old`` with the cells' entries those of ``fresh`` (a cell it lacks has none)."""
    found = dict(old)
    for key in cells:
        found.pop(key, None)  # type: ignore[call-overload]
    found.update(fresh)
    return found


def _replaced_slots[V](
    old: Mapping[tuple[str, str], V],
    rungs: list[RungSnap],
    cells: list[str],
    fresh: Mapping[tuple[str, str], V],
) -> dict[tuple[str, str], V]:
    """``old``, keyed by (rungId, cellKey), with the cells' entries those of ``fresh``."""
    found = dict(old)
    for rung in rungs:
        for key in cells:
            found.pop((rung.id, key), None)
    found.update(fresh)
    return found


def _replace_climbers(loaded: Loaded, rows: list[DispatchClimber], *, expected: int) -> None:
    """Put the climbers read again in place of the loaded ones (in place: ``loaded`` is new)."""
    if len(rows) != expected:
        raise Stale("a climber is gone")
    at = {c.combination_key: i for i, c in enumerate(loaded.climbers)}
    for row in rows:
        i = at.get(row.combination_key)
        if i is None:
            raise Stale(f"climber {row.combination_key} was not loaded")
        was = loaded.climbers[i]
        if row.pk != was.pk or row.combination_id != was.combination_id:
            raise Stale(f"climber {row.combination_key} is not the one loaded")
        # Its combination is the catalog's: a change to it computes everything afresh.
        row.combination = was.combination
        loaded.climbers[i] = row
        loaded.inputs[i] = _input(row, loaded.catalog)
