"""The reviewing reads issue a fixed number of queries, however many climbers, runs, reviewers
and judgements the ladder has."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from loopweb.reviewing.models import PairwiseJudgement
from loopweb.runs.models import Run
from tests.reviewing.world import climbed, entries, review, reviewer_named, rung_ids

pytestmark = pytest.mark.django_db

PATHS = ["agreement", "disagreements", "pairwise/results", "pairwise", "backlog"]


def populated(owner, driver, run_tasks, *, combos, runs, names, prefix):
    people = [owner, *(reviewer_named(n) for n in names)]
    ladder = climbed(
        owner, driver, run_tasks, combos=combos, runs=runs, reviewers=names, prefix=prefix
    )
    [rung] = rung_ids(ladder)
    rows = entries(ladder)
    for i, row in enumerate(rows):
        for j, person in enumerate(people):
            review(row["run"], person, 1 + (i + j) % 5, "accept" if (i + j) % 2 else "reject")
    for person in people:
        for a, b in zip(rows, rows[1:], strict=False):
            if a["climber"] != b["climber"]:
                PairwiseJudgement.objects.create(
                    ladder=ladder,
                    dispatch_id="d",
                    rung_id=rung,
                    left=Run(pk=a["run"]),
                    right=Run(pk=b["run"]),
                    left_climber=a["climber"],
                    right_climber=b["climber"],
                    choice="left",
                    reviewer=person,
                    pair=f"{a['run']}:{b['run']}",
                )
    return ladder, rung


def counts(api, ladder, rung) -> dict[str, int]:
    found = {}
    for path in [*PATHS, f"pairwise/next?rung={rung}"]:
        with CaptureQueriesContext(connection) as queries:
            response = api.get(f"/api/ladders/{ladder.pk}/{path}")
        assert response.status_code in (200, 204), (path, response.content)
        found[path.split("?")[0]] = len(queries)
    return found


def test_each_read_costs_the_same_for_a_small_ladder_and_a_larger_one(
    owner, owner_api, driver, run_tasks
):
    small = counts(
        owner_api, *populated(owner, driver, run_tasks, combos=3, runs=1, names=["a"], prefix="s")
    )
    large = counts(
        owner_api,
        *populated(owner, driver, run_tasks, combos=4, runs=3, names=["b", "c", "d"], prefix="l"),
    )
    assert small == large, (small, large)
    assert max(large.values()) <= 10, large
