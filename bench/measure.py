"""Timing and query counting helpers."""

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.db import connection
from django.test.utils import CaptureQueriesContext


@dataclass
class Timing:
    median_ms: float
    p95_ms: float
    queries: int

    @classmethod
    def of(cls, samples: list[float], queries: int = 0) -> "Timing":
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
        return cls(statistics.median(samples) * 1000, p95 * 1000, queries)


def timed(fn: Callable[[], object], *, repeat: int, warmup: int = 1) -> Timing:
    return interleaved({"fn": fn}, repeat=repeat, warmup=warmup)["fn"]


def interleaved(
    fns: dict[str, Callable[[], object]], *, repeat: int, warmup: int = 1
) -> dict[str, Timing]:
    """Time each function ``repeat`` times, taking them in turn round after round, so a change in
    the machine's load weighs on all of them alike (a floor and what is compared with it)."""
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    samples: dict[str, list[float]] = {name: [] for name in fns}
    queries: dict[str, int] = {}
    for i in range(repeat):
        for name, fn in fns.items():
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                fn()
                samples[name].append(time.perf_counter() - start)
            if i == 0:
                queries[name] = len(ctx.captured_queries)
    return {name: Timing.of(samples[name], queries[name]) for name in fns}
