"""Bulk data for the benchmarks."""

import datetime as dt
import random

from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from ladders import services
from ladders.bodies import ladder_body, rung_body
from ladders.models import Dispatch, DispatchClimber
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.models import Case, CaseVersion, Combination, ModelEntry, Role, Run

CHECKLIST = [{"id": f"i{i}", "text": f"item {i}", "critical": i < 2} for i in range(5)]
RATINGS = ["flawless", "great", "passable", "scuffed", "broken"]


def user(username: str, role: str):
    found, _ = get_user_model().objects.get_or_create(username=username)
    found.account.role = role
    found.account.save()
    return found


def ladder_with_runs(*, climbers: int, rungs: int, runs_per_cell: int, unrelated: int, tag: str):
    """A ladder of ``climbers`` × ``rungs`` whose every slot is decided by existing runs, plus
    ``unrelated`` runs of other cells. Returns (ladder, dispatch)."""
    owner = user(f"bench-owner-{tag}", Role.OWNER)
    now = timezone.now()
    versions = []
    for i in range(rungs):
        case, _ = Case.objects.get_or_create(
            slug=f"b{tag}-case-{i}", defaults={"title": f"case {i}", "kind": "functional"}
        )
        versions.append(
            CaseVersion.objects.get_or_create(
                case=case,
                version="1",
                defaults={"ingested_at": now, "variants": ["default"], "checklist": CHECKLIST},
            )[0]
        )
    ModelEntry.objects.bulk_create(
        [ModelEntry(name=f"b{tag}-m{i}", provider="bench") for i in range(climbers)],
        ignore_conflicts=True,
    )
    combos = []
    for i in range(climbers):
        combination = Combination(
            kind="harness", harness="h", model=f"b{tag}-m{i}", provider="bench"
        )
        combination.key = combination.compute_key()
        combos.append(combination)
    Combination.objects.bulk_create(combos, ignore_conflicts=True)
    combos = list(Combination.objects.filter(model__startswith=f"b{tag}-m").order_by("id"))
    ladder = services.save_ladder(
        owner=owner,
        data=ladder_body(
            name=f"bench {tag}",
            rungs=[rung_body(v.case.slug, "1") for v in versions],
            combinations=[c.pk for c in combos],
            runsPerCell=runs_per_cell,
            runsInFlightLimit=10_000,
        ),
    )
    rng = random.Random(1)  # noqa: S311
    rows = []
    start = now - dt.timedelta(days=1)
    for c in combos:
        cell = CombinationCell("h", c.model, "bench")
        for v in versions:
            key = cell_key(CasePin(v.case.slug, "1", "default"), cell)
            for k in range(runs_per_cell):
                rows.append(
                    _run(
                        key,
                        v.case.slug,
                        c,
                        cell,
                        rng.choice(RATINGS),
                        start + dt.timedelta(seconds=len(rows) + k),
                    )
                )
    for i in range(unrelated):
        cell = CombinationCell("other", f"x{i % 500}", "bench")
        key = cell_key(CasePin(f"unrelated-{i % 200}", "1", "default"), cell)
        rows.append(
            _run(
                key,
                f"unrelated-{i % 200}",
                None,
                cell,
                rng.choice(RATINGS),
                start + dt.timedelta(seconds=i),
            )
        )
    Run.objects.bulk_create(rows, batch_size=5000)
    services.start_dispatch(ladder=ladder, run_pass=False)
    undecided = DispatchClimber.objects.filter(dispatch__ladder=ladder, verdicts={})
    assert undecided.count() == climbers, "a timed pass decides every slot afresh"
    settle_statistics()
    return ladder, Dispatch.objects.get(ladder=ladder)


def settle_statistics() -> None:
    """Vacuum and analyse the tables the set-up filled, as autovacuum would have by the time
    anybody reads them (a dispatch's 10,000 cells, unanalysed, are planned as a handful; the
    change log, tens of thousands of marks after the claims rows and never analysed, made every
    look of the load rows three to four times slower)."""
    tables = (
        "runs_run",
        "runs_job",
        "runs_change",
        "ladders_dispatchcell",
        "ladders_dispatchclimber",
    )
    with connection.cursor() as cursor:
        for table in tables:
            cursor.execute(f"VACUUM ANALYZE {table}")


def _run(key, case, combination, cell, rating, finished):
    return Run(
        case=case,
        version="1",
        variant="default",
        engine=None,
        combination=combination,
        combination_cell=cell.as_json(),
        cell_key=key,
        outcome="completed",
        record={},
        build_loaded=True,
        validator_rating=rating,
        counted=True,
        # Steady state: the runs were read, and so published, by an earlier dispatch.
        published=True,
        finished_at=finished,
    )
