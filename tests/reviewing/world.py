"""A ladder whose latest dispatch has completed runs to review and to compare."""

from ladders import services
from ladders.models import Dispatch
from loopweb.runs.models import Review, Role
from tests.factories import UserFactory
from tests.ladders.builders import climbers, make_ladder, versions, work


def climbed(
    owner, driver, run_tasks, *, rungs=1, combos=3, runs=2, reviewers=("rita",), prefix="step"
):
    """A ladder of ``rungs`` rungs and ``combos`` climbers, ``runs`` runs a cell, climbed to the
    end: every slot's runs completed."""
    from django.contrib.auth import get_user_model

    shared = list(
        get_user_model().objects.filter(username__in=reviewers).values_list("pk", flat=True)
    )
    ladder = make_ladder(
        owner,
        versions(rungs, prefix=prefix),
        climbers(combos, prefix=f"{prefix}-m"),
        runsPerCell=runs,
        reviewers=shared,
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks)
    return ladder


def rung_ids(ladder) -> list[str]:
    return [r["id"] for r in Dispatch.objects.get(ladder=ladder).snapshot["rungs"]]


def entries(ladder) -> list[dict]:
    from ladders.selectors import slot_run_entries

    return slot_run_entries(ladder)


def reviewer_named(name: str):
    return UserFactory(username=name, role=Role.REVIEWER)


def review(run_id: int, reviewer, rating: int, verdict: str = "") -> Review:
    return Review.objects.create(
        run_id=run_id, reviewer=reviewer, aesthetic_rating=rating, verdict=verdict
    )
