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
    for _ in range(warmup):
        fn()
    samples, queries = [], 0
    for i in range(repeat):
        if i == 0:
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                fn()
                samples.append(time.perf_counter() - start)
            queries = len(ctx.captured_queries)
        else:
            start = time.perf_counter()
            fn()
            samples.append(time.perf_counter() - start)
    return Timing.of(samples, queries)
