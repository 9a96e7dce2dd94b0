"""The board's refresh endpoint costs the same number of queries for a small and a large ladder.

Refresh (at most 19; 17 in these tests):
  1-2    session, user (the signed-in request)
  3      the ladder, filtered by who may read it
  4-5    its rungs, and the case versions that flag stale ones
  6      the dispatch
  7-12   evidence: climbers with combinations, model entries (+ gg configurations when a
         climber is one), slot runs (one window query), cell jobs in flight, the dispatch's
         own jobs in flight, exhausted failures (+ their slots' latest launches when any)
  13-15  the queue: the ladder's reviewers, their reviews, the completed slot runs
  16     jobs under way (what Stop and cancel running would cancel)
  17     case titles for the column headers
"""

import pytest
from django.urls import reverse

from ladders import services
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work

BOARD_BUDGET = 19


@pytest.mark.parametrize(("n_climbers", "n_rungs"), [(2, 2), (40, 15)])
def test_the_board_refresh_runs_a_bounded_number_of_queries(
    owner, owner_client, driver, run_tasks, django_assert_max_num_queries, n_climbers, n_rungs
):
    ladder = make_ladder(
        owner,
        versions(n_rungs, prefix=f"qb{n_rungs}"),
        climbers(n_climbers, prefix=f"qb{n_climbers}x"),
        runsInFlightLimit=10_000,
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=2)
    url = reverse("console:board-refresh", args=[ladder.pk])
    with django_assert_max_num_queries(BOARD_BUDGET):
        response = owner_client.get(url)
    assert response.status_code == 200
    assert response.content.decode().count('class="slot ') == n_climbers * n_rungs
    assert f"{n_climbers * 2} of {n_climbers * n_rungs} runs done" in response.content.decode()
