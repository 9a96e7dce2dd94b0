"""A driver's claim: up to n queued jobs, oldest first, leased to it in one statement.

The claim picks and leases its jobs in a single ``UPDATE … RETURNING``, so a claim costs the
database what a bare queue pop costs; on PostgreSQL the same statement returns each job's
combination, which the reply shows. The rows are turned into instances as the ORM would
(``loopweb.runs.rows``). (A dispatch's hold on the cells its slots read is another thing:
``ladders.models.DispatchCell``.)

With provider budgets enabled (``ProviderBudget``, rules in ``loopweb.runs.budgets``), a claim
locks the enabled budgets' rows first, then reads the queued candidates and the budgets' jobs in
flight, picks what fits, and leases exactly those with the same statement restricted to their
ids, in one transaction: a budget's jobs in flight only grow by claims, and claims under budgets
run one at a time, so no claim counts a budget's jobs before another's lease of one commits.
"""

import functools
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, connections, transaction
from django.db.models import F, Window, prefetch_related_objects
from django.db.models.functions import RowNumber

from loopweb.runs import budgeting
from loopweb.runs import budgets as rules
from loopweb.runs.models import Combination, Job, JobStatus, ProviderBudget
from loopweb.runs.rows import Columns


def lease_queued(*, driver_id: int, limit: int, now: datetime, expires: datetime) -> list[Job]:
    """Lease up to ``limit`` queued jobs to the driver until ``expires``: oldest first, within
    the enabled provider budgets."""
    if ProviderBudget.objects.filter(enabled=True).exists():
        return _lease_under_budgets(driver_id=driver_id, limit=limit, now=now, expires=expires)
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
    *, driver_id: int, limit: int, now: datetime, expires: datetime
) -> list[Job]:
    with transaction.atomic():
        # Lock the enabled budgets: a claim counting a budget's jobs in flight while another
        # claim's lease of one is uncommitted would start one past the cap.
        budgets = list(
            ProviderBudget.objects.select_for_update(no_key=True)
            .filter(enabled=True)
            .order_by("pk")
        )
        queued = list(
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
            .values_list("id", "origin", "combination_cell")
        )
        if not queued:
            return []
        flying = budgeting.leased_by_cell()
        under = budgeting.BudgetsOf(budgets, [cell for _, _, cell in queued] + list(flying))
        in_flight = budgeting.in_flight(budgets, flying, under)
        rooms = {b.pk: rules.room(b, now, in_flight[b.pk]) for b in budgets}
        candidates = [
            rules.Candidate(job_id, rules.source(origin), under(cell))
            for job_id, origin, cell in queued
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


def _record(budgets, claimed, served, now: datetime) -> None:
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
