"""The interpreter's garbage collector, set for a long-running process.

A launch pass or a progress read of a large board makes tens of thousands of small objects;
each few thousand allocations start a collection, and now and then a full one walks every object
the process holds, Django and the loaded app included. ``settle`` is called once a process has
loaded everything it will keep (a web process after loading the app, a task worker at start):
what exists then is frozen out of the collector's walks (``gc.freeze``), and the youngest
generation is collected less often. Cycles are still collected; the pauses are shorter and rarer.
"""

import gc

#: Allocations between collections of the youngest generation (CPython's default is 2,000).
YOUNG_THRESHOLD = 50_000


def settle() -> None:
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
