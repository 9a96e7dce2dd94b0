"""The interpreter's garbage collector, set for a long-running process.

Now and then a full collection walks every object the process holds, Django and the loaded app
included, in the middle of whatever request or pass is running. ``settle`` is called once a
process has loaded everything it will keep (a web process after loading the app, a task worker
at start): what exists then is frozen out of the collector's walks (``gc.freeze``), so a full
collection walks only what was made since. Cycles are still collected.

Collecting the youngest generation less often was tried and left out: it shortened passes and
board reads a little but made reading one large record (tens of thousands of parsed JSON
objects, walked at each of the rarer, larger collections) about twice as slow.

A computation of a whole dispatch's standings (a board read, a launch pass, a Stop's final
standing) makes hundreds of thousands of objects and no garbage; the collector walking the young
ones again at every few hundred allocations cost a 200 × 50 board's read a fifth of its time
and collected nothing. It runs with the collector paused (``collector_paused``): one walk of
what it made follows, at the collector's next turn after the pause. A busy process's threads may
pause it in turn with never a moment none is under way: once it has been off ``MAX_OFF`` seconds
it is on again until none is, so cycles are always collected.
"""

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: The longest the collector stays off while pauses overlap (about a 1,000-climber board's read).
MAX_OFF = 1.0

_lock = threading.Lock()
_pauses = 0  # pauses under way, in every thread of the process
_resume = False  # whether the collector was on when the first of them began
_off_since = 0.0  # when (``_now``) the first of them began
_now = time.monotonic


def settle() -> None:
    gc.collect()
    gc.freeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """No collection while inside (the collector is the process's: every thread's pause counts,
    and it is on again when the last ends, or when one ends ``MAX_OFF`` seconds after the first
    began, if it was on when the first began)."""
    global _pauses, _resume, _off_since
    with _lock:
        if _pauses == 0:
            _resume, _off_since = gc.isenabled(), _now()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _resume and (_pauses == 0 or _now() - _off_since > MAX_OFF):
                gc.enable()
