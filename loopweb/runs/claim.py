"""A driver's claim: up to n queued jobs, oldest first, leased to it in one statement.

The claim picks and leases its jobs in a single ``UPDATE … RETURNING``, so a claim costs the
database what a bare queue pop costs; on PostgreSQL the same statement returns each job's
combination, which the reply shows. The rows are turned into instances as the ORM would
(``loopweb.runs.rows``). (A dispatch's hold on the cells its slots read is another thing:
``ladders.models.DispatchCell``.)

On PostgreSQL a claim reads the enabled provider budgets (``ProviderBudget``, rules in
``loopweb.runs.budgets``) in a statement written once, which with budgets enabled brings the
queued candidates too, unlocked. It orders them, and one function call takes each job together
with a free place of each budget it is under, with ``SKIP LOCKED``
(``loopweb.runs.budget_claim_sql``): a budget has as many places as it allows in flight, so
claims never count jobs in flight nor wait on one another. On SQLite (one writer at a time) a
claim locks the enabled budgets' rows, counts their jobs in flight, picks what fits and leases
exactly those, in one transaction.
"""

import functools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, connections, transaction
from django.db.models import F, Window, prefetch_related_objects
from django.db.models.functions import RowNumber

from loopweb.runs import budget_claim_sql, budgeting
from loopweb.runs import budgets as rules
from loopweb.runs.models import Combination, Job, JobStatus, ProviderBudget
from loopweb.runs.rows import Columns


def lease_queued(*, driver_id: int, limit: int, now: datetime, expires: datetime) -> list[Job]:
    """Lease up to ``limit`` queued jobs to the driver until ``expires``: oldest first, within
    the enabled provider budgets."""
    if connection.vendor == "postgresql":
        # The enabled budgets and, where there are any, the candidates, in one statement.
        budgets, queued = _budgets_and_candidates(limit + SPREAD)
        if budgets:
            return _lease_under_budgets_in_one_call(
                driver_id=driver_id,
                limit=limit,
                now=now,
                expires=expires,
                budgets=budgets,
                queued=queued,
            )
        return _lease(driver_id=driver_id, limit=limit, now=now, expires=expires)
    budgets = list(ProviderBudget.objects.filter(enabled=True).order_by("pk"))
    if budgets:
        return _lease_under_budgets(
            driver_id=driver_id, limit=limit, now=now, expires=expires, budgets=budgets
        )
    return _lease(driver_id=driver_id, limit=limit, now=now, expires=expires)


def _lease(
    *, driver_id: int, limit: int, now: datetime, expires: datetime, ids: list[int] | None = None
) -> list[Job]:
    """The claim's statement: the oldest queued jobs, or the oldest of ``ids`` still queued."""
    ops = connection.ops
    params: list[Any] = [
        JobStatus.PENDING.value,
        driver_id,
        ops.adapt_datetimefield_value(expires),
        ops.adapt_datetimefield_value(now),
        JobStatus.QUEUED.value,
    ]
    if ids is not None:
        params.append(ids if connection.vendor == "postgresql" else json.dumps(ids))
    params.append(limit)
    claim = _claim(connection.alias, ids is not None)
    with connection.cursor() as cursor:
        cursor.execute(claim.sql, params)
        rows = cursor.fetchall()
    jobs = []
    for row in rows:
        job = claim.jobs.instance(row, connection)
        if claim.combinations is not None:
            # Joined to its claim (PostgreSQL): the reply's combination needs no query of its own.
            _COMBINATION.set_cached_value(job, claim.combinations.instance_or_none(row, connection))
        jobs.append(job)
    return sorted(jobs, key=lambda job: job.pk)


@dataclass(frozen=True)
class _Claim:
    sql: str
    jobs: Columns[Job]
    combinations: Columns[Combination] | None  # joined in, where the database can


@functools.cache
def _claim(alias: str, restricted: bool = False) -> _Claim:
    connection = connections[alias]
    qn = connection.ops.quote_name
    table = qn(Job._meta.db_table)
    jobs = Columns(Job, connection)
    column = jobs.column
    # SKIP LOCKED: concurrent drivers each take different jobs instead of queueing on one.
    # Where it does not exist (SQLite), the database runs one writer at a time anyway.
    skip_locked = connection.features.has_select_for_update_skip_locked
    lock = " FOR UPDATE SKIP LOCKED" if skip_locked else ""
    among = ""
    if restricted:
        # One parameter, whatever the number of ids: the statement is written once.
        among = (
            f" AND {column['id']} = ANY(%s)"
            if connection.vendor == "postgresql"
            else f" AND {column['id']} IN (SELECT value FROM json_each(%s))"  # noqa: S608
        )
    # Only quoted model metadata is formatted in; every value is a parameter.
    update = (
        f"UPDATE {table} SET {column['status']} = %s, {column['lease_holder']} = %s,"  # noqa: S608
        f" {column['lease_expires_at']} = %s, {column['updated_at']} = %s"
        f" WHERE {column['id']} IN (SELECT {column['id']} FROM {table}"
        f" WHERE {column['status']} = %s{among} ORDER BY {column['id']} LIMIT %s{lock})"
        f" RETURNING {', '.join(jobs.plain)}"
    )
    if connection.vendor != "postgresql":
        return _Claim(update, jobs, None)  # SQLite takes no UPDATE inside WITH
    combinations = Columns(Combination, connection, alias="c", start=len(jobs.names))
    claimed = ", ".join(f"claimed.{name}" for name in jobs.plain)
    combination_id = combinations.column[Combination._meta.pk.name]
    return _Claim(
        f"WITH claimed AS ({update}) SELECT {claimed}, {', '.join(combinations.qualified)}"  # noqa: S608
        f" FROM claimed LEFT JOIN {qn(Combination._meta.db_table)} AS c"
        f" ON c.{combination_id} = claimed.{column['combination']}",
        jobs,
        combinations,
    )


def for_showing(jobs: list[Job]) -> list[Job]:
    """Claimed jobs made ready for their reply: their combinations read in one query (unless the
    claim brought them), and the attempts they retry only for the retries among them. A claimed
    job has no run (a run is stored in the transaction that ends its attempt), so none is read."""
    prefetch_related_objects(jobs, "combination")
    retries = [job for job in jobs if job.attempt > 1]
    if retries:
        prefetch_related_objects(retries, "retry_of")
    for job in jobs:
        _RUN.set_cached_value(job, None)
        if job.attempt == 1:
            _RETRY_OF.set_cached_value(job, None)
    return jobs


# The reverse one-to-ones a job's reply reads: its run, and the attempt it retries.
_COMBINATION = Job._meta.get_field("combination")
_RUN = Job.run.related
_RETRY_OF = Job.retry_of.related


def _lease_under_budgets(
    *, driver_id: int, limit: int, now: datetime, expires: datetime, budgets: list[ProviderBudget]
) -> list[Job]:
    """SQLite: one writer at a time (its transactions take the write lock as they begin)."""
    with transaction.atomic():
        # Lock the enabled budgets: a claim counting a budget's jobs in flight while another
        # claim's lease of one is uncommitted would start one past the cap.
        budgets = list(
            ProviderBudget.objects.select_for_update(no_key=True)
            .filter(enabled=True)
            .order_by("pk")
        )
        queued = _candidates(limit)
        if not queued:
            return []
        flying = budgeting.leased_by_cell()
        under = budgeting.BudgetsOf(budgets, [cell for *_, cell in queued] + list(flying))
        in_flight = budgeting.in_flight(budgets, flying, under)
        rooms = {b.pk: rules.room(b, now, in_flight[b.pk]) for b in budgets}
        candidates = [
            rules.Candidate(job_id, rules.source(origin), under(cell))
            for job_id, origin, _, cell in queued
        ]
        picked, served = rules.pick(
            candidates,
            rooms,
            {b.pk: b.turns for b in budgets},
            limit=limit,
            clock=now.timestamp(),
        )
        if not picked:
            return []
        jobs = _lease(
            driver_id=driver_id,
            limit=limit,
            now=now,
            expires=expires,
            ids=[c.id for c in picked],
        )
        _record(budgets, [c for c in picked if c.id in {job.pk for job in jobs}], served, now)
    return jobs


def _candidates(limit: int) -> list[tuple[int, str, int | None, Any]]:
    """SQLite: the oldest ``limit`` queued jobs of each origin and combination, oldest first:
    (id, origin, combination id, combination cell). A full budget's backlog never hides what
    comes after it. (PostgreSQL reads them with the budgets: ``_budgets_and_candidates``.)"""
    return list(
        Job.objects.filter(status=JobStatus.QUEUED)
        .annotate(
            rank=Window(
                RowNumber(),
                partition_by=[F("origin"), F("combination_id")],
                order_by=F("id").asc(),
            )
        )
        .filter(rank__lte=limit)
        .order_by("id")
        .values_list("id", "origin", "combination_id", "combination_cell")
    )


def _budgets_and_candidates(
    limit: int,
) -> tuple[list[ProviderBudget], list[tuple[int, str, int | None, str]]]:
    """PostgreSQL: the enabled budgets, and where there are any, the oldest ``limit`` queued
    jobs of each origin and combination, oldest first (id, origin, combination id, combination
    cell as JSON text: ``budgeting.BudgetsOf`` reads each distinct one once), in one statement.
    With no budget enabled it returns no row, and the candidates are not read."""
    read = _budgets_read(connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(read.sql, [limit])
        rows = cursor.fetchall()
    budgets = [read.budgets.instance(row, connection) for row in rows]
    queued = rows[0][-1] if rows else None
    return budgets, [tuple(candidate) for candidate in queued or ()]


@dataclass(frozen=True)
class _BudgetsRead:
    sql: str
    budgets: Columns[ProviderBudget]


@functools.cache
def _budgets_read(alias: str) -> _BudgetsRead:
    connection = connections[alias]
    budgets = Columns(ProviderBudget, connection)
    table = connection.ops.quote_name(ProviderBudget._meta.db_table)
    pk = budgets.column[ProviderBudget._meta.pk.name]
    # The candidates on the first row alone: a subquery of no row's values, run once at most.
    return _BudgetsRead(
        f"SELECT {', '.join(budgets.plain)}, CASE WHEN row_number() OVER (ORDER BY {pk}) = 1"  # noqa: S608
        " THEN (SELECT json_agg(json_build_array(job_id, job_origin, job_combination, job_cell)"
        f" ORDER BY job_id) FROM {budget_claim_sql.CANDIDATES}(%s)) END"
        f" FROM {table} WHERE {budgets.column['enabled']} ORDER BY {pk}",
        budgets,
    )


#: Candidates read past a claim's own ``max`` of each origin and combination under budgets on
#: PostgreSQL, for the claims reading the queue at the same moment.
SPREAD = 32


def _lease_under_budgets_in_one_call(
    *,
    driver_id: int,
    limit: int,
    now: datetime,
    expires: datetime,
    budgets: list[ProviderBudget],
    queued: list[tuple[int, str, int | None, str]],
) -> list[Job]:
    """PostgreSQL: the candidates (read with the budgets, ``limit + SPREAD`` of each origin and
    combination: concurrent claims read the same oldest jobs) are ordered here, unlocked; the
    function (``budget_claim_sql``) takes each one's job and a place of each of its budgets with
    ``SKIP LOCKED`` and leases them, in one statement: claims under one budget never wait on one
    another."""
    for attempt in range(4):
        if attempt:
            budgets, queued = _budgets_and_candidates(limit + SPREAD)
            if not budgets:
                return _lease(driver_id=driver_id, limit=limit, now=now, expires=expires)
        if not queued:
            return []
        under = budgeting.BudgetsOf(budgets, [cell for *_, cell in queued])
        candidates = [
            rules.Candidate(job_id, rules.source(origin), under(cell))
            for job_id, origin, _, cell in queued
        ]
        concerned = {budget_id for c in candidates for budget_id in c.budgets}
        ordered = _in_turn(candidates, concerned, now)
        caps = [
            {
                "id": b.pk,
                "cap": rules.in_flight_cap(b, now),
                "minute": rules.per_minute_cap(b, now),
            }
            for b in budgets
            if b.pk in concerned
        ]
        listed: dict[frozenset[Any], list[Any]] = {}  # the candidates share a few sets of budgets
        body = [
            {"id": c.id, "source": c.source, "budgets": _listed(listed, c.budgets)} for c in ordered
        ]
        claim = _claim_under_budgets(connection.alias)
        with connection.cursor() as cursor:
            cursor.execute(
                claim.sql,
                [
                    driver_id,
                    limit,
                    now,
                    expires,
                    int(now.timestamp()),
                    now.timestamp(),
                    json.dumps(caps),
                    json.dumps(body),
                ],
            )
            rows = cursor.fetchall()
        ids = rows[0][0]
        if ids and ids[0] == -2:
            for budget_id in ids[1:]:  # budgets new, changed or enabled again
                budgeting.lay_out_places(budget_id)
            continue
        if ids == [-1]:
            continue  # what it read was taken by other claims meanwhile: again
        if not ids:
            return []
        jobs = []
        for row in rows:
            job = claim.jobs.instance(row, connection)
            # The statement read the rows as they were before its function leased them: the
            # lease is all the function changed.
            job.status = JobStatus.PENDING
            job.lease_holder_id = driver_id
            job.lease_expires_at = expires
            job.updated_at = now
            _COMBINATION.set_cached_value(job, claim.combinations.instance_or_none(row, connection))
            jobs.append(job)
        return sorted(jobs, key=lambda job: job.pk)
    return []


def _listed(listed: dict[frozenset[Any], list[Any]], budgets: frozenset[Any]) -> list[Any]:
    found = listed.get(budgets)
    if found is None:
        found = listed[budgets] = sorted(budgets)
    return found


@dataclass(frozen=True)
class _BudgetClaim:
    sql: str
    jobs: Columns[Job]
    combinations: Columns[Combination]


@functools.cache
def _claim_under_budgets(alias: str) -> _BudgetClaim:
    """The function's call and the leased jobs with their combinations, in one statement: its
    first column is what the function returned (the ids, or what the caller does first)."""
    connection = connections[alias]
    qn = connection.ops.quote_name
    jobs = Columns(Job, connection, alias="j", start=1)
    combinations = Columns(Combination, connection, alias="c", start=1 + len(jobs.names))
    job_id = jobs.column[Job._meta.pk.name].split(".")[-1]
    combination_id = combinations.column[Combination._meta.pk.name].split(".")[-1]
    job_combination = jobs.column["combination"].split(".")[-1]
    return _BudgetClaim(
        f"WITH called AS MATERIALIZED (SELECT {budget_claim_sql.FUNCTION}"  # noqa: S608
        "(%s, %s, %s, %s, %s, %s, %s, %s) AS ids)"
        f" SELECT called.ids, {', '.join(jobs.qualified)}, {', '.join(combinations.qualified)}"
        f" FROM called LEFT JOIN {qn(Job._meta.db_table)} AS j"
        f" ON called.ids[1] > 0 AND j.{job_id} = ANY(called.ids)"
        f" LEFT JOIN {qn(Combination._meta.db_table)} AS c"
        f" ON c.{combination_id} = j.{job_combination}",
        jobs,
        combinations,
    )


def _in_turn(
    candidates: list[rules.Candidate], concerned: set[Any], now: datetime
) -> list[rules.Candidate]:
    """The candidates in the order a claim prefers them: oldest first, where sources wait on one
    budget, round-robin among them as the budgets' places remember their turns. One source
    under every budget: oldest first, and no turns to read."""
    sources: dict[Any, set[str]] = {}
    for candidate in candidates:
        for budget_id in candidate.budgets:
            sources.setdefault(budget_id, set()).add(candidate.source)
    if all(len(found) < 2 for found in sources.values()):
        return candidates
    ordered, _ = rules.pick(
        candidates,
        dict.fromkeys(concerned, rules.UNCAPPED),
        budgeting.turns_of(concerned),
        limit=len(candidates),
        clock=now.timestamp(),
    )
    return ordered


def _record(
    budgets: list[ProviderBudget],
    claimed: list[rules.Candidate],
    served: dict[Any, dict[str, float]],
    now: datetime,
) -> None:
    """Stamp the claimed jobs' starts and turns on their budgets (locked by the claim)."""
    started: dict[Any, int] = {}
    for candidate in claimed:
        for budget_id in candidate.budgets:
            started[budget_id] = started.get(budget_id, 0) + 1
    changed = []
    for budget in budgets:
        if budget.pk not in started:
            continue
        rules.record_starts(budget, now, started[budget.pk])
        rules.record_turns(budget, served.get(budget.pk, {}))
        rules.clear_backoff_if_over(budget, now)
        changed.append(budget)
    if changed:
        ProviderBudget.objects.bulk_update(
            changed, ["starts", "turns", "backoff_cap", "backoff_from", "backoff_until"]
        )
