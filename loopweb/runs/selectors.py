"""Reads of the run substrate."""

from django.db.models import QuerySet

from loopweb.runs.models import Run


def counted_runs_of(cell_key: str) -> QuerySet[Run]:
    """The runs that count for a cell, in the order they finished (SPEC §3, "Which runs count").

    Not ``infrastructure``, not ``canceled``, attempt not retried: ``Run.counted`` holds exactly
    that, kept by the transaction that ends the attempt and by every re-push, so this is one
    range read on the ``run_counted_in_cell`` index.
    """
    return Run.objects.filter(cell_key=cell_key, counted=True).order_by("finished_at", "id")


def counted_runs(cell_key: str, target: int) -> list[Run]:
    """A slot's runs: the first ``target`` counted runs of its cell to finish, whoever launched
    them."""
    if target <= 0:
        return []
    return list(counted_runs_of(cell_key)[:target])
