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
from loopweb.runs.models.budgets import BudgetPlace

#: Jobs a driver holds: what a budget counts in flight.
LEASED = tuple(status.value for status in IN_FLIGHT[1:])

#: What staff set on a budget; the rest is its state.
SETTINGS = ("provider", "model", "max_in_flight", "per_minute", "enabled")


class BudgetsOf:
    """The budgets a job is under, by its combination cell (``rules.targets``), with the
    providers of the gg models among ``cells`` read from the catalog in one query. A cell given
    as JSON text is read once per distinct text (a claim's candidates share a few cells)."""

    def __init__(self, budgets: list[ProviderBudget], cells: Iterable[Any]):
        self.budgets = budgets
        names: set[str] = set()
        texts: set[str] = set()
        for cell in cells:
            if isinstance(cell, str):
                if cell in texts:
                    continue
                texts.add(cell)
            names.update(rules.gg_models(_cell(cell)))
        self.providers = (
            dict(ModelEntry.objects.filter(name__in=names).values_list("name", "provider"))
            if names and budgets
            else {}
        )
        self._seen: dict[str, frozenset] = {}

    def __call__(self, cell: Any) -> frozenset:
        key = cell if isinstance(cell, str) else json.dumps(_cell(cell), sort_keys=True)
        found = self._seen.get(key)
        if found is None:
            found = rules.budgets_of(self.budgets, rules.targets(_cell(cell), self.providers))
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


# Places (PostgreSQL's claims, ``loopweb.runs.budget_claim_sql``) ---------------------------


def lay_out_places(budget_id: int) -> None:
    """Lay out a budget's places where it has none: a flight place for each job it may have in
    flight (and one for each it has, if more), the jobs in flight now holding the first ones; and
    the shards of its rolling minute, the first keeping the starts the budget row holds. One
    layout at a time per budget; the jobs in flight are read locked (``FOR SHARE``), so none
    leaves flight before its place is stored, or it would never be freed."""
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_PLACES_LOCK, budget_id])
        budget = ProviderBudget.objects.filter(pk=budget_id, enabled=True).first()
        if budget is None:
            return
        kinds = set(BudgetPlace.objects.filter(budget=budget).values_list("kind", flat=True))
        places = []
        if BudgetPlace.FLIGHT not in kinds and (
            budget.max_in_flight is not None or budget.backoff_from is not None
        ):
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT id, combination_cell FROM runs_job WHERE status = ANY(%s)"
                    " ORDER BY id FOR SHARE",
                    [list(LEASED)],
                )
                flying = cursor.fetchall()
            under = BudgetsOf([budget], [cell for _, cell in flying])
            held = [job_id for job_id, cell in flying if budget.pk in under(cell)]
            size = max(budget.max_in_flight or 0, budget.backoff_from or 0, len(held))
            places += [
                BudgetPlace(
                    budget=budget,
                    kind=BudgetPlace.FLIGHT,
                    place=i,
                    job_id=held[i] if i < len(held) else None,
                )
                for i in range(size)
            ]
        if BudgetPlace.MINUTE not in kinds:
            places += [
                BudgetPlace(
                    budget=budget,
                    kind=BudgetPlace.MINUTE,
                    place=i,
                    starts=(budget.starts or {}) if i == 0 else {},
                )
                for i in range(rules.MINUTE_SHARDS)
            ]
        BudgetPlace.objects.bulk_create(places, ignore_conflicts=True)


#: The first key of the advisory lock a budget's layout takes (the second is its id).
_PLACES_LOCK = 0x4C57


def turns_of(budget_ids: Iterable[Any]) -> dict[Any, dict[str, float]]:
    """Each budget's sources and when each was last served, as its places remember them."""
    turns: dict[Any, dict[str, float]] = {}
    rows = (
        BudgetPlace.objects.filter(budget_id__in=list(budget_ids), served_at__isnull=False)
        .exclude(source="")
        .values_list("budget_id", "source", "served_at")
    )
    for budget_id, source, at in rows:
        if at is None:
            continue
        mine = turns.setdefault(budget_id, {})
        mine[source] = max(at, mine.get(source, at))
    return turns


def with_minute_shards(budgets: list[ProviderBudget]) -> None:
    """Read each enabled budget's starts from the shards of its rolling minute into its
    ``starts`` (as read; nothing is saved): one query on PostgreSQL."""
    ids = [b.pk for b in budgets if b.enabled]
    if not ids or connection.vendor != "postgresql":
        return
    merged: dict[Any, dict[str, int]] = {}
    for budget_id, starts in BudgetPlace.objects.filter(
        budget_id__in=ids, kind=BudgetPlace.MINUTE
    ).values_list("budget_id", "starts"):
        mine = merged.setdefault(budget_id, {})
        for second, n in (starts or {}).items():
            mine[second] = mine.get(second, 0) + n
    for budget in budgets:
        if budget.pk in merged:  # laid out: the shards hold what the row held then, and since
            budget.starts = merged[budget.pk]


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
    """Each budget's figures, in two queries whatever their number (one when none is given; one
    more for the starts of the enabled ones on PostgreSQL)."""
    if not budgets:
        return {}
    now = now or timezone.now()
    with_minute_shards(budgets)
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


def waiting_jobs(
    origin_prefix: str,
    now: datetime | None = None,
    enabled: list[ProviderBudget] | None = None,
) -> list[WaitingJob]:
    """The queued jobs of these origins that wait on a budget at its cap: one query when no
    budget is enabled, two when none of them is queued, at most five (one fewer each when the
    caller read the ``enabled`` budgets in this request)."""
    if enabled is None:
        enabled = list(ProviderBudget.objects.filter(enabled=True))
    budgets = sorted(enabled, key=lambda b: b.pk)
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
        if connection.vendor == "postgresql":
            lay_out_places(budget.pk)  # now, not at the next claim
        from loopweb.runs import waiting_marks

        waiting_marks.settle([budget])  # its slots begin or stop waiting with this save
    return budget


def delete_budget(*, budget: ProviderBudget) -> None:
    from loopweb.runs import waiting_marks

    with transaction.atomic():
        if ProviderBudget.objects.filter(pk=budget.pk, marked_full=True).exists():
            waiting_marks.mark([budget])  # its slots stop waiting
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
