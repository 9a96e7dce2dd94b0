"""Progress shared by the viewers of a ladder.

Twenty people watching one large board would otherwise compute the same standing twenty times a
poll. Each web process keeps a ladder's latest progress, JSON-encoded and gzipped once, for
``LOOPWEB_PROGRESS_MAX_AGE`` seconds (0 turns sharing off). When the copy expires, it is
recomputed in a thread beside the requests, which keep being served the copy there is: no viewer
waits for a computation but the very first, and a board is never more than that age plus one
computation behind. The ladder's own writes (Run, Stop, Retry, edits, a launch
pass) drop the copy of the process that made them once they commit, so whoever acted sees the
effect at once.
"""

import gzip
import hashlib
import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from rest_framework.renderers import JSONRenderer

from ladders.selectors import ladder_progress
from loopweb import telemetry

logger = logging.getLogger(__name__)

#: A copy nobody has read for this long is dropped when another ladder's copy is stored.
UNREAD_FOR = 60.0

_now = time.monotonic


@dataclass(frozen=True, slots=True)
class Shared:
    body: dict
    encoded: bytes
    gzipped: bytes  # ``encoded``, compressed once for every viewer that accepts gzip
    digest: str  # of ``encoded``: an unchanged board need not be sent again
    computed_at: float  # when its computation started, on the ``_now`` clock


class _Slot:
    __slots__ = ("generation", "lock", "read_at", "shared")

    def __init__(self):
        self.lock = threading.Lock()  # held by the one viewer recomputing
        self.shared: Shared | None = None
        self.generation = 0  # bumped by every drop: a computation begun before it is not kept
        self.read_at = 0.0


_slots: dict[int, _Slot] = {}
_slots_lock = threading.Lock()


def _slot(ladder_id: int) -> _Slot:
    with _slots_lock:
        slot = _slots.get(ladder_id)
        if slot is None:
            slot = _slots[ladder_id] = _Slot()
        return slot


def _fresh(shared: Shared | None, max_age: float) -> bool:
    return shared is not None and _now() - shared.computed_at < max_age


def compute(ladder) -> Shared:
    started = _now()
    clock = time.perf_counter()
    body = ladder_progress(ladder)
    telemetry.PROGRESS_SECONDS.observe(time.perf_counter() - clock)
    encoded = JSONRenderer().render(body)
    return Shared(
        body=body,
        encoded=encoded,
        gzipped=gzip.compress(encoded, compresslevel=6, mtime=0),
        digest=hashlib.sha256(encoded).hexdigest(),
        computed_at=started,
    )


def read(ladder) -> Shared:
    """The ladder's progress: the shared copy while it is fresh, else a new one."""
    max_age = settings.LOOPWEB_PROGRESS_MAX_AGE
    if max_age <= 0:
        return compute(ladder)
    slot = _slot(ladder.pk)
    slot.read_at = _now()
    held = slot.shared
    if _fresh(held, max_age):
        return held
    if held is None:
        # Nothing to serve yet: one viewer computes, the others wait for it.
        with slot.lock:
            if _fresh(slot.shared, max_age):
                return slot.shared
            return _store(slot, ladder)
    # Expired: every viewer is served the copy there is while one refresh runs beside them, so
    # no viewer waits for a computation.
    if slot.lock.acquire(blocking=False):
        threading.Thread(target=_refresh, args=(slot, ladder), daemon=True).start()
    return held


def _refresh(slot: _Slot, ladder) -> None:
    """Recompute a copy in a thread of its own (holding the slot's lock, released here)."""
    try:
        _store(slot, ladder)
    except Exception:
        logger.exception("refreshing the progress of ladder %s failed", ladder.pk)
    finally:
        slot.lock.release()
        connection.close()  # the thread's own connection


def store(ladder) -> Shared:
    """Compute the ladder's progress now and share it (after an action that changed it)."""
    if settings.LOOPWEB_PROGRESS_MAX_AGE <= 0:
        return compute(ladder)
    slot = _slot(ladder.pk)
    with slot.lock:
        return _store(slot, ladder)


def _store(slot: _Slot, ladder) -> Shared:
    generation = slot.generation
    slot.read_at = _now()
    shared = compute(ladder)
    with _slots_lock:
        if slot.generation == generation:
            slot.shared = shared
        for other in _slots.values():
            if other.shared is not None and _now() - other.read_at > UNREAD_FOR:
                other.shared = None
    return shared


def forget(ladder_id: int) -> None:
    """Drop this process's copy of the ladder's progress when the current transaction commits
    (at once outside one)."""

    def drop():
        slot = _slot(ladder_id)
        with _slots_lock:
            slot.generation += 1
            slot.shared = None

    transaction.on_commit(drop)
