"""Change stamps: how a reader knows, cheaply and on every process, whether what it computed is
still current, and what changed since.

Every write to something a board shows inserts one ``Change`` row per key it touched (a coverage
cell's key, ``ladder:<id>``, ``catalog``), stamped with the writing transaction's stamp, in that
transaction. A reader takes a *watermark* before it reads: every transaction stamped below it had
ended when the reader looked, so a change committed later carries a stamp at or above it. A copy
computed after taking watermark W is current while no change of its keys is stamped at or above
W; the keys stamped at or above W are what changed since.

PostgreSQL: the stamp is the writing transaction's id (``pg_current_xact_id()``, 64 bits, never
wraps) and the watermark the oldest transaction still running (``pg_snapshot_xmin``). Writers
only insert, so none waits on another, and no reader depends on the order in which writers
commit. SQLite (the embedded demo) runs one writer at a time: a counter row serves.
"""

from collections.abc import Iterable
from datetime import timedelta

from django.db import connection
from django.db.models import Exists, Max, OuterRef, Q, QuerySet
from django.utils import timezone

from loopweb.runs.models import Change, ChangeHorizon

CATALOG = "catalog"


def ladder_key(ladder_id: int) -> str:
    """The key of a ladder's own writes: its configuration and its dispatch."""
    return f"ladder:{ladder_id}"


def _postgres() -> bool:
    return connection.vendor == "postgresql"


def touch(keys: Iterable[str]) -> None:
    """Record, in the current transaction, that these keys changed."""
    keys = sorted(set(keys))
    if not keys:
        return
    table = Change._meta.db_table
    with connection.cursor() as cursor:
        if _postgres():
            cursor.execute(
                f"INSERT INTO {table} (key, stamp, at)"  # noqa: S608 - a model's table name
                " SELECT k, pg_current_xact_id()::text::bigint, now() FROM unnest(%s::text[]) AS k",
                [keys],
            )
            return
        stamp = _next_counter(cursor)
    now = timezone.now()
    Change.objects.bulk_create(Change(key=key, stamp=stamp, at=now) for key in keys)


def _next_counter(cursor) -> int:
    horizon = ChangeHorizon._meta.db_table
    cursor.execute(
        f"UPDATE {horizon} SET counter = counter + 1 RETURNING counter"  # noqa: S608
    )
    row = cursor.fetchone()
    if row is None:
        ChangeHorizon.objects.create(counter=1)
        return 1
    return row[0]


def watermark() -> int:
    """Every change stamped below this had been committed or rolled back when it was taken."""
    with connection.cursor() as cursor:
        if _postgres():
            cursor.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint")
            return cursor.fetchone()[0]
    counter = ChangeHorizon.objects.values_list("counter", flat=True).first()
    return (counter or 0) + 1


def horizon() -> int:
    """Changes stamped below this may have been pruned."""
    return ChangeHorizon.objects.values_list("pruned_below", flat=True).first() or 0


def stamped_since(stamp: int, *, keys: Iterable[str] = (), cells: QuerySet | None = None):
    """The changes of ``keys`` (and, when given, of the ``cell_key`` values of the ``cells``
    queryset) stamped at or above ``stamp``, as (id, stamp, key) triples."""
    matches = Q(key__in=list(keys))
    if cells is not None:
        matches |= Exists(cells.filter(cell_key=OuterRef("key")))
    return list(
        Change.objects.filter(matches, stamp__gte=stamp)
        .order_by("id")
        .values_list("id", "stamp", "key")
    )


def prune(*, older_than: timedelta = timedelta(minutes=30)) -> int:
    """Delete changes recorded more than ``older_than`` ago. A reader whose copy is older than
    the pruned stamps computes afresh (``horizon``)."""
    cutoff = timezone.now() - older_than
    old = Change.objects.filter(at__lt=cutoff)
    highest = old.aggregate(highest=Max("stamp"))["highest"]
    if highest is None:
        return 0
    deleted, _ = Change.objects.filter(stamp__lte=highest).delete()
    updated = ChangeHorizon.objects.filter(pruned_below__lt=highest + 1).update(
        pruned_below=highest + 1
    )
    if not updated and not ChangeHorizon.objects.exists():
        ChangeHorizon.objects.create(pruned_below=highest + 1)
    return deleted
