"""Provider budgets' rules (API.md, "Provider budgets"): which jobs a budget covers, its
effective caps under back-off, its rolling minute, and which queued jobs a claim takes. Pure:
no ORM; ``loopweb.runs.claim`` reads and writes the rows around these under the budgets' locks.

A budget reads its attributes off any object shaped like ``ProviderBudget`` (provider, model,
max_in_flight, per_minute, backoff_cap, backoff_from, backoff_until, starts, turns).
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

#: How long a rate-limited release backs a budget off when the driver gives no ``retryAfter``.
DEFAULT_BACKOFF = timedelta(seconds=60)
#: After the back-off, the cap grows back by one a step.
RECOVERY_STEP = timedelta(seconds=10)
#: The rolling minute, in whole seconds. Starts are kept by the second and one second more is
#: counted, so the window is never shorter than a minute and a cap is never exceeded in any one.
WINDOW = 60
#: Sources remembered for the round-robin, per budget (the least recently served are dropped
#: first: one forgotten goes first next time, which is what it would have earned anyway).
TURNS_KEPT = 256
#: A cap that is no cap.
UNCAPPED = 1 << 31
#: The rolling minute of a budget is kept in this many shards on PostgreSQL, each allowed its
#: share of the per-minute cap (``minute_share``): claims take different shards at once.
MINUTE_SHARDS = 32


class Budget(Protocol):
    id: Any
    provider: str
    model: str
    max_in_flight: int | None
    per_minute: int | None
    backoff_cap: int | None
    backoff_from: int | None
    backoff_until: datetime | None
    starts: dict[str, int]
    turns: dict[str, float]


Target = tuple[str, str]  # (provider, model)


# What a job is under ---------------------------------------------------------------------------


def targets(cell: Mapping[str, Any], providers: Mapping[str, str]) -> frozenset[Target]:
    """The (provider, model) pairs a job's combination cell calls: its model, or for a gg
    combination each bound model, with its provider from the catalog (``providers``, by model
    name; the cell's own provider for its launch model)."""
    bound = cell.get("boundModels") or ()
    if cell.get("configuration") is None or not bound:
        return frozenset({(cell.get("provider", ""), cell.get("model", ""))})
    launch = cell.get("model", "")
    return frozenset(
        (providers.get(name) or (cell.get("provider", "") if name == launch else ""), name)
        for name in bound
    )


def gg_models(cell: Mapping[str, Any]) -> tuple[str, ...]:
    """The models whose providers ``targets`` needs from the catalog for this cell."""
    if cell.get("configuration") is None:
        return ()
    return tuple(cell.get("boundModels") or ())


def covers(budget: Budget, target: Target) -> bool:
    provider, model = target
    return budget.provider == provider and budget.model in ("", model)


def budgets_of(budgets: Iterable[Budget], job_targets: Iterable[Target]) -> frozenset:
    """The ids of the budgets a job with these targets is under."""
    job_targets = tuple(job_targets)
    return frozenset(b.id for b in budgets if any(covers(b, t) for t in job_targets))


def source(origin: str) -> str:
    """Who an origin's jobs take turns as: a dispatch (a ladder's ``ladder:<id>/<dispatch>/``),
    a plan, or hand launches: the origin up to its last ``/``, or all of it."""
    cut = origin.rfind("/")
    return origin[: cut + 1] if cut >= 0 else origin


# Caps and back-off ---------------------------------------------------------------------------


def recovering_cap(budget: Budget, now: datetime) -> int | None:
    """The in-flight cap a back-off still holds the budget to, or None when it is over: the cap
    it fell to until ``backoff_until``, then one more each ``RECOVERY_STEP``."""
    if budget.backoff_cap is None or budget.backoff_until is None or budget.backoff_from is None:
        return None
    cap = budget.backoff_cap
    if now >= budget.backoff_until:
        cap += int((now - budget.backoff_until) / RECOVERY_STEP)
    return None if cap >= budget.backoff_from else cap


def in_flight_cap(budget: Budget, now: datetime) -> int | None:
    """How many of the budget's jobs may be in flight now (None: no cap)."""
    backoff = recovering_cap(budget, now)
    if backoff is None:
        return budget.max_in_flight
    return backoff if budget.max_in_flight is None else min(backoff, budget.max_in_flight)


def factor(budget: Budget, now: datetime) -> float:
    """The share of its cap the back-off leaves the budget (1.0: none)."""
    backoff = recovering_cap(budget, now)
    if backoff is None or not budget.backoff_from:
        return 1.0
    return backoff / budget.backoff_from


def per_minute_cap(budget: Budget, now: datetime) -> int | None:
    """How many of the budget's jobs may start in the rolling minute (None: no cap); a back-off
    scales it as it scales the in-flight cap."""
    if budget.per_minute is None:
        return None
    share = factor(budget, now)
    return budget.per_minute if share >= 1.0 else max(1, int(budget.per_minute * share))


def back_off(budget: Budget, now: datetime, *, in_flight: int, retry_after: float | None) -> None:
    """A driver released one of the budget's jobs as rate limited: halve the effective in-flight
    cap (at least 1) until ``retry_after`` seconds (or ``DEFAULT_BACKOFF``) have passed. A budget
    with no in-flight cap halves what it had in flight (``in_flight``, the released job counted)."""
    current = recovering_cap(budget, now)
    if current is None:
        base = budget.max_in_flight or max(in_flight, 1)
        budget.backoff_from = base
        current = base
    elif budget.max_in_flight is not None:
        current = min(current, budget.max_in_flight)
    wait = DEFAULT_BACKOFF if retry_after is None else timedelta(seconds=retry_after)
    budget.backoff_cap = max(1, current // 2)
    budget.backoff_until = now + wait


def clear_backoff_if_over(budget: Budget, now: datetime) -> None:
    if budget.backoff_cap is not None and recovering_cap(budget, now) is None:
        budget.backoff_cap = budget.backoff_from = budget.backoff_until = None


# The rolling minute and the turns -----------------------------------------------------------


def _second(now: datetime) -> int:
    return int(now.timestamp())


def started_last_minute(budget: Budget, now: datetime) -> int:
    oldest = _second(now) - WINDOW
    return sum(n for second, n in (budget.starts or {}).items() if int(second) >= oldest)


def record_starts(budget: Budget, now: datetime, count: int) -> None:
    second = _second(now)
    oldest = second - WINDOW
    starts = {k: n for k, n in (budget.starts or {}).items() if int(k) >= oldest}
    starts[str(second)] = starts.get(str(second), 0) + count
    budget.starts = starts


def record_turns(budget: Budget, served: Mapping[str, float]) -> None:
    turns = {**(budget.turns or {}), **served}
    if len(turns) > TURNS_KEPT:
        turns = dict(sorted(turns.items(), key=lambda item: item[1])[-TURNS_KEPT:])
    budget.turns = turns


def minute_share(cap: int, shard: int, shards: int = MINUTE_SHARDS) -> int:
    """The starts one shard of the rolling minute allows: the shares add up to ``cap``."""
    return cap // shards + (1 if shard < cap % shards else 0)


def room(budget: Budget, now: datetime, in_flight: int) -> int:
    """How many more of the budget's jobs a claim may start now."""
    caps = []
    cap = in_flight_cap(budget, now)
    if cap is not None:
        caps.append(cap - in_flight)
    cap = per_minute_cap(budget, now)
    if cap is not None:
        caps.append(cap - started_last_minute(budget, now))
    return max(0, min(caps)) if caps else UNCAPPED


# Which jobs a claim takes ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    id: int
    source: str
    budgets: frozenset


def pick(
    candidates: list[Candidate],
    rooms: Mapping[Any, int],
    turns: Mapping[Any, Mapping[str, float]],
    *,
    limit: int,
    clock: float,
) -> tuple[list[Candidate], dict[Any, dict[str, float]]]:
    """Up to ``limit`` candidates (given oldest first) a claim takes, and the turns it served.

    Oldest first, but never past a budget's room; and where the oldest that fits is under
    budgets, the jobs under any of the same budgets take turns by source: the source served
    least recently (one never served first, then the oldest job) goes. ``clock``: now, as a
    Unix time, to record the turns by."""
    left = dict(rooms)
    remaining = list(candidates)
    served: dict[Any, dict[str, float]] = {}
    picked: list[Candidate] = []

    def last_served(candidate: Candidate, among: frozenset) -> float:
        return max(
            served.get(b, {}).get(candidate.source, turns.get(b, {}).get(candidate.source, -1.0))
            for b in candidate.budgets & among
        )

    while len(picked) < limit:
        fitting = [c for c in remaining if all(left.get(b, 0) > 0 for b in c.budgets)]
        if not fitting:
            break
        chosen = fitting[0]
        if chosen.budgets:
            rivals = [c for c in fitting if c.budgets & chosen.budgets]
            among = chosen.budgets
            chosen = min(rivals, key=lambda c: (last_served(c, among), c.id))
        picked.append(chosen)
        remaining.remove(chosen)
        for b in chosen.budgets:
            left[b] -= 1
            # Each pick of one claim is served after the one before it.
            served.setdefault(b, {})[chosen.source] = clock + len(picked) * 1e-6
    return picked, served


def blocking(job_budgets: Iterable, rooms: Mapping[Any, int]) -> Any | None:
    """The budget (the first by id) a queued job waits on, or None when it could be claimed."""
    full = sorted(b for b in job_budgets if rooms.get(b, UNCAPPED) <= 0)
    return full[0] if full else None
