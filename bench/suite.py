from bench import history, load, push_floor, runner
from bench.production import ProductionServer

FULL = {"climbers": 200, "rungs": 50, "runs": 3, "unrelated": 100_000, "repeat": 7}
SMOKE = {"climbers": 4, "rungs": 3, "runs": 2, "unrelated": 50, "repeat": 2}
#: The history's reads: records of a ladder of this size.
HISTORY = {
    "full": {"climbers": 200, "rungs": 50, "records": 50, "repeat": 5},
    "smoke": {"climbers": 3, "rungs": 3, "records": 3, "repeat": 2},
}
#: Unrelated runs in the table for the table-size rows (made in SQL).
LARGE = {"full": 10_000_000, "smoke": 2_000}


def history_rows(*, smoke: bool = False) -> list:
    return history.history_reads(**HISTORY["smoke" if smoke else "full"])


def claim_rows(*, smoke: bool = False) -> list:
    """The claims through the production server, with provider budgets and without, on a
    combination of their own (no board is built)."""
    from loopweb.runs.models import Combination, ModelEntry

    ModelEntry.objects.get_or_create(name="bench-claims", defaults={"provider": "bench"})
    Combination.objects.get_or_create(
        key="claims|bench-claims|bench",
        defaults={"kind": "harness", "harness": "claims", "model": "bench-claims",
                  "provider": "bench"},
    )  # fmt: skip
    claims = {"claimers": 4 if smoke else 32, "jobs": 21 if smoke else 3000}
    production = ProductionServer(web=2, threads=2 if smoke else 8)
    try:
        return [
            runner.claim_over_http(production, **claims),
            runner.claim_with_budgets_over_http(production, **claims),
        ]
    finally:
        production.close()


def run_all(*, smoke: bool = False, only: str | None = None) -> list:
    """Every row; ``only`` names a part (``production``: the rows through gunicorn; ``load``:
    progress under load and after one push), measured after the main board is built."""
    size = SMOKE if smoke else FULL
    ladder, rows = runner.launch_pass_and_progress(**size)
    pollers = {
        "pollers": 4 if smoke else 20,
        "seconds": 1 if smoke else 20,
        "interval": 0.2 if smoke else 2.0,  # the board's own polling interval
    }
    pushes = {"drivers": 4 if smoke else 16, "per_driver": 3 if smoke else 40}
    claims = {"claimers": 4 if smoke else 32, "jobs": 21 if smoke else 3000}

    if only is None:
        # The old path: the threaded development server in this process.
        server = runner.Server()
        try:
            rows.append(runner.progress_pollers(server, ladder, **pollers))
            rows.append(runner.push_throughput(server, **pushes))
        finally:
            server.close()
        rows.append(runner.claim_throughput(**claims))

    # The production server: gunicorn as make serve runs it, with pooled connections.
    if only in (None, "production"):
        production = ProductionServer(web=2, threads=2 if smoke else 8)  # make serve: 2 × 8
        try:
            rows.append(runner.progress_pollers(production, ladder, **pollers))
            one_insert = runner.push_throughput(production, **pushes, tag="push-prod")
            # One INSERT is not a push's job: kept for reference, with no target.
            one_insert.target, one_insert.met = "none: a floor of one INSERT", None
            rows.append(one_insert)
            rows += push_floor.push_against_its_contract(production, **pushes)
            rows.append(runner.claim_over_http(production, **claims))
            rows.append(runner.claim_with_budgets_over_http(production, **claims))
        finally:
            production.close()
        if only:
            return rows

    rows += load.progress_under_load(
        climbers=size["climbers"],
        rungs=size["rungs"],
        drivers=2 if smoke else 16,
        pollers=2 if smoke else 20,
        seconds=2 if smoke else 30,
        quiet=1 if smoke else 8,
        interval=0.2 if smoke else 2.0,  # the board's own polling interval
        ingest=2,  # make serve INGEST_CONCURRENCY=2
    )
    rows += load.one_push_then_read(ladder, repeat=2 if smoke else 5)
    if only:
        return rows
    sizes = (2, 4) if smoke else (10, 200, 1000)
    rows += runner.pass_growth(
        sizes, rungs=3 if smoke else 50, runs=size["runs"], repeat=2 if smoke else 3
    )
    rows += history_rows(smoke=smoke)
    rows += runner.table_size(
        ladder,
        data=f"{size['climbers']}×{size['rungs']}×{size['runs']}",
        small_unrelated=size["unrelated"],
        large_unrelated=LARGE["smoke" if smoke else "full"],
        repeat=size["repeat"],
    )
    return rows
