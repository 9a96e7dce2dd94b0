"""The four benchmarks. Each returns rows for the report table."""

import json
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, connection, transaction

from bench import floors
from bench.data import CHECKLIST, ladder_with_runs, user
from bench.http import request
from bench.measure import Timing, interleaved, timed
from bench.threads import together
from ladders import selectors, services
from ladders.evidence import snapshot_rungs
from ladders.models import DispatchClimber, Ladder
from loopweb.runs import services as run_services
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.models import ApiToken, Case, CaseVersion, Combination, Job, Role

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Row:
    benchmark: str
    data: str
    value: str
    floor: str
    ratio: float
    target: str
    met: bool | None  # None: a row kept for reference, with no target


#: Figures worth printing under the table that are not compared with a floor.
NOTES: list[str] = []


class Rollback(Exception):
    pass


def slot_cells(dispatch) -> list[str]:
    rungs = snapshot_rungs(dispatch.snapshot)
    return [
        cell_key(r.pin, CombinationCell.from_json(c.combination_cell))
        for c in DispatchClimber.objects.filter(dispatch=dispatch)
        for r in rungs
    ]


def one_pass(ladder: Ladder) -> None:
    """A full deciding pass, rolled back so every repetition decides everything again: the
    ladder's climbers hold no verdict (``bench.data.ladder_with_runs`` starts its dispatch with
    no pass), and what the pass records goes with the rollback."""
    try:
        with transaction.atomic():
            services.run_launch_pass(ladder_id=ladder.pk)
            raise Rollback
    except Rollback:
        pass


def launch_pass_and_progress(*, climbers, rungs, runs, unrelated, repeat, tag="main"):
    ladder, dispatch = ladder_with_runs(
        climbers=climbers, rungs=rungs, runs_per_cell=runs, unrelated=unrelated, tag=tag
    )
    cells = slot_cells(dispatch)
    ladder = Ladder.objects.get(pk=ladder.pk)
    timings = interleaved(
        {
            "floor": lambda: floors.tally_floor(cells, runs),
            "pass": lambda: one_pass(ladder),
            "progress": lambda: selectors.ladder_progress(ladder),
        },
        repeat=repeat,
    )
    floor, pass_time, progress = timings["floor"], timings["pass"], timings["progress"]
    data = f"{climbers}×{rungs}×{runs} + {unrelated:,} unrelated"
    return ladder, [
        Row(
            "launch pass",
            data,
            f"{pass_time.median_ms:.0f} ms, {pass_time.queries} queries",
            f"{floor.median_ms:.0f} ms",
            pass_time.median_ms / floor.median_ms,
            "≤ 2.5× floor, ≤ 25 queries",
            pass_time.median_ms <= 2.5 * floor.median_ms and pass_time.queries <= 25,
        ),
        Row(
            "progress read",
            data,
            f"{progress.median_ms:.0f} ms, {progress.queries} queries",
            f"{floor.median_ms:.0f} ms",
            progress.median_ms / floor.median_ms,
            "≤ 1.5× floor",
            progress.median_ms <= 1.5 * floor.median_ms,
        ),
    ]


def pass_growth(sizes, *, rungs, runs, repeat) -> list[Row]:
    rows = []
    for climbers in sizes:
        ladder, _ = ladder_with_runs(
            climbers=climbers, rungs=rungs, runs_per_cell=runs, unrelated=0, tag=f"g{climbers}"
        )
        t = timed(lambda ladder=ladder: one_pass(ladder), repeat=repeat)
        rows.append(
            Row(
                "pass growth",
                f"{climbers}×{rungs}×{runs}",
                f"{t.median_ms:.0f} ms, {t.queries} queries",
                "-",
                t.median_ms / max(1, climbers * rungs),
                "flat queries, ~linear time",
                t.queries <= 25,
            )
        )
    return rows


class Server:
    """The product (plus the floor endpoint) on a threaded WSGI server in this process."""

    def __init__(self):
        from django.conf import settings

        self.previous_urlconf = settings.ROOT_URLCONF
        settings.ROOT_URLCONF = "bench.urls"
        if "testserver" not in settings.ALLOWED_HOSTS:
            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "127.0.0.1", "localhost"]

        class Quiet(WSGIRequestHandler):
            def log_message(self, *args):
                pass

        self.httpd = ThreadedWSGIServer(("127.0.0.1", 0), Quiet)
        self.httpd.set_app(get_wsgi_application())
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        from django.conf import settings
        from django.urls import clear_url_caches

        self.httpd.shutdown()
        self.httpd.server_close()
        settings.ROOT_URLCONF = self.previous_urlconf
        clear_url_caches()


def concurrently(n_threads: int, work) -> tuple[float, list]:
    results, errors = [[] for _ in range(n_threads)], []

    def body(i):
        try:
            work(i, results[i])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n_threads)]
    start = time.perf_counter()
    together(threads, errors)
    return time.perf_counter() - start, results


def progress_pollers(
    server, ladder: Ladder, *, pollers: int, seconds: float, interval: float, label: str = ""
) -> Row:
    """``pollers`` viewers of one board, each polling every ``interval`` seconds (0: back to
    back), from a process of their own, as from other machines."""
    _, token = ApiToken.objects.issue(ladder.owner)
    url = f"{server.url}/api/ladders/{ladder.pk}/progress"
    request(url, token)  # warm: the board has been viewed before
    command = [
        *(sys.executable, "-m", "bench.poll", url, token),
        *(str(pollers), str(seconds), str(interval)),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)  # noqa: S603
    latencies = json.loads(done.stdout)
    t = Timing.of(latencies)
    every = f"every {interval:g} s" if interval else "back to back"
    return Row(
        "progress read",
        f"{_via(server, label)}{pollers} concurrent pollers ({every}), {len(latencies)} reads",
        f"p95 {t.p95_ms:.0f} ms",
        "-",
        t.p95_ms / 250,
        "p95 < 250 ms",
        t.p95_ms < 250,
    )


def _claimed_jobs(n: int, driver, tag: str) -> list[Job]:
    owner = user(f"bench-launcher-{tag}", Role.OWNER)
    combination = Combination.objects.filter(model__startswith="b").first()
    case, _ = Case.objects.get_or_create(slug=f"push-{tag}", defaults={"title": "push"})
    CaseVersion.objects.get_or_create(
        case=case,
        version="1",
        defaults={"ingested_at": "2026-01-01T00:00:00Z", "checklist": CHECKLIST},
    )
    for _ in range(n):
        run_services.launch_by_hand(
            owner=owner, pin=CasePin(case.slug, "1", "default"), combination=combination
        )
    return run_services.claim_jobs(driver=driver, limit=n)


def _via(server, label: str) -> str:
    return f"{label or getattr(server, 'label', 'old path: threaded server, one process')}: "


#: What the push benchmarks' drivers report with a run: every checklist item met, the build loaded.
RECORD = {
    "checklist": {"i0": True, "i1": True, "i2": True},
    "toolchain": {"build": "ok", "loaded": True},
    "metrics": {"runtime_s": 12.5},
}


def push_throughput(
    server,
    *,
    drivers: int,
    per_driver: int,
    rounds: int = 4,
    tag="push",
    target: float = 0.5,
    label: str = "",
) -> Row:
    driver = user(f"bench-driver-{tag}", Role.DRIVER)
    _, token = ApiToken.objects.issue(driver)
    jobs = _claimed_jobs(drivers * per_driver, driver, tag)
    rounds = max(1, min(rounds, len(jobs)))
    jobs = jobs[: len(jobs) - len(jobs) % rounds]

    batch: list = []  # the jobs of the current round

    def push(i, out):
        for job in batch[i::drivers]:
            status, _ = request(
                f"{server.url}/api/runs/",
                token,
                "POST",
                {
                    "job": job.pk,
                    "outcome": "completed",
                    "record": RECORD,
                    "finishedAt": "2026-11-30T00:00:00Z",
                },
            )
            assert status == 201, status

    def floor(i, out):
        for _ in batch[i::drivers]:
            status, _ = request(f"{server.url}/bench/insert", token, "POST", {"record": RECORD})
            assert status == 201

    with connection.cursor() as cursor:
        cursor.execute("CREATE TABLE IF NOT EXISTS bench_floor (id serial PRIMARY KEY, body text)")
    # Round by round, the floor and the pushes in turn, so a change in load weighs on both alike.
    floor_time = push_time = 0.0
    for start in range(0, len(jobs), len(jobs) // rounds):
        batch[:] = jobs[start : start + len(jobs) // rounds]
        floor_time += concurrently(drivers, floor)[0]
        push_time += concurrently(drivers, push)[0]
    n = len(jobs)
    push_rate, floor_rate = n / push_time, n / floor_time
    return Row(
        "push",
        f"{_via(server, label)}{drivers} concurrent drivers, {n} runs over HTTP",
        f"{push_rate:.0f} runs/s",
        f"{floor_rate:.0f} inserts/s",
        push_rate / floor_rate,
        f"≥ {target:g}× floor",
        push_rate >= target * floor_rate,
    )


def _claim_combination() -> Combination:
    """The combination the claim benchmarks launch their jobs with."""
    return Combination.objects.filter(model__startswith="b").first()


def _claim_rounds(
    tag: str, claim, bare, *, claimers: int, per_round: int, rounds: int, prepare=None
):
    """Claims by ``claim`` against the floor ``bare``, ``claimers`` threads at a time: a warm-up
    round of each, then ``rounds`` rounds taking the floor and the product in turn, each on
    ``per_round`` freshly launched jobs, so a change in the machine's load weighs on both alike.
    ``prepare(product)``, if given, sets the database up for a round of the floor (False) or
    the product (True). Returns the claim rate, the floor's rate, the double claims and the ids
    claimed."""
    owner = user(f"bench-launcher-{tag}", Role.OWNER)
    combination = _claim_combination()

    def enqueue(n: int):
        Job.objects.filter(status__in=["queued", "pending"]).update(status="canceled")
        for _ in range(n):
            run_services.launch_by_hand(
                owner=owner, pin=CasePin("claim-case", "1", "default"), combination=combination
            )

    def timed_round(product: bool, n: int) -> tuple[float, list[int]]:
        if prepare is not None:
            prepare(product)
        enqueue(n)
        seconds, results = concurrently(claimers, claim if product else bare)
        return seconds, [x for r in results for x in r]

    timed_round(False, claimers)  # warm-up
    timed_round(True, claimers)
    floor_time = claim_time = 0.0
    floor_ids: list[int] = []
    ids: list[int] = []
    for _ in range(rounds):
        seconds, claimed = timed_round(False, per_round)
        floor_time += seconds
        floor_ids += claimed
        seconds, claimed = timed_round(True, per_round)
        claim_time += seconds
        ids += claimed
    doubles = sum(n - 1 for n in Counter(ids).values() if n > 1)
    rate, floor_rate = len(ids) / claim_time, len(floor_ids) / floor_time
    return rate, floor_rate, doubles, ids


def _claim_row(data: str, measured: tuple, total: int) -> Row:
    """The claim row of what ``_claim_rounds`` measured on ``total`` jobs: at least half the
    floor's rate, and no job claimed twice or left unclaimed."""
    rate, floor_rate, doubles, ids = measured
    return Row(
        "claim",
        data,
        f"{rate:.0f} claims/s, {doubles} double claims",
        f"{floor_rate:.0f} claims/s",
        rate / floor_rate,
        "≥ 0.5× floor, zero double claims",
        rate >= 0.5 * floor_rate and doubles == 0 and len(ids) == total,
    )


def _claims_over_http(server, token: str):
    """A claimer's work: claim one job at a time over HTTP (``POST /api/driver/claim``) until
    none is left, adding the ids claimed to ``out``."""

    def claim(i, out):
        while True:
            status, body = request(f"{server.url}/api/driver/claim", token, "POST", {"max": 1})
            assert status == 200, status
            claimed = json.loads(body)
            if not claimed:
                return
            out.extend(job["id"] for job in claimed)

    return claim


def claim_throughput(*, claimers: int, jobs: int, rounds: int = 3, tag="claim") -> Row:
    """``jobs`` claimed by ``claimers`` threads, in ``rounds`` rounds that take the floor and the
    product in turn (after a warm-up round of each), so a change in the machine's load weighs on
    both alike."""
    driver = user(f"bench-claimer-{tag}", Role.DRIVER)
    per_round = jobs // rounds

    def claim(i, out):
        while claimed := run_services.claim_jobs(driver=driver, limit=1):
            out.extend(j.pk for j in claimed)

    def bare(i, out):
        while (job_id := floors.claim_floor()) is not None:
            out.append(job_id)

    measured = _claim_rounds(
        tag, claim, bare, claimers=claimers, per_round=per_round, rounds=rounds
    )
    jobs = per_round * rounds
    return _claim_row(f"{claimers} concurrent claimers, {jobs} jobs", measured, jobs)


def claim_over_http(server, *, claimers: int, jobs: int, rounds: int = 3, tag="claim-http") -> Row:
    """``jobs`` claimed over HTTP (``POST /api/driver/claim {"max": 1}``) by ``claimers``
    threads, against a floor endpoint on the same server that claims with one bare UPDATE;
    rounds take the floor and the product in turn, after a warm-up of each."""
    driver = user(f"bench-claimer-{tag}", Role.DRIVER)
    _, token = ApiToken.objects.issue(driver)
    per_round = jobs // rounds

    claim = _claims_over_http(server, token)

    def bare(i, out):
        while True:
            status, body = request(f"{server.url}/bench/claim", token, "POST", {})
            assert status == 200, status
            job_id = json.loads(body)["id"]
            if job_id is None:
                return
            out.append(job_id)

    measured = _claim_rounds(
        tag, claim, bare, claimers=claimers, per_round=per_round, rounds=rounds
    )
    total = per_round * rounds
    data = f"{_via(server, '')}{claimers} concurrent claimers, {total} jobs over HTTP"
    return _claim_row(data, measured, total)


def claim_with_budgets_over_http(
    server, *, claimers: int, jobs: int, rounds: int = 3, others: int = 4, tag="claim-budgets"
) -> Row:
    """``jobs`` claimed over HTTP with provider budgets set against the same claims with none:
    rounds take each in turn (after a warm-up of each), on freshly launched jobs. The budgets:
    one on the jobs' provider, its cap the round's jobs (so it is counted at every claim and
    never reached: the row measures what enforcing a budget costs, not what a cap holds back),
    and ``others`` on other providers."""
    from loopweb.runs.models import ProviderBudget

    driver = user(f"bench-claimer-{tag}", Role.DRIVER)
    _, token = ApiToken.objects.issue(driver)
    combination = _claim_combination()
    per_round = jobs // rounds
    ProviderBudget.objects.all().delete()
    ProviderBudget.objects.create(
        provider=combination.provider, max_in_flight=per_round, per_minute=1_000_000
    )
    for i in range(others):
        ProviderBudget.objects.create(provider=f"bench-other-{i}", max_in_flight=16)

    claim = _claims_over_http(server, token)

    def budgets(enabled: bool) -> None:
        ProviderBudget.objects.update(enabled=enabled, starts={}, turns={})

    rate, plain_rate, doubles, ids = _claim_rounds(
        tag, claim, claim, claimers=claimers, per_round=per_round, rounds=rounds, prepare=budgets
    )
    ProviderBudget.objects.all().delete()
    total = per_round * rounds
    return Row(
        "claim with budgets",
        f"{_via(server, '')}{claimers} concurrent claimers, {total} jobs over HTTP, "
        f"{others + 1} budgets (one on the jobs' provider)",
        f"{rate:.0f} claims/s, {doubles} double claims",
        f"{plain_rate:.0f} claims/s with none",
        rate / plain_rate,
        "≥ 0.8× claims with none, zero double claims",
        rate >= 0.8 * plain_rate and doubles == 0 and len(ids) == total,
    )


def table_size(
    ladder: Ladder, *, data: str, small_unrelated: int, large_unrelated: int, repeat: int
) -> list[Row]:
    """The launch pass and the progress read of the same ladder with ``small_unrelated`` and with
    ``large_unrelated`` runs of other cells in the table (bench/table_size.py)."""
    from bench import table_size as tables

    built = tables.build_large_table(large_unrelated - small_unrelated)
    try:
        samples = tables.measure(ladder, one_pass, repeat=repeat)
        counts = tables.count_seconds()
    finally:
        tables.drop_large_table()
    NOTES.append(
        f"count(*) over every run (what a paginated list of all runs pays for its count): "
        f"{counts['small'] * 1000:.0f} ms with {small_unrelated:,} unrelated runs, "
        f"{counts['large'] * 1000:.0f} ms with {large_unrelated:,}"
    )
    rows = []
    for name, benchmark in (("pass", "launch pass"), ("progress", "progress read")):
        small = statistics.median(samples["small"][name]) * 1000
        large = statistics.median(samples["large"][name]) * 1000
        queries = samples["large"][f"{name}_queries"]
        rows.append(
            Row(
                benchmark,
                f"{data} + {large_unrelated:,} unrelated (made in SQL in {built:.0f} s)",
                f"{large:.0f} ms, {queries} queries",
                f"{small:.0f} ms with {small_unrelated:,}",
                large / small,
                f"≤ 1.2× its time with {small_unrelated:,}",
                large <= 1.2 * small,
            )
        )
    return rows
