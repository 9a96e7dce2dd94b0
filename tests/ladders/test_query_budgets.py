"""A launch pass and a progress read cost the same number of queries whatever the ladder's size.

Launch pass (at most 18):
  savepoint/lock: SELECT dispatch FOR UPDATE (with its ladder)
  evidence: climbers, gg configurations, model entries, slot runs (window), cell jobs in flight,
            dispatch jobs in flight, exhausted failures (+ latest launches when there are some)
  writes: climbers update, dispatch cells bulk insert, publish update,
  launching: advisory locks on the cells to launch into, their counted runs and jobs in flight
             re-read under the locks (one statement, so one snapshot), still-running check,
             jobs bulk insert, still-running check,
  and the dispatch update
Progress read (at most 14):
  rungs, case versions (stale flags), dispatch, the evidence queries above,
  jobs under way, the queue's reviewers and reviews and runs
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ladders import selectors, services
from ladders.models import Ladder
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work

PASS_BUDGET = 18
PROGRESS_BUDGET = 14


def build(owner, n_climbers, n_rungs, tag="", **overrides):
    return make_ladder(
        owner,
        versions(n_rungs, prefix=f"q{tag}{n_rungs}"),
        climbers(n_climbers, prefix=f"c{tag}{n_climbers}x"),
        **overrides,
    )


@pytest.mark.parametrize(("n_climbers", "n_rungs"), [(2, 2), (60, 20)])
def test_a_launch_pass_runs_a_bounded_number_of_queries(
    owner, driver, run_tasks, django_assert_max_num_queries, n_climbers, n_rungs
):
    ladder = build(owner, n_climbers, n_rungs, runsInFlightLimit=10_000)
    services.start_dispatch(ladder=ladder, run_pass=False)
    with django_assert_max_num_queries(PASS_BUDGET):
        report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.launched == n_climbers
    work(driver, run_tasks, PERFECT, rounds=1)
    # A pass that records verdicts, publishes runs and launches the next rung.
    with django_assert_max_num_queries(PASS_BUDGET):
        report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.launched == 0  # the passes run_tasks ran already launched rung two


@pytest.mark.parametrize(("n_climbers", "n_rungs"), [(2, 2), (60, 20)])
def test_a_progress_read_runs_a_bounded_number_of_queries(
    owner, driver, run_tasks, django_assert_max_num_queries, n_climbers, n_rungs
):
    ladder = build(owner, n_climbers, n_rungs, runsInFlightLimit=10_000)
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=2)
    ladder = Ladder.objects.get(pk=ladder.pk)
    with django_assert_max_num_queries(PROGRESS_BUDGET):
        body = selectors.ladder_progress(ladder)
    assert len(body["climbers"]) == n_climbers
    assert body["dispatch"]["slotCounts"]["passed"] == n_climbers * 2


def test_the_summary_costs_the_same_for_one_ladder_and_many(owner):
    counts = []
    for n in (1, 6):
        ladders = [build(owner, 2, 2, tag=f"{n}-{i}-", name=f"l{n}-{i}") for i in range(n)]
        for ladder in ladders:
            services.start_dispatch(ladder=ladder)
        with CaptureQueriesContext(connection) as ctx:
            rows = selectors.ladder_summaries(ladders)
        assert len(rows) == n
        counts.append(len(ctx.captured_queries))
    assert counts[0] == counts[1]
