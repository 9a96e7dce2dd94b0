"""History, compare and the chart cost a fixed number of queries whatever the number of
climbers (and rungs, and records).

History (API, at most 4): the token, the ladder filtered by who may read it, the count, the
  page of records (without their slots or snapshots).
One record, as JSON or CSV (at most 3): the token, the ladder, the record.
Compare of two records (at most 4): the token, the ladder, record a, record b.
Compare with the running dispatch (at most 13): the token, the ladder, record a, the dispatch,
  its evidence (climbers, model entries (+ gg configurations when a climber is one), slot runs,
  cell jobs in flight, the dispatch's jobs in flight, exhausted failures (+ their latest
  launches when any)), the runs' metrics, the names of who pressed Run and Stop.
The board's standing, the chart (at most 14): session, user, the ladder, the dispatch, the
  activity, then the current side as above.
The history page (at most 6): session, user, the ladder, the count, the page, the last records.
The compare page (at most 17): session, user, the ladder, the last two records' ids, whether a
  dispatch runs, the records to choose from, record a, then the current side as above.
"""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ladders import services
from tests.console.helpers import Browser
from tests.history.helpers import PAID
from tests.ladders.builders import climbers, make_ladder, versions, work

SIZES = [(2, 3), (40, 12)]


def build(owner, driver, run_tasks, n_climbers, n_rungs, records=3):
    ladder = make_ladder(
        owner,
        versions(n_rungs, prefix=f"h{n_rungs}"),
        climbers(n_climbers, prefix=f"h{n_climbers}x"),
        runsInFlightLimit=10_000,
    )
    for _ in range(records - 1):
        services.start_dispatch(ladder=ladder, by=owner)
        services.stop_dispatch(ladder=ladder, by=owner)
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID, rounds=2)  # two rungs passed, the third launched
    services.stop_dispatch(ladder=ladder, by=owner)
    services.start_dispatch(ladder=ladder, by=owner)  # running, decided up to rung two
    return ladder


def counted(fn) -> int:
    with CaptureQueriesContext(connection) as ctx:
        fn()
    return len(ctx.captured_queries)


@pytest.fixture
def measured(owner, owner_api, driver, run_tasks):
    """Queries of each read, for a small and a large ladder."""
    found = {}
    for n_climbers, n_rungs in SIZES:
        ladder = build(owner, driver, run_tasks, n_climbers, n_rungs)
        base = f"/api/ladders/{ladder.pk}"
        [newest, older, *_] = owner_api.get(f"{base}/history").json()["results"]
        client = Browser(owner)

        def ok(response):
            assert response.status_code == 200, response.content
            return response

        found[n_climbers] = {
            "history": counted(lambda: ok(owner_api.get(f"{base}/history"))),
            "record": counted(lambda: ok(owner_api.get(f"{base}/history/{newest['id']}"))),
            "record csv": counted(
                lambda: ok(owner_api.get(f"{base}/history/{newest['id']}?format=csv"))
            ),
            "compare": counted(
                lambda: ok(owner_api.get(f"{base}/compare?a={older['id']}&b={newest['id']}"))
            ),
            "compare current": counted(
                lambda: ok(owner_api.get(f"{base}/compare?a={newest['id']}&b=current"))
            ),
            "chart": counted(lambda: ok(client.get(f"/ladders/{ladder.pk}/standing"))),
            "history page": counted(lambda: ok(client.get(f"/ladders/{ladder.pk}/history/"))),
            "compare page": counted(lambda: ok(client.get(f"/ladders/{ladder.pk}/compare/"))),
        }
    return found


BUDGETS = {
    "history": 4,
    "record": 3,
    "record csv": 3,
    "compare": 4,
    "compare current": 13,
    "chart": 14,
    "history page": 6,
    "compare page": 17,
}


def test_history_compare_and_the_chart_cost_the_same_for_2_and_40_climbers(measured):
    small, large = (measured[n] for n, _ in SIZES)
    assert small == large
    for read, n in large.items():
        assert n <= BUDGETS[read], (read, n)


def test_the_budgets_hold_with_a_query_counter(
    owner, owner_api, driver, run_tasks, django_assert_max_num_queries
):
    ladder = build(owner, driver, run_tasks, 40, 12)
    base = f"/api/ladders/{ladder.pk}"
    with django_assert_max_num_queries(BUDGETS["history"]):
        [newest, older, *_] = owner_api.get(f"{base}/history").json()["results"]
    with django_assert_max_num_queries(BUDGETS["compare current"]):
        assert owner_api.get(f"{base}/compare?a={newest['id']}&b=current").status_code == 200
    client = Browser(owner)
    with django_assert_max_num_queries(BUDGETS["chart"]):
        assert client.get(f"/ladders/{ladder.pk}/standing").status_code == 200
