"""Small reads the console needs beside the ladder selectors: each one query."""

from django.db.models import Count, Q

from ladders.evidence import stop_cancels
from ladders.models import Dispatch, DispatchClimber, Ladder
from ladders.services import declared_combinations
from loopweb.runs.access import visible_runs
from loopweb.runs.models import (
    NOT_STARTED,
    UNDER_WAY,
    Account,
    Case,
    CaseVersion,
    Combination,
    GGConfiguration,
    Run,
)


def case_titles(slugs) -> dict[str, str]:
    return dict(Case.objects.filter(slug__in=set(slugs)).values_list("slug", "title"))


def account_limit(user_id: int) -> int | None:
    return (
        Account.objects.filter(user_id=user_id)
        .values_list("runs_in_flight_limit", flat=True)
        .first()
    )


def jobs_to_cancel(ladder: Ladder) -> dict[str, int]:
    """What Stop and cancel running would reach, split by how far along the jobs are."""
    return stop_cancels(ladder.pk, cancel_running=True).aggregate(
        underWay=Count("pk", filter=Q(status__in=UNDER_WAY)),
        notStarted=Count("pk", filter=Q(status__in=NOT_STARTED)),
    )


def _label(combination: Combination, names: dict[int, str]) -> str:
    return combination.label(names.get(combination.configuration_id))


def declared_climbers(ladder: Ladder) -> list[dict]:
    """The combinations a Run would climb, in declaration order (before any Run)."""
    declared = declared_combinations(ladder)
    ids = {c.configuration_id for c in declared if c.configuration_id}
    names = dict(GGConfiguration.objects.filter(pk__in=ids).values_list("id", "name"))
    seen, rows = set(), []
    for combination in declared:
        if combination.key not in seen:
            seen.add(combination.key)
            rows.append({"key": combination.key, "label": _label(combination, names)})
    return rows


def climber_label(dispatch: Dispatch, key: str) -> str:
    climber = (
        DispatchClimber.objects.filter(dispatch=dispatch, combination_key=key)
        .select_related("combination")
        .first()
    )
    if climber is None or climber.combination is None:
        return key
    combination = climber.combination
    names = {}
    if combination.configuration_id:
        names = dict(
            GGConfiguration.objects.filter(pk=combination.configuration_id).values_list(
                "id", "name"
            )
        )
    return _label(combination, names)


def run_for(user, run_id: int) -> Run | None:
    return visible_runs(user).filter(pk=run_id).first()


def checklist_of(run: Run) -> list[dict]:
    return (
        CaseVersion.objects.filter(case__slug=run.case, version=run.version)
        .values_list("checklist", flat=True)
        .first()
        or []
    )
