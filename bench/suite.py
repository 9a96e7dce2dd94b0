from bench import load, runner

FULL = {"climbers": 200, "rungs": 50, "runs": 3, "unrelated": 100_000, "repeat": 7}
SMOKE = {"climbers": 4, "rungs": 3, "runs": 2, "unrelated": 50, "repeat": 2}


def run_all(*, smoke: bool = False) -> list:
    size = SMOKE if smoke else FULL
    ladder, rows = runner.launch_pass_and_progress(**size)
    server = runner.Server()
    try:
        rows.append(
            runner.progress_pollers(
                server,
                ladder,
                pollers=4 if smoke else 20,
                seconds=1 if smoke else 20,
                interval=0.2 if smoke else 2.0,  # the board's own polling interval
            )
        )
        rows.append(
            runner.push_throughput(
                server, drivers=4 if smoke else 16, per_driver=3 if smoke else 40
            )
        )
    finally:
        server.close()
    rows.append(runner.claim_throughput(claimers=4 if smoke else 32, jobs=21 if smoke else 3000))
    rows += load.progress_under_load(
        climbers=size["climbers"],
        rungs=size["rungs"],
        drivers=2 if smoke else 16,
        pollers=2 if smoke else 20,
        seconds=2 if smoke else 30,
        quiet=1 if smoke else 8,
        interval=0.2 if smoke else 2.0,  # the board's own polling interval
    )
    rows += load.one_push_then_read(ladder, repeat=2 if smoke else 5)
    sizes = (2, 4) if smoke else (10, 200, 1000)
    rows += runner.pass_growth(
        sizes, rungs=3 if smoke else 50, runs=size["runs"], repeat=2 if smoke else 3
    )
    return rows
