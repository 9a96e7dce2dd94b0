"""Budgets, jobs and claims for the budgets' tests."""

from loopweb.runs import services
from loopweb.runs.cells import CasePin
from loopweb.runs.models import IN_FLIGHT, Job, ProviderBudget
from loopweb.runs.resolve import CatalogView, combination_cell

LEASED = [status.value for status in IN_FLIGHT[1:]]


def budget(provider="acme", model="", **values) -> ProviderBudget:
    return ProviderBudget.objects.create(provider=provider, model=model, **values)


def queue(owner, version, combination, *, origin="manual", n=1) -> list[Job]:
    """``n`` queued jobs of the combination's cell, as a launch pass of ``origin`` enqueues them."""
    cell = combination_cell(combination, CatalogView.load([combination]))
    pin = CasePin(version.case.slug, version.version, "default")
    jobs = [
        services.new_job(
            owner=owner,
            pin=pin,
            combination=combination,
            combination_cell=cell,
            origin=origin,
            retry_count=1,
        )
        for _ in range(n)
    ]
    return services.enqueue(jobs)


def leased(provider="acme") -> int:
    """The provider's jobs drivers hold, read from the job rows."""
    return Job.objects.filter(status__in=LEASED, combination_cell__provider=provider).count()


def starts(limit: ProviderBudget) -> dict[str, int]:
    """The budget's starts of the last minute by second, wherever the database keeps them (its
    row on SQLite, the shards of its minute on PostgreSQL)."""
    from loopweb.runs import budgeting

    limit.refresh_from_db()
    budgeting.with_minute_shards([limit])
    return limit.starts


def turns(limit: ProviderBudget) -> dict[str, float]:
    """The sources the budget served and when (its row on SQLite, its places on PostgreSQL)."""
    from django.db import connection

    from loopweb.runs import budgeting

    limit.refresh_from_db()
    if connection.vendor == "postgresql":
        return budgeting.turns_of([limit.pk]).get(limit.pk, {})
    return limit.turns


def a_minute_passes(limit: ProviderBudget) -> None:
    """Move the budget's recorded starts 61 seconds into the past."""
    from loopweb.runs.models.budgets import BudgetPlace

    def earlier(recorded: dict) -> dict:
        return {str(int(second) - 61): n for second, n in recorded.items()}

    limit.refresh_from_db()
    ProviderBudget.objects.filter(pk=limit.pk).update(starts=earlier(limit.starts))
    for place in BudgetPlace.objects.filter(budget=limit, kind=BudgetPlace.MINUTE):
        BudgetPlace.objects.filter(pk=place.pk).update(starts=earlier(place.starts))
