"""The history's reads at size: the list of records, one record, a compare of two records and
of the running dispatch with the last record, the board's height chart and the history page.

A ladder of ``climbers`` × ``rungs`` decided by existing runs (each reporting its cost) is run
``records`` times; every dispatch ends by itself and leaves a real record. Then a last Run is
left running for the reads of the current dispatch."""

import json

from django.db import connection
from django.test import Client

from bench.data import ladder_with_runs
from bench.measure import interleaved
from bench.runner import Row
from ladders import selectors, services
from ladders.models import Dispatch, DispatchCell, FinalStanding, Ladder
from loopweb.history.models import DispatchRecord
from loopweb.runs.models import ApiToken, Run


def _with_cost(ladder: Ladder) -> None:
    """Give every run of the ladder's cells a cost, as drivers report it (in one UPDATE)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Run._meta.db_table} SET record = jsonb_build_object("  # noqa: S608
            " 'metrics', jsonb_build_object('usd_micros', 1000 + id %% 977,"
            " 'input_tokens', 20000 + id %% 1009, 'output_tokens', 3000 + id %% 101,"
            " 'wall_ms', 60000 + id %% 997))"
            f" WHERE cell_key IN (SELECT cell_key FROM {DispatchCell._meta.db_table} AS c"
            f" JOIN {Dispatch._meta.db_table} AS d ON d.id = c.dispatch_id WHERE d.ladder_id = %s)",
            [ladder.pk],
        )


def _floor_list(ladder: Ladder) -> None:
    """Reading a page of records' climbers as plain JSON: what the list cannot do without."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.head, s.bodies, r.climber_totals::text"  # noqa: S608
            f" FROM {DispatchRecord._meta.db_table} AS r"
            f" JOIN {FinalStanding._meta.db_table} AS s ON s.id = r.standing_id"
            " WHERE r.ladder_id = %s ORDER BY r.id DESC LIMIT 50",
            [ladder.pk],
        )
        for row in cursor.fetchall():
            for text in row:
                json.loads(text)


def _floor_record(record_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.head, s.bodies, s.slots, r.climber_totals::text, r.slot_totals::text"  # noqa: S608
            f" FROM {DispatchRecord._meta.db_table} AS r"
            f" JOIN {FinalStanding._meta.db_table} AS s ON s.id = r.standing_id WHERE r.id = %s",
            [record_id],
        )
        for text in cursor.fetchone():
            json.loads(text)


def _get(client: Client, url: str, **headers) -> None:
    response = client.get(url, SERVER_NAME="127.0.0.1", **headers)
    assert response.status_code == 200, (url, response.status_code)
    b"".join(response) if response.streaming else response.content  # noqa: B018 - read it all


def history_reads(*, climbers: int, rungs: int, records: int, repeat: int) -> list[Row]:
    ladder, _ = ladder_with_runs(
        climbers=climbers, rungs=rungs, runs_per_cell=1, unrelated=0, tag="history"
    )
    _with_cost(ladder)
    services.run_launch_pass(ladder_id=ladder.pk)  # finishes: every slot is decided already
    for _ in range(records - 1):
        services.start_dispatch(ladder=ladder)
    services.start_dispatch(ladder=ladder, run_pass=False)  # running: read live
    ladder = Ladder.objects.get(pk=ladder.pk)
    newest, older = DispatchRecord.objects.filter(ladder=ladder).values_list("pk", flat=True)[:2]
    _, token = ApiToken.objects.issue(ladder.owner)
    api = Client(HTTP_AUTHORIZATION=f"Token {token}")
    console = Client()
    console.force_login(ladder.owner)
    base, page = f"/api/ladders/{ladder.pk}", f"/ladders/{ladder.pk}"
    t = interleaved(
        {
            "floor list": lambda: _floor_list(ladder),
            "history": lambda: _get(api, f"{base}/history"),
            "floor record": lambda: _floor_record(newest),
            "record": lambda: _get(api, f"{base}/history/{newest}"),
            "record csv": lambda: _get(api, f"{base}/history/{newest}?format=csv"),
            "compare": lambda: _get(api, f"{base}/compare?a={older}&b={newest}"),
            "progress": lambda: selectors.ladder_progress(ladder),
            "compare current": lambda: _get(api, f"{base}/compare?a={newest}&b=current"),
            "chart": lambda: _get(console, f"{page}/standing"),
            "history page": lambda: _get(console, f"{page}/history/"),
        },
        repeat=repeat,
    )
    data = f"{climbers}×{rungs}, {records} records"
    rows = []
    for name, floor, label, factor, queries in (
        # Budgets as tests/history/test_query_budgets.py counts them on PostgreSQL.
        ("history", "floor list", "a page of records' climbers read as JSON", 3, 5),
        ("record", "floor record", "the record's row read as JSON", 3, 3),
        ("record csv", "floor record", "the record's row read as JSON", 4, 3),
        ("compare", "floor record", "one record's row read as JSON", 4, 4),
        ("compare current", "progress", "a progress read", 2, 18),
        ("chart", "progress", "a progress read", 2, 19),
        # The page reads the signed-in reader's role for the navigation: one query more.
        ("history page", "floor list", "a page of records' climbers read as JSON", 4, 8),
    ):
        measured, base_time = t[name], t[floor]
        rows.append(
            Row(
                f"history: {name}",
                data,
                f"{measured.median_ms:.0f} ms, {measured.queries} queries",
                f"{base_time.median_ms:.0f} ms ({label})",
                measured.median_ms / base_time.median_ms,
                f"≤ {factor}× floor, ≤ {queries} queries",
                measured.median_ms <= factor * base_time.median_ms and measured.queries <= queries,
            )
        )
    return rows
