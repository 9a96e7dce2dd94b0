"""The interpreter's garbage collector, set for a long-running process.

Now and then a full collection walks every object the process holds, Django and the loaded app
included, in the middle of whatever request or pass is running. ``settle`` is called once a
process has loaded everything it will keep (a web process after loading the app, a task worker
at start): what exists then is frozen out of the collector's walks (``gc.freeze``), so a full
collection walks only what was made since. Cycles are still collected.

Collecting the youngest generation less often was tried and left out: it shortened passes and
board reads a little but made reading one large record (tens of thousands of parsed JSON
objects, walked at each of the rarer, larger collections) about twice as slow.
"""

import gc


def settle() -> None:
    gc.collect()
    gc.freeze()
