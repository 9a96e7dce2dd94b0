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
