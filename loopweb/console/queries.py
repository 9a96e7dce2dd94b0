"""Small reads the console needs beside the ladder selectors: each one query."""

from django.db.models import Count, Q

from ladders.evidence import stop_cancels
from ladders.models import Dispatch, DispatchClimber, Ladder, LadderCombination, LadderGroup
from ladders.origins import dispatch_prefix
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
    GroupMember,
    Job,
    JobStatus,
    Outcome,
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
    return climber_labels(dispatch, [key])[0]


def climber_labels(dispatch: Dispatch, keys: list[str]) -> list[str]:
    """The dispatch's climbers' labels for ``keys`` (a key stands for a climber it cannot
    name), in the order given."""
    rows = DispatchClimber.objects.filter(
        dispatch=dispatch, combination_key__in=keys
    ).select_related("combination")
    combos = {row.combination_key: row.combination for row in rows if row.combination is not None}
    ids = {c.configuration_id for c in combos.values() if c.configuration_id}
    names = dict(GGConfiguration.objects.filter(pk__in=ids).values_list("id", "name"))
    return [_label(combos[key], names) if key in combos else key for key in keys]


def run_for(user, run_id: int) -> Run | None:
    return visible_runs(user).filter(pk=run_id).first()


def checklist_of(run: Run) -> list[dict]:
    return checklist_for(run.case, run.version)


def checklist_for(case: str, version: str) -> list[dict]:
    return (
        CaseVersion.objects.filter(case__slug=case, version=version)
        .values_list("checklist", flat=True)
        .first()
        or []
    )


def blocking_failures(ladder_id: int, dispatch_id: str, slots) -> dict[tuple[str, str], dict]:
    """The latest exhausted failure of the dispatch's own jobs for each (rungId, cellKey) of
    ``slots``: what the failure was, what the driver said, which attempt of how many. One
    query however many slots."""
    slots = {(rung, cell) for rung, cell in slots if rung and cell}
    if not slots:
        return {}
    prefix = dispatch_prefix(ladder_id, dispatch_id)
    rows = (
        Job.objects.filter(
            origin__in={prefix + rung for rung, _ in slots},
            cell_key__in={cell for _, cell in slots},
            status=JobStatus.FAILED,
            retry__isnull=True,
        )
        .exclude(failure=Outcome.CANCELED)
        .order_by("finished_at", "pk")
        .values("origin", "cell_key", "failure", "failure_detail", "attempt", "retry_count")
    )
    found = {}
    for row in rows:
        slot = (row["origin"].removeprefix(prefix), row["cell_key"])
        if slot in slots:
            found[slot] = {
                "failure": row["failure"],
                "detail": row["failure_detail"],
                "attempt": row["attempt"],
                "attempts": row["retry_count"] + 1,
            }
    return found


def declared_counts(ladder_ids) -> dict[int, int]:
    """How many climbers a Run of each ladder would climb (distinct combinations of its groups
    and one-offs): three queries for any number of ladders."""
    ladder_ids = list(ladder_ids)
    if not ladder_ids:
        return {}
    keys: dict[int, set[str]] = {pk: set() for pk in ladder_ids}
    links = list(
        LadderGroup.objects.filter(ladder_id__in=ladder_ids).values_list("ladder_id", "group_id")
    )
    members: dict[int, list[str]] = {}
    for group_id, key in GroupMember.objects.filter(group_id__in={g for _, g in links}).values_list(
        "group_id", "combination__key"
    ):
        members.setdefault(group_id, []).append(key)
    for ladder_id, group_id in links:
        keys[ladder_id].update(members.get(group_id, []))
    for ladder_id, key in LadderCombination.objects.filter(ladder_id__in=ladder_ids).values_list(
        "ladder_id", "combination__key"
    ):
        keys[ladder_id].add(key)
    return {pk: len(found) for pk, found in keys.items()}


def last_runs(ladder_ids) -> dict[int, dict]:
    """When each ladder's latest dispatch started and ended: one query."""
    return {
        row["ladder_id"]: row
        for row in Dispatch.objects.filter(ladder_id__in=list(ladder_ids)).values(
            "ladder_id", "started_at", "ended_at"
        )
    }
