"""Change stamps: how a reader knows, cheaply and on every process, whether what it computed is
still current, and exactly what changed since.

Triggers (``loopweb.runs.capture``) insert a ``Change`` per key a write touched (a cell's key,
``ladder:<id>``, ``catalog``), stamped in the writing transaction. A reader takes a snapshot
token before it reads; what it computed is current while every change of its keys is visible in
that token. PostgreSQL: the stamp is the transaction's id and the token the snapshot
(``<xmin>_<xmax>_<running ids, dash-separated>``), so visibility is the database's whatever
order writers commit in. SQLite (one writer at a time): a counter, ``n<count>``.
"""

from collections.abc import Iterable
from datetime import timedelta

from django.db import connection
from django.db.models import Exists, Max, OuterRef, Q, QuerySet
from django.utils import timezone

from loopweb.runs.models import Change, ChangeHorizon
from loopweb.runs.numbers import typed_integer

CATALOG = "catalog"


def ladder_key(ladder_id: int) -> str:
    """The key of a ladder's own writes: its configuration and its dispatch."""
    return f"ladder:{ladder_id}"


def token_of(snapshot: str) -> str:
    """A PostgreSQL snapshot (``xmin:xmax:xip,…``) written as a token."""
    xmin, xmax, running = snapshot.split(":")
    return f"{xmin}_{xmax}_{running.replace(',', '-')}"


MAX_XID = 2**63 - 1  # the largest id a stamp (a ``bigint``) holds


def _xid(text: str) -> int | None:
    return typed_integer(text, low=1, high=MAX_XID)


def snapshot_of(token: str) -> str | None:
    """The PostgreSQL snapshot a token (a client's text) names, or None if it names none
    PostgreSQL would take (``xmin ≤ xmax``, the running transactions between them, in order)."""
    parts = token.split("_")
    if len(parts) != 3:
        return None
    xmin, xmax = _xid(parts[0]), _xid(parts[1])
    listed = [_xid(x) for x in parts[2].split("-") if x]
    running = [x for x in listed if x is not None]
    if xmin is None or xmax is None or xmin > xmax or len(running) != len(listed):
        return None
    if any(not xmin <= x < xmax for x in running) or running != sorted(running):
        return None
    return f"{xmin}:{xmax}:{','.join(map(str, running))}"


def floor_of(token: str) -> int | None:
    """Every stamp below this is visible in the token (None: not a token)."""
    if connection.vendor == "postgresql":
        snapshot = snapshot_of(token)
        return None if snapshot is None else int(snapshot.split(":")[0])
    counter = _xid(token[1:]) if token.startswith("n") else None
    return None if counter is None else counter + 1


def visible(stamp: int, token: str) -> bool:
    """Whether the change stamped ``stamp`` is visible in the token (one ``floor_of`` takes), as
    ``pg_visible_in_snapshot`` tells, or on SQLite, not above the counter."""
    if token.startswith("n"):
        return stamp <= int(token[1:])
    xmin, xmax, running = token.split("_")
    if stamp < int(xmin):
        return True
    return stamp < int(xmax) and str(stamp) not in running.split("-")


def counter_token() -> str:
    """SQLite: the token of what is committed now."""
    counter = ChangeHorizon.objects.values_list("counter", flat=True).first()
    return f"n{counter or 0}"


def horizon() -> int:
    """Changes stamped below this may have been pruned."""
    return ChangeHorizon.objects.values_list("pruned_below", flat=True).first() or 0


def unseen(token: str, *, keys: Iterable[str] = (), cells: QuerySet | None = None, every=False):
    """SQLite: the (id, stamp, key) changes of ``keys`` (and of the ``cells`` queryset's
    ``cell_key``; with ``every``, of any key) the token did not see. (PostgreSQL's are in
    ``ladders.shared_progress``'s one query.)"""
    matches = Q(key__in=list(keys))
    if every:
        matches = Q()
    elif cells is not None:
        matches |= Exists(cells.filter(cell_key=OuterRef("key")))
    return list(
        Change.objects.filter(matches, stamp__gte=floor_of(token))
        .order_by("id")
        .values_list("id", "stamp", "key")
    )


def prune(*, older_than: timedelta = timedelta(minutes=30)) -> int:
    """Delete changes older than ``older_than``; a reader whose token is older than the pruned
    stamps computes afresh (``horizon``)."""
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
