"""The gate: ``pass when count(runs on this rung rated FLOOR or better) >= THRESHOLD``.

Pure functions over small values: reading a run, tallying a slot, deciding a rung.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from functools import lru_cache
from itertools import islice
from typing import Any, NamedTuple, Protocol

from loopweb.runs.outcomes import BROKEN, MODEL_FAILURES, SCUFFED, rating_at_least

#: The gate's defaults, written once: a ladder's gate when none is given, and every part a given
#: gate leaves out. The model's default, the API's serializer, the engine and the console read them.
DEFAULT_FLOOR = SCUFFED
DEFAULT_THRESHOLD: dict[str, int] = {"count": 1}  # never mutated: ``defaults()`` copies it
DEFAULT_UNLOADED_COUNTS_AS_BROKEN = True
DEFAULT_EARLY_STOP = False


def defaults() -> dict[str, Any]:
    """The gate a ladder has when none is given, as the API writes it."""
    return completed({})


def completed(data: dict[str, Any]) -> dict[str, Any]:
    """A gate as the API writes it, with every part ``data`` leaves out at its default."""
    return {
        "floor": data.get("floor", DEFAULT_FLOOR),
        "threshold": dict(data.get("threshold") or DEFAULT_THRESHOLD),
        "unloadedCountsAsBroken": data.get(
            "unloadedCountsAsBroken", DEFAULT_UNLOADED_COUNTS_AS_BROKEN
        ),
        "earlyStop": data.get("earlyStop", DEFAULT_EARLY_STOP),
    }


class Read(StrEnum):
    PASS = "pass"
    FAIL = "fail"
    UNRATED = "unrated"


class Verdict(StrEnum):
    PASSED = "passed"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class Gate:
    floor: str = DEFAULT_FLOOR
    count: int | None = DEFAULT_THRESHOLD["count"]
    fraction: float | None = None
    unloaded_counts_as_broken: bool = DEFAULT_UNLOADED_COUNTS_AS_BROKEN
    early_stop: bool = DEFAULT_EARLY_STOP

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Gate":
        full = completed(data)
        return cls(
            floor=full["floor"],
            count=full["threshold"].get("count"),
            fraction=full["threshold"].get("fraction"),
            unloaded_counts_as_broken=full["unloadedCountsAsBroken"],
            early_stop=full["earlyStop"],
        )

    def required(self, final: int) -> int:
        """The number of passing runs the rung needs out of ``final`` runs."""
        if self.fraction is not None:
            # count >= fraction * final, in whole runs and in exact arithmetic: the fraction as the
            # decimal it was written in (0.1 × 30 is 3, 0.6666666668 × 3 is above 2).
            return max(0, math.ceil(Decimal(repr(self.fraction)) * final))
        return self.count or 0


@dataclass(frozen=True, slots=True)
class RunRead:
    """What the gate needs of one run: its outcome, validator rating and whether it loaded."""

    outcome: str
    rating: str | None
    build_loaded: bool | None


class ReadableRun(Protocol):
    """What the gate reads of a run: a ``RunRead``, or a slot's run as the standing holds it."""

    @property
    def outcome(self) -> str: ...

    @property
    def rating(self) -> str | None: ...

    @property
    def build_loaded(self) -> bool | None: ...


def read_run(run: ReadableRun, gate: Gate) -> Read:
    rating = run.rating
    if run.outcome in MODEL_FAILURES:
        rating = BROKEN  # the model had its attempt: read as broken
    elif gate.unloaded_counts_as_broken and run.build_loaded is False:
        rating = BROKEN
    if rating is None:
        return Read.UNRATED
    # Read as broken, not failed outright: a floor of broken is met by a broken run.
    return Read.PASS if rating_at_least(rating, gate.floor) else Read.FAIL


class Tally(NamedTuple):
    counted: int
    rated: int
    unrated: int
    passing: int
    pending: int
    in_flight: int
    required: int

    def as_json(self) -> dict[str, int]:
        counted, rated, unrated, passing, pending, in_flight, required = self
        return {
            "counted": counted,
            "rated": rated,
            "unrated": unrated,
            "passing": passing,
            "pending": pending,
            "inFlight": in_flight,
            "required": required,
        }


#: How a gate read a kind of run: (outcome, rating, build loaded) → its read.
type Reads = dict[tuple[str, str | None, bool | None], Read]


@lru_cache(maxsize=256)
def _reads_of(gate: Gate) -> Reads:
    """How the gate has read each (outcome, rating, build loaded) seen so far: a large board
    reads tens of thousands of runs of a handful of kinds."""
    return {}


#: The gate last tallied for and its reads: a board tallies ten thousand slots under one gate,
#: and hashing the gate for each cost as much as the tally.
_last: tuple[Gate | None, Reads] = (None, {})
_PASS, _UNRATED = Read.PASS, Read.UNRATED


def _reads(gate: Gate) -> Reads:
    global _last  # noqa: PLW0603 - one tuple, replaced whole: safe to read from any thread
    last = _last
    if last[0] is gate:
        return last[1]
    reads = _reads_of(gate)
    _last = (gate, reads)
    return reads


def tally(runs: Iterable[ReadableRun], *, target: int, in_flight: int, gate: Gate) -> Tally:
    """Tally a slot: its runs (the first ``target`` counted runs of its cell) and its cell's jobs
    in flight, both read up to the target."""
    counted = passing = unrated = 0
    reads = _reads(gate)
    for run in islice(runs, target):
        counted += 1
        kind = (run.outcome, run.rating, run.build_loaded)
        read = reads.get(kind)
        if read is None:
            read = reads[kind] = read_run(run, gate)
        if read is _PASS:
            passing += 1
        elif read is _UNRATED:
            unrated += 1
    in_flight = max(0, min(in_flight, target - counted))
    final = max(target, counted + in_flight)
    # counted, rated, unrated, passing, pending, in flight, required
    return Tally(
        counted, counted - unrated, unrated, passing, final - counted, in_flight,
        gate.required(final),
    )  # fmt: skip


def decide(t: Tally, gate: Gate) -> Verdict | None:
    """The rung's verdict, or None while undecided.

    Unrated runs may still pass, so they count as possible passes in both directions: they
    never make a pass, and they keep a failure open.
    """
    if gate.early_stop:
        if t.passing >= t.required:
            return Verdict.PASSED
        if t.passing + t.unrated + t.pending < t.required:
            return Verdict.FAILED
        return None
    if t.pending > 0:
        return None
    if t.passing >= t.required:
        return Verdict.PASSED
    if t.passing + t.unrated < t.required:
        return Verdict.FAILED
    return None
