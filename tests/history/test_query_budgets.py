"""History, compare and the chart cost a fixed number of queries whatever the number of
climbers (and rungs, and records).

History (API, at most 5): the token, the ladder filtered by who may read it, whether its latest
  dispatch ended with its record not written yet, the count, the page of records (without their
  slots or snapshots).
One record, as JSON or CSV (at most 3): the token, the ladder, the record.
Compare of two records (at most 4): the token, the ladder, record a, record b.
Compare with the running dispatch (at most 18): the token, the ladder, record a, the dispatch,
  then the ladder's board as its progress reads it (the look at what changed, the ladder, its
  rungs and case versions, the dispatch, its evidence (climbers, model entries (+ gg
  configurations when a climber is one), slot runs, cell jobs in flight, the dispatch's jobs in
  flight, exhausted failures (+ their latest launches when any)), the reviews), the runs'
  metrics, the names of who pressed Run and Stop. A board its viewers already computed costs
  the look alone.
The board's standing, the chart (at most 19): session, user, the ladder, the dispatch, the
  activity, then the current side as above.
The history page (at most 7): session, user, the ladder, the unwritten-record check (as above),
  the count, the page, the last records.
The compare page (at most 24): session, user, the ladder, the unwritten-record check, the last
  two records' ids, whether a dispatch runs, the records to choose from, record a, then the
  current side as above.
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


def ok(response):
    assert response.status_code == 200, response.content
    return response


def reads(api, client, ladder) -> dict[str, int]:
    """The queries of each read of the ladder."""
    base = f"/api/ladders/{ladder.pk}"
    [newest, older, *_] = api.get(f"{base}/history").json()["results"]
    a, b = older["id"], newest["id"]
    page = f"/ladders/{ladder.pk}"
    urls = {
        "history": lambda: api.get(f"{base}/history"),
        "record": lambda: api.get(f"{base}/history/{b}"),
        "record csv": lambda: api.get(f"{base}/history/{b}?format=csv"),
        "compare": lambda: api.get(f"{base}/compare?a={a}&b={b}"),
        "compare current": lambda: api.get(f"{base}/compare?a={b}&b=current"),
        "chart": lambda: client.get(f"{page}/standing"),
        "history page": lambda: client.get(f"{page}/history/"),
        "compare page": lambda: client.get(f"{page}/compare/"),
    }
    return {name: counted(lambda read=read: ok(read())) for name, read in urls.items()}


@pytest.fixture
def measured(owner, owner_api, driver, run_tasks):
    """Queries of each read, for a small and a large ladder."""
    return {
        n_climbers: reads(
            owner_api, Browser(owner), build(owner, driver, run_tasks, n_climbers, n_rungs)
        )
        for n_climbers, n_rungs in SIZES
    }


#: The look at what changed since a board was computed: one query on PostgreSQL, four on
#: SQLite (the counter, the pruning horizon, a climber not pinned yet and the changes).
LOOK = 1 if connection.vendor == "postgresql" else 4

BUDGETS = {
    "history": 5,
    "record": 3,
    "record csv": 3,
    "compare": 4,
    "compare current": 17 + LOOK,
    "chart": 18 + LOOK,
    "history page": 8,  # with the signed-in user's role, which the navigation reads
    "compare page": 24 + LOOK,  # with the role, as the history page
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
