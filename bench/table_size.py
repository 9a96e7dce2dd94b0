"""The launch pass and the progress read as the runs table grows: the same ladder measured with
its 100,000 unrelated runs and with 10,000,000, taken in turn round after round.

The large table is made in SQL (``INSERT … SELECT generate_series``, never row by row in Python)
as a copy of ``runs_run`` plus the generated runs, with the same indexes, vacuumed and analysed.
The two tables then trade names between measurements (``ALTER TABLE … RENAME``, in one
transaction), so every round reads the small table and the large one under the same load on the
machine. The runs of unrelated cells are spread over 20,000 cases and 997 models.
"""

from __future__ import annotations

import time

from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from ladders import selectors

TABLE = "runs_run"
PARKED = "runs_run_parked"

GENERATE = f"""
INSERT INTO {PARKED} (
    id, "case", version, variant, engine, combination_cell, cell_key, outcome, record,
    build_loaded, validator_rating, counted, published, finished_at, "commit", merge_artifact,
    acceptance_rule, created_at, updated_at, combination_id, job_id, owner_id, pushed_by_id
)
SELECT top.m + g,
       'unrelated-' || (g %% 20000),
       '1', 'default', NULL,
       jsonb_build_object('harness', 'other', 'model', 'x' || (g %% 997), 'provider', 'bench',
                          'configuration', NULL, 'boundModels', '[]'::jsonb),
       'unrelated-' || (g %% 20000) || '@1/default/-::other|x' || (g %% 997) || '|bench',
       'completed', '{{}}'::jsonb, true,
       (ARRAY['flawless', 'great', 'passable', 'scuffed', 'broken'])[1 + g %% 5],
       true, true,
       now() - interval '30 days' + g * interval '200 milliseconds',
       '', '', NULL, now(), now(), NULL, NULL, NULL, NULL
FROM generate_series(1, %s) AS g, (SELECT coalesce(max(id), 0) AS m FROM {TABLE}) AS top
"""


def build_large_table(extra_runs: int) -> float:
    """``runs_run_parked``: every row of ``runs_run`` plus ``extra_runs`` generated unrelated runs,
    with ``runs_run``'s indexes. Returns the seconds it took."""
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '512MB'")
        cursor.execute(f"DROP TABLE IF EXISTS {PARKED}")
        cursor.execute(f"CREATE TABLE {PARKED} (LIKE {TABLE} INCLUDING DEFAULTS)")
        cursor.execute(f"INSERT INTO {PARKED} SELECT * FROM {TABLE}")  # noqa: S608
        cursor.execute(GENERATE, [extra_runs])
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s", [TABLE])
        for name, definition in cursor.fetchall():
            cursor.execute(
                definition.replace(f"INDEX {name} ON", f"INDEX {name}_parked ON", 1).replace(
                    f" public.{TABLE} ", f" public.{PARKED} ", 1
                )
            )
        cursor.execute(f"VACUUM ANALYZE {PARKED}")
        cursor.execute("RESET maintenance_work_mem")
    return time.perf_counter() - started


def swap() -> None:
    """The parked table and the live one trade names."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"ALTER TABLE {TABLE} RENAME TO runs_run_swapping")
        cursor.execute(f"ALTER TABLE {PARKED} RENAME TO {TABLE}")
        cursor.execute(f"ALTER TABLE runs_run_swapping RENAME TO {PARKED}")


def count_runs() -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {TABLE}")  # noqa: S608
        return cursor.fetchone()[0]


def measure(ladder, one_pass, *, repeat: int) -> dict[str, dict[str, list[float] | int]]:
    """Pass and progress on the small table and the large one, in turn, ``repeat`` rounds after
    a warm-up of each. The small table is live before and after."""
    samples = {
        size: {"pass": [], "progress": [], "pass_queries": 0, "progress_queries": 0}
        for size in ("small", "large")
    }
    for round_ in range(repeat + 1):
        for size in ("small", "large"):
            if size == "large":
                swap()
            try:
                for name, fn in (
                    ("pass", lambda: one_pass(ladder)),
                    ("progress", lambda: selectors.ladder_progress(ladder)),
                ):
                    with CaptureQueriesContext(connection) as ctx:
                        started = time.perf_counter()
                        fn()
                        elapsed = time.perf_counter() - started
                    if round_:  # the first round warms both tables up
                        samples[size][name].append(elapsed)
                        samples[size][f"{name}_queries"] = len(ctx.captured_queries)
            finally:
                if size == "large":
                    swap()
    return samples


def count_seconds() -> dict[str, float]:
    """How long ``SELECT count(*)`` over the runs takes on each table (what a paginated list of
    every run costs its ``count``), warm."""
    found = {}
    for size in ("small", "large"):
        if size == "large":
            swap()
        try:
            count_runs()
            started = time.perf_counter()
            count_runs()
            found[size] = time.perf_counter() - started
        finally:
            if size == "large":
                swap()
    return found


def drop_large_table() -> None:
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE IF EXISTS {PARKED}")
