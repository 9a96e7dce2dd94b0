"""Where every climber of a dispatch stands, computed from loaded evidence.

Pure: no ORM. The launch pass acts on a standing (records verdicts, pins cells, launches what
current rungs miss); progress, the summary and the review queue render one.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from ladders.gate import Gate, Tally, Verdict, decide, tally
from ladders.statuses import (
    BLOCKED,
    CAUGHT_BY_THE_END,
    COMPLETED,
    FAILED,
    FAILING,
    PASSED,
    PENDING,
    RUNNING,
    SKIPPED,
    SLOT_STATUSES,
    STOPPED,
    UNLAUNCHABLE,
    UNRATED,
)
from loopweb.runs.cells import CasePin, CombinationCell, joined_cell_key

PASSED_VERDICT, FAILED_VERDICT = Verdict.PASSED.value, Verdict.FAILED.value


@dataclass(frozen=True, slots=True)
class RungSnap:
    id: str
    pin: CasePin
    target: int
    pin_key: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pin_key", self.pin.key)  # read for every climber


class SlotRun(NamedTuple):  # thirty thousand of them for a large ladder: cheap to make
    id: int
    outcome: str
    rating: str | None
    build_loaded: bool | None
    published: bool


NO_RUNS: list[SlotRun] = []


@dataclass(frozen=True, slots=True)
class Failure:
    """A job the dispatch launched for a slot that ended with no counted run, retries used up."""

    finished_at: datetime
    attempt: int


@dataclass(slots=True)
class ClimberInput:
    combination_key: str
    label: str
    pinned: CombinationCell | None
    live: CombinationCell | None
    problem: str | None
    verdicts: Mapping[str, str]
    retried_at: datetime | None = None


#: A slot of the evidence: (rungId, cellKey).
type Slot = tuple[str, str]


@dataclass(slots=True)
class Evidence:
    runs: Mapping[str, list[SlotRun]] = field(default_factory=dict)
    cell_in_flight: Mapping[str, int] = field(default_factory=dict)
    # Keyed by (rungId, cellKey): the dispatch's own jobs for the slot.
    launched_in_flight: Mapping[tuple[str, str], int] = field(default_factory=dict)
    failures: Mapping[tuple[str, str], list[Failure]] = field(default_factory=dict)
    last_launch: Mapping[tuple[str, str], datetime] = field(default_factory=dict)
    #: The origin of each slot run's job (None for a run pushed without one), when asked for.
    origins: Mapping[int, str | None] = field(default_factory=dict)


@dataclass(slots=True)
class SlotStanding:
    rung: str
    status: str
    cell_key: str | None = None
    target: int = 0
    counted: int = 0
    launched: int = 0
    runs: Sequence[SlotRun] = ()  # read only: set when the slot is tallied
    tally: Tally | None = None

    @property
    def run_ids(self) -> list[int]:
        return [run.id for run in self.runs]

    @property
    def done(self) -> int:
        if self.status in (RUNNING, BLOCKED):
            return self.counted
        if self.status == PENDING:
            return 0
        return self.target - min(self.launched, self.target)


@dataclass(slots=True)
class ClimberStanding:
    combination_key: str
    label: str
    status: str
    combination_cell: CombinationCell | None
    pin_now: bool = False
    blocked_reason: str | None = None
    problem: str | None = None
    attempts: int | None = None
    current_rung: str | None = None
    tally: Tally | None = None
    missing: int = 0
    slots: list[SlotStanding] = field(default_factory=list)
    new_verdicts: dict[str, str] = field(default_factory=dict)

    @property
    def skipped_by_stop(self) -> int:
        """The runs a Stop left unrun in the slots it skipped of this climber (``unrun``); 0 for
        a climber not stopped."""
        if self.status != STOPPED:
            return 0
        return sum(
            unrun(slot.target, len(slot.runs), slot.launched)
            for slot in self.slots
            if slot.status == SKIPPED
        )


def unrun(target: int, held: int, launched: int) -> int:
    """Of a slot a Stop skipped, the runs it left unrun: its target less the runs it held and the
    dispatch's jobs still in flight for it."""
    return max(0, target - min(held, target) - min(launched, target))


@dataclass(slots=True)
class Standing:
    climbers: list[ClimberStanding]
    launched_in_flight: int

    def slot_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(SLOT_STATUSES, 0)
        for climber in self.climbers:
            for slot in climber.slots:
                counts[slot.status] += 1
        return counts

    def ended(self) -> "Standing":
        """The standing of a dispatch that has ended (in place): running, blocked or pending slots
        are skipped, and a climber still running or blocked (a Stop's) is stopped where it
        stood."""
        for climber in self.climbers:
            for slot in climber.slots:
                if slot.status in (RUNNING, BLOCKED, PENDING):
                    slot.status = SKIPPED
            if climber.status in CAUGHT_BY_THE_END:
                climber.status = STOPPED
                climber.blocked_reason = climber.problem = climber.attempts = None
                climber.missing = 0
        return self

    @property
    def settled(self) -> bool:
        """Every climber completed or failed."""
        return all(c.status in (COMPLETED, FAILED) for c in self.climbers)

    def reads_needs_attention(self, launched_in_flight: int) -> bool:
        """Needs attention (seed 004): none of the jobs the dispatch launched is in flight, every
        climber is completed, failed or blocked, and at least one is blocked."""
        return (
            launched_in_flight == 0
            and all(c.status in (COMPLETED, FAILED, BLOCKED) for c in self.climbers)
            and any(c.status == BLOCKED for c in self.climbers)
        )


def evaluate(
    *,
    rungs: list[RungSnap],
    climbers: list[ClimberInput],
    gate: Gate,
    evidence: Evidence,
    running: bool,
    whole: bool = True,
) -> Standing:
    """Every climber's standing. Not ``whole`` (a launch pass's): a climber stopped on a rung it
    has not passed nor failed has no slots after it (pending all, and ten thousand of them on a
    large board climbing its first rungs); one that failed or completed has all of its slots,
    and so does every climber of an ended standing."""
    whole = whole or not running
    held: set[str] = {c.pinned.key for c in climbers if c.pinned is not None}
    standings = []
    for climber in climbers:
        cell, pin_now, problem = _resolve(climber, held)
        if pin_now and cell is not None:  # a cell pinned now is one
            held.add(cell.key)
        standings.append(
            _climb(climber, cell, pin_now, problem, rungs=rungs, gate=gate, evidence=evidence,
                   whole=whole)
        )  # fmt: skip
    standing = Standing(
        climbers=standings, launched_in_flight=sum(evidence.launched_in_flight.values())
    )
    return standing if running else standing.ended()


def _resolve(
    climber: ClimberInput, held: set[str]
) -> tuple[CombinationCell | None, bool, str | None]:
    """The climber's cell, whether to pin it now, and why it cannot launch (if it cannot)."""
    pinned, live, problem = climber.pinned, climber.live, climber.problem
    if pinned is not None:
        if live is None:
            return pinned, False, problem or "its combination no longer resolves"
        if live.key != pinned.key:
            moved = "its combination now resolves to other cells than the dispatch reads"
            return pinned, False, moved
        return pinned, False, problem
    if live is None:
        return None, False, problem or "its combination does not resolve"
    if live.key in held:
        return None, False, "its cells are already held by another climber"
    return live, True, problem


def _climb(
    climber: ClimberInput,
    cell: CombinationCell | None,
    pin_now: bool,
    problem: str | None,
    *,
    rungs: list[RungSnap],
    gate: Gate,
    evidence: Evidence,
    whole: bool = True,
) -> ClimberStanding:
    standing = ClimberStanding(climber.combination_key, climber.label, COMPLETED, cell, pin_now)
    if cell is None:
        standing.status, standing.blocked_reason, standing.problem = BLOCKED, UNLAUNCHABLE, problem
        standing.current_rung = rungs[0].id if rungs else None
        standing.slots = [
            SlotStanding(rung=r.id, status=BLOCKED if i == 0 else PENDING, target=r.target)
            for i, r in enumerate(rungs)
        ]
        return standing

    stopped_at = None  # index of the current or failed rung
    combination_key = cell.key
    # Read once: this loop runs for every slot of the board (ten thousand on a large one).
    cell_runs, in_flight = evidence.runs, evidence.cell_in_flight
    launched = evidence.launched_in_flight
    slots, verdicts = standing.slots, climber.verdicts
    for index, rung in enumerate(rungs):
        key = joined_cell_key(rung.pin_key, combination_key)
        runs = cell_runs.get(key, NO_RUNS)[: rung.target]
        slot = SlotStanding(
            rung.id, PENDING, key, rung.target, len(runs), launched.get((rung.id, key), 0)
        )
        slots.append(slot)
        if stopped_at is not None:
            continue
        slot.runs = runs
        slot.tally = tally(runs, target=rung.target, in_flight=in_flight.get(key, 0), gate=gate)
        verdict = verdicts.get(rung.id)
        if verdict is None:
            decided = decide(slot.tally, gate)
            if decided is not None:
                verdict = decided.value
                standing.new_verdicts[rung.id] = verdict
        if verdict == PASSED_VERDICT:
            slot.status = PASSED
            continue
        stopped_at = index
        standing.current_rung = rung.id
        standing.tally = slot.tally
        if verdict == FAILED_VERDICT:
            slot.status = FAILED
            standing.status = FAILED
            continue
        _undecided(standing, slot, climber, rung, key, problem, evidence)
        if not whole:
            break
    if stopped_at is not None and standing.status == FAILED:
        for slot in standing.slots[stopped_at + 1 :]:
            slot.status = SKIPPED
    return standing


def _undecided(
    standing: ClimberStanding,
    slot: SlotStanding,
    climber: ClimberInput,
    rung: RungSnap,
    key: str,
    problem: str | None,
    evidence: Evidence,
) -> None:
    t = slot.tally
    assert t is not None  # tallied before it is found undecided
    blocking = _blocking_failure(climber, rung.id, key, evidence)
    missing = t.pending - t.in_flight
    if t.in_flight > 0:
        status, reason = RUNNING, None
    elif blocking is not None:
        status, reason = BLOCKED, FAILING
        standing.attempts = blocking.attempt
    elif missing > 0 and problem:
        status, reason = BLOCKED, UNLAUNCHABLE
    elif missing > 0:
        status, reason = RUNNING, None
    else:
        status, reason = BLOCKED, UNRATED
    slot.status = standing.status = status
    standing.blocked_reason = reason
    if reason == UNLAUNCHABLE:
        standing.problem = problem
    if blocking is None and not problem:
        standing.missing = max(0, missing)


def _blocking_failure(
    climber: ClimberInput, rung_id: str, key: str, evidence: Evidence
) -> Failure | None:
    """The exhausted failure that blocks the slot: ended after the climber's last Retry, and not
    replaced by a launch of the dispatch made after it ended."""
    last_launch = evidence.last_launch.get((rung_id, key))
    blocking = None
    for failure in evidence.failures.get((rung_id, key), []):
        if climber.retried_at is not None and failure.finished_at <= climber.retried_at:
            continue
        if last_launch is not None and last_launch > failure.finished_at:
            continue
        if blocking is None or failure.finished_at > blocking.finished_at:
            blocking = failure
    return blocking
