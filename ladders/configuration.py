"""A ladder's configuration: its rungs, groups, combinations and reviewers. Saving one never
touches a running dispatch (a dispatch works from its snapshot)."""

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from ladders import lifecycle
from ladders.models import (
    Ladder,
    LadderCombination,
    LadderGroup,
    Rung,
    mint_rung_id,
)
from ladders.rung_checks import rung_problems
from loopweb.runs.models import Combination, GroupMember


def save_ladder(
    *, owner: User, data: dict[str, Any], ladder: Ladder | None = None, by: User | None = None
) -> Ladder:
    """Create or replace a ladder's configuration. Never touches a running dispatch. ``by`` is
    who made the change (the owner unless said otherwise)."""
    problems = rung_problems(data["rungs"])
    if problems:
        raise ValidationError(problems)
    with transaction.atomic():
        created = ladder is None
        if ladder is None:
            ladder = Ladder(owner=owner)
        else:
            # Serialise concurrent edits and Runs of one ladder.
            ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        ladder.name = data["name"]
        ladder.gate = data["gate"]
        ladder.runs_per_cell = data["runsPerCell"]
        ladder.runs_in_flight_limit = data["runsInFlightLimit"]
        ladder.retry_count = data["retryCount"]
        ladder.outer_axis = data["outerAxis"]
        _set_review_settings(ladder, data)
        ladder.save()
        _save_rungs(ladder, data["rungs"])
        LadderGroup.objects.filter(ladder=ladder).delete()
        LadderGroup.objects.bulk_create(
            LadderGroup(ladder=ladder, group_id=g, position=i) for i, g in enumerate(data["groups"])
        )
        LadderCombination.objects.filter(ladder=ladder).delete()
        LadderCombination.objects.bulk_create(
            LadderCombination(ladder=ladder, combination_id=c, position=i)
            for i, c in enumerate(data["combinations"])
        )
        ladder.reviewers.set(data["reviewers"])
        if "assignedReviewers" in data:
            ladder.assignees.set(data["assignedReviewers"])
        else:  # a reviewer the ladder is no longer shared with is no longer assigned
            shared = [getattr(r, "pk", r) for r in data["reviewers"]]  # users or their ids
            ladder.assignees.remove(*ladder.assignees.exclude(pk__in=shared))
        lifecycle.ladder_configured.send(
            Ladder, ladder=ladder, by=by or owner, change="created" if created else "edited"
        )
    return ladder


def save_review_settings(*, ladder: Ladder, data: dict[str, Any], by: User | None = None) -> None:
    """The ladder's review settings alone (the console's review settings page): those the data
    gives, the assigned reviewers among those the ladder is shared with."""
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        if "assignedReviewers" in data:
            shared = set(ladder.reviewers.values_list("pk", flat=True))
            if set(data["assignedReviewers"]) - shared:
                raise ValidationError(
                    {"assignedReviewers": ["Assign only reviewers the ladder is shared with."]}
                )
            ladder.assignees.set(data["assignedReviewers"])
        _set_review_settings(ladder, data)
        ladder.save()
        lifecycle.ladder_configured.send(
            Ladder, ladder=ladder, by=by or ladder.owner, change="review settings"
        )


def _set_review_settings(ladder: Ladder, data: dict[str, Any]) -> None:
    """The review settings the data gives (each one left out keeps its value)."""
    if "rubric" in data:
        ladder.rubric = [dict(criterion) for criterion in data["rubric"]]
    if "reviewsPerRun" in data:
        ladder.reviews_per_run = data["reviewsPerRun"]
    if "reservationMinutes" in data:
        ladder.reservation_minutes = data["reservationMinutes"]


def _save_rungs(ladder: Ladder, rungs: list[dict[str, Any]]) -> None:
    existing = {r.rung_id: r for r in Rung.objects.filter(ladder=ladder)}
    unknown = [r["id"] for r in rungs if r.get("id") and r["id"] not in existing]
    if unknown:
        index = next(i for i, r in enumerate(rungs) if r.get("id") in unknown)
        raise ValidationError(
            {f"rungs.{index}.id": ["This rung id does not belong to the ladder."]}
        )
    # A rung's pin is its identity: an id given with another pin is a new rung in its place.
    kept = {r["id"] for r in rungs if r.get("id") and _pin_of(existing[r["id"]]) == _pin_of(r)}
    Rung.objects.filter(ladder=ladder).exclude(rung_id__in=kept).delete()
    # Positions are rewritten in two steps so no transient duplicate ever matters.
    to_update: list[Rung] = []
    to_create: list[Rung] = []
    for position, spec in enumerate(rungs):
        rung = existing[spec["id"]] if spec.get("id") in kept else None
        rung = rung or Rung(ladder=ladder, rung_id=mint_rung_id())
        rung.position = position
        rung.case = spec["case"]
        rung.version = spec["version"]
        rung.variant = spec["variant"]
        rung.engine = spec["engine"]
        rung.runs = spec["runs"]
        (to_update if rung.pk else to_create).append(rung)
    Rung.objects.bulk_update(
        to_update, ["position", "case", "version", "variant", "engine", "runs"]
    )
    Rung.objects.bulk_create(to_create)


def _pin_of(rung: Rung | dict[str, Any]) -> tuple[str, str, str, str | None]:
    """A rung's pin, from a stored rung or a configuration's rung."""
    if isinstance(rung, Rung):
        return (rung.case, rung.version, rung.variant, rung.engine)
    return (rung["case"], rung["version"], rung["variant"], rung["engine"])


def reorder_rungs(*, ladder: Ladder, order: list[str], by: User | None = None) -> None:
    with transaction.atomic():
        ladder = Ladder.objects.select_for_update().get(pk=ladder.pk)
        rungs = {r.rung_id: r for r in Rung.objects.filter(ladder=ladder)}
        if len(order) != len(rungs) or set(order) != set(rungs):
            raise ValidationError(
                {"order": ["Give every rung id of the ladder exactly once, and nothing else."]}
            )
        for position, rung_id in enumerate(order):
            rungs[rung_id].position = position
        Rung.objects.bulk_update(rungs.values(), ["position"])
        ladder.save(update_fields=["updated_at"])
        lifecycle.ladder_configured.send(
            Ladder, ladder=ladder, by=by or ladder.owner, change="rungs reordered"
        )


def delete_ladder(*, ladder: Ladder) -> None:
    """Deletes the ladder and its dispatch; the dispatch's jobs stay (they only name it)."""
    with transaction.atomic():
        ladder.delete()


def declared_combinations(ladder: Ladder) -> list[Combination]:
    """Group members in group order, then the one-offs, in declaration order."""
    group_ids = list(
        LadderGroup.objects.filter(ladder=ladder)
        .order_by("position")
        .values_list("group_id", flat=True)
    )
    members = GroupMember.objects.filter(group_id__in=group_ids).select_related("combination")
    by_group: dict[int, list[Combination]] = {}
    for member in members.order_by("position"):
        by_group.setdefault(member.group_id, []).append(member.combination)
    declared = [c for g in group_ids for c in by_group.get(g, [])]
    declared += [
        link.combination
        for link in LadderCombination.objects.filter(ladder=ladder)
        .select_related("combination")
        .order_by("position")
    ]
    return declared
