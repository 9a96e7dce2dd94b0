"""Marks in the change log for the slots that began or stopped waiting on a provider budget.

A slot reads ``waitingFor`` when its queued job is under a budget with no room
(``budgeting.waiting_jobs``). That follows the budget's jobs in flight, its starts of the last
minute, its back-off, staff's edits and the clock, none of which is a write to the slot's cell:
without a mark, a board's version (``If-None-Match``, ``?since=``) stays current while what its
slots wait on changed. So the readers note which budgets are full (``note``, at most once a
second a process, before a version is checked); when one became full or has room again, the
first reader to see it records a change of the cell of each job queued under it, through the
change log as the database's capture does (``loopweb.runs.changes``). A version taken before
sees those cells changed: no 304, and ``?since=`` answers their climbers.

Which budgets were full when last noted is kept on their rows (``ProviderBudget.marked_full``),
flipped by a conditional update, so of readers noting at once one records the marks. A budget
saved through ``budgeting.save_budget`` settles in the saving transaction, so the next read on any
process sees what its slots wait on.
"""

import json
import threading
import time
from collections.abc import Iterable
from datetime import datetime

from django.db import connection, transaction
from django.db.models import Q

from loopweb.runs import budgeting
from loopweb.runs.models import Change, ChangeHorizon, Job, JobStatus, ProviderBudget

#: A process notes the budgets' state at most this often (seconds): a budget that fills or has room
#: again through claims, ended jobs or the clock is marked within this long on every process.
#: A budget saved through the API, the console or the admin is marked in its own transaction
#: (``settle``).
EVERY = 1.0

_due = 0.0
_lock = threading.Lock()


def note(now: datetime | None = None) -> list[ProviderBudget] | None:
    """Record the marks of the budgets that became full or have room again since last noted:
    nothing (and no query) until this process is due to note again, one query when no budget is
    enabled or marked full. Returns the enabled budgets it read (None when not due), for the
    caller's own read of what waits on them."""
    global _due
    clock = time.monotonic()
    with _lock:
        if clock < _due:
            return None
        _due = clock + EVERY
    budgets = list(ProviderBudget.objects.filter(Q(enabled=True) | Q(marked_full=True)))
    settle(budgets, now)
    return [b for b in budgets if b.enabled]


def settle(budgets: Iterable[ProviderBudget], now: datetime | None = None) -> None:
    """Flip ``marked_full`` of each of ``budgets`` whose room says otherwise, and record the
    marks of those this caller flipped (a conditional update: of callers at once, one wins)."""
    budgets = sorted(budgets, key=lambda b: b.pk)
    if not budgets:
        return
    found = budgeting.figures([b for b in budgets if b.enabled], now)
    full = {pk for pk, figures in found.items() if figures.room <= 0}
    flipped = [b for b in budgets if (b.pk in full) != b.marked_full]
    if flipped:
        with transaction.atomic():
            won = [
                b
                for b in flipped
                if ProviderBudget.objects.filter(pk=b.pk, marked_full=b.marked_full).update(
                    marked_full=not b.marked_full
                )
            ]
            mark(won)


def mark(budgets: list[ProviderBudget]) -> None:
    """Record a change of the cell of each job queued under any of ``budgets``, in the caller's
    transaction."""
    if not budgets:
        return
    queued = {
        (key, json.dumps(cell, sort_keys=True) if not isinstance(cell, str) else cell)
        for key, cell in Job.objects.filter(status=JobStatus.QUEUED)
        .order_by()
        .values_list("cell_key", "combination_cell")
        .distinct()
    }
    under = budgeting.BudgetsOf(budgets, [cell for _, cell in queued])
    record(sorted({key for key, cell in queued if under(cell)}))


def record(keys: Iterable[str]) -> None:
    """Insert a change of each key, stamped as the database's capture stamps its own."""
    keys = list(keys)
    if not keys:
        return
    table = connection.ops.quote_name(Change._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                f"INSERT INTO {table} (key, stamp, at)"  # noqa: S608 - a model's table name
                " SELECT k, pg_current_xact_id()::text::bigint, now() FROM unnest(%s::text[]) AS k",
                [keys],
            )
            return
        # SQLite: the next value of the counter row, as its capture triggers draw it.
        horizon = connection.ops.quote_name(ChangeHorizon._meta.db_table)
        cursor.execute(
            f"INSERT INTO {horizon} (pruned_below, counter)"  # noqa: S608
            f" SELECT 0, COALESCE((SELECT max(stamp) FROM {table}), 0)"
            f" WHERE NOT EXISTS (SELECT 1 FROM {horizon})"
        )
        cursor.execute(f"UPDATE {horizon} SET counter = counter + 1")  # noqa: S608
        cursor.execute(
            f"INSERT INTO {table} (key, stamp, at)"  # noqa: S608
            f" SELECT value, (SELECT counter FROM {horizon}),"
            " strftime('%%Y-%%m-%%d %%H:%%M:%%f', 'now') FROM json_each(%s)",
            [json.dumps(keys)],
        )
