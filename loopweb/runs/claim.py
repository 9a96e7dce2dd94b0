"""A driver's claim: up to n queued jobs, oldest first, leased to it in one statement.

The claim picks and leases its jobs in a single ``UPDATE … RETURNING``, so a claim costs the
database what a bare queue pop costs; the returned rows are turned into jobs as the ORM would
(``loopweb.runs.rows``). (A dispatch's hold on the cells its slots read is another
thing: ``ladders.models.DispatchCell``.)
"""

import functools
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import prefetch_related_objects

from loopweb.runs.models import Job, JobStatus
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
    sql, columns = _claim_statement(connection.alias)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return sorted((columns.instance(row, connection) for row in rows), key=lambda job: job.pk)


@functools.cache
def _claim_statement(alias: str) -> tuple[str, Columns[Job]]:
    qn = connection.ops.quote_name
    table = qn(Job._meta.db_table)
    columns = Columns(Job, connection)
    column = dict(zip((f.name for f in Job._meta.concrete_fields), columns.plain, strict=True))
    # SKIP LOCKED: concurrent drivers each take different jobs instead of queueing on one.
    # Where it does not exist (SQLite), the database runs one writer at a time anyway.
    skip_locked = connection.features.has_select_for_update_skip_locked
    lock = " FOR UPDATE SKIP LOCKED" if skip_locked else ""
    # Only quoted model metadata is formatted in; every value is a parameter.
    return (
        f"UPDATE {table} SET {column['status']} = %s, {column['lease_holder']} = %s,"  # noqa: S608
        f" {column['lease_expires_at']} = %s, {column['updated_at']} = %s"
        f" WHERE {column['id']} IN (SELECT {column['id']} FROM {table}"
        f" WHERE {column['status']} = %s ORDER BY {column['id']} LIMIT %s{lock})"
        f" RETURNING {', '.join(columns.plain)}",
        columns,
    )


def for_showing(jobs: list[Job]) -> list[Job]:
    """Claimed jobs made ready for their reply: their combinations read in one query, and the
    attempts they retry only for the retries among them. A claimed job has no run (a run is
    stored in the transaction that ends its attempt), so none is read."""
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
_RUN = Job.run.related
_RETRY_OF = Job.retry_of.related
