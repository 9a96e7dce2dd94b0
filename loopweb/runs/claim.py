"""A driver's claim: up to n queued jobs, oldest first, leased to it in one statement.

The claim picks and leases its jobs in a single ``UPDATE … RETURNING``, so a claim costs the
database what a bare queue pop costs; on PostgreSQL the same statement returns each job's
combination, which the reply shows. The rows are turned into instances as the ORM would
(``loopweb.runs.rows``). (A dispatch's hold on the cells its slots read is another thing:
``ladders.models.DispatchCell``.)
"""

import functools
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection, connections
from django.db.models import prefetch_related_objects

from loopweb.runs.models import Combination, Job, JobStatus
from loopweb.runs.rows import Columns


def lease_queued(*, driver_id: int, limit: int, now: datetime, expires: datetime) -> list[Job]:
    """Lease up to ``limit`` queued jobs to the driver until ``expires``, oldest first."""
    ops = connection.ops
    params: list[Any] = [
        JobStatus.PENDING.value,
        driver_id,
        ops.adapt_datetimefield_value(expires),
        ops.adapt_datetimefield_value(now),
        JobStatus.QUEUED.value,
        limit,
    ]
    claim = _claim(connection.alias)
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
def _claim(alias: str) -> _Claim:
    connection = connections[alias]
    qn = connection.ops.quote_name
    table = qn(Job._meta.db_table)
    jobs = Columns(Job, connection)
    column = jobs.column
    # SKIP LOCKED: concurrent drivers each take different jobs instead of queueing on one.
    # Where it does not exist (SQLite), the database runs one writer at a time anyway.
    skip_locked = connection.features.has_select_for_update_skip_locked
    lock = " FOR UPDATE SKIP LOCKED" if skip_locked else ""
    # Only quoted model metadata is formatted in; every value is a parameter.
    update = (
        f"UPDATE {table} SET {column['status']} = %s, {column['lease_holder']} = %s,"  # noqa: S608
        f" {column['lease_expires_at']} = %s, {column['updated_at']} = %s"
        f" WHERE {column['id']} IN (SELECT {column['id']} FROM {table}"
        f" WHERE {column['status']} = %s ORDER BY {column['id']} LIMIT %s{lock})"
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
