"""Reviewers' checklist overrides and the run's stored rating (seed 004: "The run's stored
rating folds in every reviewer's checklist overrides, so the gate never reads it").

Anyone who may review a run (SPEC §1) overrides any item of its case version's checklist. The
override that stands for an item is the latest, whoever made it
(docs/decisions/checklist-overrides-latest-stands.md); the stored rating is the validators'
rule over the run record with the standing overrides folded in. The gate reads the validator
rating alone, so nothing here touches a slot.
"""

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from loopweb.runs.cells import CasePin
from loopweb.runs.errors import listed
from loopweb.runs.models import ChecklistOverride, Run
from loopweb.runs.services import _may_review, ratings, standing_overrides, version_checklist


def standing(overrides: Iterable[ChecklistOverride]) -> list[ChecklistOverride]:
    """Of a run's overrides, the one that stands for each item (the latest), in the order they
    were made."""
    latest: dict[str, ChecklistOverride] = {}
    for override in sorted(overrides, key=lambda o: o.pk):
        latest.pop(override.item, None)
        latest[override.item] = override
    return list(latest.values())


def _item_problem(run: Run, item: str, checklist: list | None) -> ValidationError | None:
    pinned = f"{run.case}@{run.version}"
    if checklist is None:
        return ValidationError(
            f"{pinned} is not ingested: it has no checklist item to override.", "does_not_exist"
        )
    ids = [entry.get("id") for entry in checklist if isinstance(entry, dict)]
    if item in ids:
        return None
    if not ids:
        return ValidationError(f"{pinned} has no checklist items.", "does_not_exist")
    return ValidationError(
        f"{pinned} has no checklist item {item}; its items are {listed(ids)}.", "does_not_exist"
    )


def override_item(
    *, run: Run, reviewer: User, item: str, passed: bool, note: str = ""
) -> ChecklistOverride:
    """Record the reviewer's override of one checklist item of the run and store the run's new
    stored rating, in one transaction. Someone who may not review the run gets NotReviewable
    (a 404) and nothing is recorded; an item the run's case version does not list is a
    ValidationError on ``item``."""
    with transaction.atomic():
        _may_review(reviewer, run)
        # Locked: two overrides of one run (or an override and a re-push) each compute the
        # stored rating from the overrides they read; unserialized, the later commit could store
        # a rating that misses the other's override.
        run = Run.objects.select_for_update(no_key=True).get(pk=run.pk)
        version = version_checklist(CasePin(run.case, run.version, run.variant, run.engine))
        problem = _item_problem(run, item, version.checklist if version else None)
        if problem is not None:
            raise ValidationError({"item": [problem]})
        override = ChecklistOverride.objects.create(
            run=run, reviewer=reviewer, item=item, passed=passed, note=note
        )
        _, stored = ratings(version, run.outcome, run.record, standing_overrides(run.pk))
        if stored != run.stored_rating:
            run.stored_rating = stored
            run.save(update_fields=["stored_rating"])
    return override
