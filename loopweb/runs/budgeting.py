"""Provider budgets against the database: the jobs they hold, their live figures, staff's
edits, and the back-off of a rate-limited release. The rules are ``loopweb.runs.budgets``; the
claim that enforces them is ``loopweb.runs.claim``.

A budget's state (its back-off, starts and turns) is written only under a lock on its row, by
the claims and releases that change it and by staff's edits, one after another.
"""

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import Count
from django.utils import timezone

from loopweb.runs import budgets as rules
from loopweb.runs.errors import Conflict
from loopweb.runs.models import IN_FLIGHT, Job, JobStatus, ModelEntry, ProviderBudget

#: Jobs a driver holds: what a budget counts in flight.
LEASED = tuple(status.value for status in IN_FLIGHT[1:])

#: What staff set on a budget; the rest is its state.
SETTINGS = ("provider", "model", "max_in_flight", "per_minute", "enabled")


class BudgetsOf:
    """The budgets a job is under, by its combination cell (``rules.targets``), with the
    providers of the gg models among ``cells`` read from the catalog in one query."""

    def __init__(self, budgets: list[ProviderBudget], cells: Iterable[Any]):
        self.budgets = budgets
        names = {name for cell in cells for name in rules.gg_models(_cell(cell))}
        self.providers = (
            dict(ModelEntry.objects.filter(name__in=names).values_list("name", "provider"))
            if names and budgets
            else {}
        )
        self._seen: dict[str, frozenset] = {}

    def __call__(self, cell: Any) -> frozenset:
        cell = _cell(cell)
        key = json.dumps(cell, sort_keys=True)
        found = self._seen.get(key)
        if found is None:
            found = rules.budgets_of(self.budgets, rules.targets(cell, self.providers))
            self._seen[key] = found
        return found


def _cell(cell: Any) -> dict:
    """A combination cell as read: a dict, or its JSON text where a grouping returned it so."""
    if isinstance(cell, str):
        cell = json.loads(cell)
    return cell or {}


#: Combination id → the cell (JSON text) its jobs are pinned to, and when it was read: jobs in
#: flight are counted by combination (an index-only count), and their cells read once a minute.
_CELLS: dict[int, tuple[str, float]] = {}
CELL_SECONDS = 60.0


def leased_by_combination() -> tuple[dict[int, tuple[str, int]], dict[str, int]]:
    """Jobs drivers hold: by combination id, (its cell as JSON text, how many); and those whose
    combination is gone, by cell."""
    rows = list(
        Job.objects.filter(status__in=LEASED)
        .values_list("combination_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    cells = cells_of([cid for cid, _ in rows if cid is not None])
    by_combination = {cid: (cells[cid], n) for cid, n in rows if cid in cells}
    orphans: dict[str, int] = {}
    if any(cid is None for cid, _ in rows):
        for cell, n in (
            Job.objects.filter(status__in=LEASED, combination_id=None)
            .values_list("combination_cell")
            .annotate(n=Count("id"))
            .order_by()
        ):
            key = json.dumps(_cell(cell), sort_keys=True)
            orphans[key] = orphans.get(key, 0) + n
    return by_combination, orphans


def cells_of(combination_ids: Iterable[int]) -> dict[int, str]:
    """The cell (JSON text) the jobs of each combination are pinned to, read at most once a
    minute per combination (a gg combination's cell follows the catalog when it resolves)."""
    now = time.monotonic()
    found: dict[int, str] = {}
    stale = []
    for cid in set(combination_ids):
        cached = _CELLS.get(cid)
        if cached is not None and now - cached[1] <= CELL_SECONDS:
            found[cid] = cached[0]
        else:
            stale.append(cid)
    if stale:
        jobs = Job.objects.filter(combination_id__in=stale)
        if connection.features.can_distinct_on_fields:
            jobs = jobs.order_by("combination_id", "-id").distinct("combination_id")
        for cid, cell in jobs.values_list("combination_id", "combination_cell"):
            found[cid] = json.dumps(_cell(cell), sort_keys=True)
            _CELLS[cid] = (found[cid], now)  # shared by the process's threads: whole entries
    return found


def known_cells() -> dict[int, str]:
    """The cells of the combinations this process has read lately (a combination stays)."""
    now = time.monotonic()
    return {cid: cell for cid, (cell, at) in list(_CELLS.items()) if now - at <= 10 * CELL_SECONDS}


def leased_by_cell() -> dict[str, int]:
    """Jobs drivers hold, counted by combination cell (as JSON text: a dict is no key)."""
    by_combination, counts = leased_by_combination()
    for cell, n in by_combination.values():
        counts[cell] = counts.get(cell, 0) + n
    return counts


def in_flight(
    budgets: list[ProviderBudget], flying: Mapping[str, int], under: BudgetsOf
) -> dict[Any, int]:
    counts = dict.fromkeys((b.pk for b in budgets), 0)
    for cell, n in flying.items():
        for budget_id in under(cell):
            counts[budget_id] += n
    return counts


# Live figures -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Figures:
    """A budget's live figures, as the API, the console and /metrics show them."""

    in_flight: int
    started_last_minute: int
    in_flight_cap: int | None
    per_minute_cap: int | None
    factor: float
    until: datetime | None
    room: int


def figures(budgets: list[ProviderBudget], now: datetime | None = None) -> dict[Any, Figures]:
    """Each budget's figures, in two queries whatever their number (one when none is given)."""
    if not budgets:
        return {}
    now = now or timezone.now()
    flying = leased_by_cell()
    counts = in_flight(budgets, flying, BudgetsOf(budgets, flying))
    found = {}
    for budget in budgets:
        backing_off = rules.recovering_cap(budget, now) is not None
        found[budget.pk] = Figures(
            in_flight=counts[budget.pk],
            started_last_minute=rules.started_last_minute(budget, now),
            in_flight_cap=rules.in_flight_cap(budget, now),
            per_minute_cap=rules.per_minute_cap(budget, now),
            factor=rules.factor(budget, now),
            until=budget.backoff_until if backing_off else None,
            room=rules.room(budget, now, counts[budget.pk]) if budget.enabled else rules.UNCAPPED,
        )
    return found


@dataclass(frozen=True)
class Waiting:
    """What a slot whose next job waits on a budget reads (``waitingFor``)."""

    budget: int
    provider: str
    model: str | None

    def as_json(self) -> dict:
        return {"budget": self.budget, "provider": self.provider, "model": self.model}


@dataclass(frozen=True)
class WaitingJob:
    """A queued job a budget at its cap holds back, and the budget (with its figures)."""

    origin: str
    cell_key: str
    budget: ProviderBudget
    figures: Figures

    @property
    def waiting_for(self) -> Waiting:
        return Waiting(self.budget.pk, self.budget.provider, self.budget.model or None)


def waiting_jobs(origin_prefix: str, now: datetime | None = None) -> list[WaitingJob]:
    """The queued jobs of these origins that wait on a budget at its cap: one query when no
    budget is enabled, two when none of them is queued, at most five."""
    budgets = list(ProviderBudget.objects.filter(enabled=True).order_by("pk"))
    if not budgets:
        return []
    queued = list(
        Job.objects.filter(status=JobStatus.QUEUED, origin__startswith=origin_prefix)
        .order_by("id")
        .values_list("origin", "cell_key", "combination_cell")
    )
    if not queued:
        return []
    now = now or timezone.now()
    found = figures(budgets, now)
    rooms = {pk: f.room for pk, f in found.items()}
    if all(room > 0 for room in rooms.values()):
        return []
    under = BudgetsOf(budgets, [cell for _, _, cell in queued])
    by_id = {b.pk: b for b in budgets}
    waiting = []
    for origin, key, cell in queued:
        blocked = rules.blocking(under(cell), rooms)
        if blocked is not None:
            waiting.append(WaitingJob(origin, key, by_id[blocked], found[blocked]))
    return waiting


# Writes -------------------------------------------------------------------------------------


def save_budget(*, budget: ProviderBudget | None, values: Mapping[str, Any]) -> ProviderBudget:
    """Create a budget, or change what staff set on one (never its state)."""
    with transaction.atomic():
        if budget is None:
            budget = ProviderBudget()
            fields = None
        else:
            # Lock it: a claim writing its state must not be overwritten by this edit.
            budget = ProviderBudget.objects.select_for_update(no_key=True).get(pk=budget.pk)
            fields = [*SETTINGS, "updated_at"]
        for name in SETTINGS:
            if name in values:
                setattr(budget, name, values[name])
        budget.model = budget.model or ""
        try:
            with transaction.atomic():
                budget.save(update_fields=fields)
        except IntegrityError:
            target = f"{budget.provider}/{budget.model}" if budget.model else budget.provider
            raise Conflict(f"a budget for {target} already exists") from None
    return budget


def delete_budget(*, budget: ProviderBudget) -> None:
    with transaction.atomic():
        ProviderBudget.objects.filter(pk=budget.pk).delete()


def back_off(job: Job, *, now: datetime, retry_after: float | None) -> list[ProviderBudget]:
    """Back off the enabled budgets a released job is under (its claim's transaction holds the
    job; the budgets are locked here, after it, as a claim never waits for a job's lock)."""
    budgets = list(
        ProviderBudget.objects.select_for_update(no_key=True).filter(enabled=True).order_by("pk")
    )
    under = BudgetsOf(budgets, [job.combination_cell])
    mine = [b for b in budgets if b.pk in under(job.combination_cell)]
    if not mine:
        return []
    counts = in_flight(mine, leased_by_cell(), under)
    for budget in mine:
        # The released job is queued again already; it was in flight when the provider refused.
        rules.back_off(budget, now, in_flight=counts[budget.pk] + 1, retry_after=retry_after)
    ProviderBudget.objects.bulk_update(mine, ["backoff_cap", "backoff_from", "backoff_until"])
    return mine


def release(*, job: Job, now: datetime, retry_after: float | None) -> None:
    """Put a locked, leased job back in the queue as it was: same attempt, no retry used."""
    Job.objects.filter(pk=job.pk).update(
        status=JobStatus.QUEUED,
        lease_holder=None,
        lease_expires_at=None,
        started_at=None,
        updated_at=now,
    )
    job.status = JobStatus.QUEUED
    job.lease_holder = None
    job.lease_expires_at = None
    job.started_at = None
    back_off(job, now=now, retry_after=retry_after)
