"""Journaling a dispatch: its standing as one run of an evalset, for the verify gate."""

from typing import TYPE_CHECKING

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from ladders import evidence, progress
from ladders.models import (
    Dispatch,
    DispatchStatus,
    Ladder,
)
from ladders.progress import standing_of
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Run

if TYPE_CHECKING:
    from evalsets.models import EvalsetRun

METRIC_FIELDS = ("usd_micros", "input_tokens", "output_tokens")


def journal_dispatch(
    *, ladder: Ladder, evalset_hash: str, journaled_by: User | None = None
) -> "EvalsetRun":
    """Journal the latest dispatch's standing as one run of an evalset: rung slots passed and
    failed, the runs its slots read, and their cost when the runs report it."""
    from evalsets.models import Evalset
    from evalsets.services import journal_run

    evalset = Evalset.objects.filter(hash=evalset_hash).first()
    if evalset is None:
        raise ValidationError({"evalset": [f"No evalset has the hash {evalset_hash!r}."]})
    with transaction.atomic():
        dispatch = Dispatch.objects.select_for_update().filter(ladder=ladder).first()
        if dispatch is None:
            raise Conflict("This ladder has not been run; there is nothing to journal.")
        final = progress.final_of(dispatch)
        if final is not None:
            counts = final.slot_counts
            run_ids = {r for c in final.climbers for ids in c["runs"] for r in ids}
        else:
            [loaded] = evidence.load([dispatch])
            standing = standing_of(loaded, running=dispatch.status == DispatchStatus.RUNNING)
            counts = standing.slot_counts()
            run_ids = {r for c in standing.climbers for s in c.slots for r in s.run_ids}
        summary = {
            "passed": counts["passed"],
            "failed": counts["failed"],
            "total": counts["passed"] + counts["failed"],
            "runs": len(run_ids),
        }
        decided = summary["total"]
        if decided:
            summary["error_rate"] = counts["failed"] / decided
        totals: dict[str, float] = dict.fromkeys(METRIC_FIELDS, 0)
        reported = set()
        for record in Run.objects.filter(pk__in=run_ids).values_list("record", flat=True):
            metrics = (record or {}).get("metrics") or {}
            for name in METRIC_FIELDS:
                value = metrics.get(name)
                if isinstance(value, int | float) and not isinstance(value, bool):
                    totals[name] += value
                    reported.add(name)
        summary.update({name: totals[name] for name in reported})
        return journal_run(evalset=evalset, summary=summary, journaled_by=journaled_by)
