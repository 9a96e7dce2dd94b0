"""A driver's claim: up to n queued jobs, oldest first, leased to it in one statement.

The claim picks and leases its jobs in a single ``UPDATE … RETURNING``, so a claim costs the
database what a bare queue pop costs; the returned rows are turned into jobs with each field's
database converters, as the ORM would. (A dispatch's hold on the cells its slots read is another
thing: ``ladders.models.DispatchCell``.)
"""

import functools
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from django.db import connection
from django.db.models import Field

from loopweb.runs.models import Job, JobStatus

_JOB_FIELDS: Sequence[Field[Any, Any]] = Job._meta.concrete_fields


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
    with connection.cursor() as cursor:
        cursor.execute(_claim_statement(connection.vendor), params)
        rows = cursor.fetchall()
    return sorted(_jobs_from_rows(rows), key=lambda job: job.pk)


@functools.cache
def _claim_statement(vendor: str) -> str:
    qn = connection.ops.quote_name
    table = qn(Job._meta.db_table)
    column = {f.name: qn(f.column or f.name) for f in _JOB_FIELDS}
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
        f" RETURNING {', '.join(column.values())}"
    )


Converter = Callable[..., Any]


def _converters(index: int) -> tuple[Any, list[Converter]]:
    field = _JOB_FIELDS[index]
    column = field.get_col(Job._meta.db_table)
    found: list[Converter] = [
        *connection.ops.get_db_converters(column),
        *field.get_db_converters(connection),
    ]
    return column, found


@functools.cache
def _converted(vendor: str) -> tuple[int, ...]:
    """Which of a job's fields the database hands back in a form that needs converting."""
    return tuple(i for i in range(len(_JOB_FIELDS)) if _converters(i)[1])


def _jobs_from_rows(rows: Sequence[Sequence[Any]]) -> list[Job]:
    """Jobs from whole rows, with each field's database converters applied, as the ORM would."""
    converters = [(index, *_converters(index)) for index in _converted(connection.vendor)]
    names = [field.attname for field in _JOB_FIELDS]
    jobs = []
    for row in rows:
        values = list(row)
        for index, column, found in converters:
            for convert in found:
                values[index] = convert(values[index], column, connection)
        jobs.append(Job.from_db(connection.alias, names, values))
    return jobs
