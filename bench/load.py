"""Progress under load: drivers pushing into a large running dispatch while its board is polled
over HTTP through several web processes; and what one push costs the next read and the console.
"""

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

from django.db import close_old_connections, connection
from django.test import Client
from django.utils import timezone

from bench.data import CHECKLIST, settle_statistics, user
from bench.measure import Timing, interleaved
from bench.production import ProductionServer
from bench.runner import Row
from ladders import services, shared_progress
from ladders.bodies import ladder_body, rung_body
from ladders.models import Ladder
from loopweb.runs import services as run_services
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.models import (
    ApiToken,
    Case,
    CaseVersion,
    Combination,
    Job,
    JobStatus,
    ModelEntry,
    Role,
    Run,
)

ROOT = Path(__file__).resolve().parent.parent
PASSING = {"checklist": {"i0": True, "i1": True, "i2": True}, "toolchain": {"build": "ok"}}


def running_ladder(*, climbers: int, rungs: int, tag: str) -> Ladder:
    """A ladder of ``climbers`` × ``rungs`` with no runs yet, Run: its first rung launched."""
    owner = user(f"bench-owner-{tag}", Role.OWNER)
    for i in range(rungs):
        case, _ = Case.objects.get_or_create(
            slug=f"{tag}-case-{i}", defaults={"title": f"case {i}", "kind": "functional"}
        )
        CaseVersion.objects.get_or_create(
            case=case,
            version="1",
            defaults={"ingested_at": "2026-01-01T00:00:00Z", "checklist": CHECKLIST},
        )
    ModelEntry.objects.bulk_create(
        [ModelEntry(name=f"{tag}-m{i}", provider="bench") for i in range(climbers)],
        ignore_conflicts=True,
    )
    combos = []
    for i in range(climbers):
        combination = Combination(kind="harness", harness="h", model=f"{tag}-m{i}", provider="b")
        combination.key = combination.compute_key()
        combos.append(combination)
    Combination.objects.bulk_create(combos, ignore_conflicts=True)
    ids = list(
        Combination.objects.filter(model__startswith=f"{tag}-m")
        .order_by("id")
        .values_list("id", flat=True)
    )
    ladder = services.save_ladder(
        owner=owner,
        data=ladder_body(
            name=f"bench {tag}",
            rungs=[rung_body(f"{tag}-case-{i}", "1") for i in range(rungs)],
            combinations=ids,
            runsInFlightLimit=10_000,
            retryCount=0,
        ),
    )
    # Nothing else is waiting for a driver: every claimed job is this ladder's.
    Job.objects.filter(status__in=[JobStatus.QUEUED, JobStatus.PENDING]).update(status="canceled")
    services.start_dispatch(ladder=ladder)
    settle_statistics()
    return Ladder.objects.get(pk=ladder.pk)


def passes(ladder: Ladder, stop: threading.Event) -> None:
    """The task worker's part: a launch pass whenever runs have landed (as each push queues
    one), until ``stop``."""
    seen = None
    try:
        while not stop.is_set():
            latest = Run.objects.order_by("-id").values_list("id", flat=True).first()
            if latest != seen:
                seen = latest
                services.run_launch_pass(ladder_id=ladder.pk)
            stop.wait(0.05)
    finally:
        close_old_connections()
        connection.close()


def progress_under_load(
    *,
    climbers: int,
    rungs: int,
    drivers: int,
    pollers: int,
    seconds: float,
    quiet: float,
    interval: float,
    processes: int = 2,
    ingest: int = 0,
    tag: str = "load",
) -> list[Row]:
    ladder = running_ladder(climbers=climbers, rungs=rungs, tag=tag)
    owner_token = ApiToken.objects.issue(ladder.owner)[1]
    driver_token = ApiToken.objects.issue(user(f"bench-driver-{tag}", Role.DRIVER))[1]
    # The production server as make serve runs it: its processes share one port, as web
    # processes behind a load balancer do; with ``ingest``, the drivers have web processes of
    # their own at a lower CPU priority (make serve INGEST_CONCURRENCY=2).
    web = ProductionServer(web=processes, threads=8)
    drivers_web = ProductionServer(web=ingest, threads=8, nice=10) if ingest else None
    stop = threading.Event()
    worker = threading.Thread(target=passes, args=(ladder, stop), daemon=True)
    worker.start()
    try:
        spec = {
            "servers": [web.url],
            "driver_servers": [drivers_web.url] if drivers_web else None,
            "ladder": ladder.pk,
            "owner": owner_token,
            "driver": driver_token,
            "drivers": drivers,
            "pollers": pollers,
            "seconds": seconds,
            "quiet": quiet,
            "interval": interval,
        }
        done = subprocess.run(  # noqa: S603 - our own module
            [sys.executable, "-m", "bench.load_client", json.dumps(spec)],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
    finally:
        stop.set()
        worker.join(timeout=60)
        web.close()
        if drivers_web:
            drivers_web.close()
    result = json.loads(done.stdout)
    polls = result["polls"]
    # A poller's first read is the page's load: the whole board. The polls are the reads that
    # follow it, sending its version back; the first reads are reported apart, in the data.
    every = Timing.of([latency for latency, _, _, followed, _ in polls if followed])
    unchanged = [latency for latency, status, *_ in polls if status == 304]
    first_reads = [latency for latency, _, _, followed, _ in polls if not followed]
    first = Timing.of(first_reads)
    sent = sum(size for _, _, size, *_ in polls)
    not_modified = Timing.of(unchanged) if unchanged else None
    stale = len(result["stale"])
    data = (
        f"{climbers}×{rungs}, {drivers} drivers ({result['pushes']} runs pushed), {pollers} "
        f"pollers every {interval:g} s, gunicorn {processes}×8"
        + (f" for viewers, {ingest}×8 at nice 10 for drivers" if ingest else "")
        + f", {len(polls) - len(first_reads)} polls after {len(first_reads)} first reads "
        f"({sent / max(1, len(polls)) / 1000:.0f} KB a read on average; the first reads, "
        f"whole boards: median {first.median_ms:.0f} ms, slowest {max(first_reads) * 1000:.0f} ms)"
    )
    rows = [
        Row(
            "progress under load",
            data,
            f"p95 {every.p95_ms:.0f} ms, {stale} stale",
            "-",
            every.p95_ms / 100,
            "p95 < 100 ms, zero stale",
            every.p95_ms < 100 and stale == 0,
        ),
        Row(
            "progress 304",
            f"{len(unchanged)} replies not modified",
            f"p95 {not_modified.p95_ms:.1f} ms" if not_modified else "none",
            "-",
            (not_modified.p95_ms / 10) if not_modified else 0.0,
            "p95 < 10 ms",
            not_modified is not None and not_modified.p95_ms < 10,
        ),
    ]
    return rows


def one_push_then_read(ladder: Ladder, *, repeat: int) -> list[Row]:
    """On the main benchmark's board (every slot's runs in place): what one push costs the next
    read, the console's full render against the JSON read, and the size of the console's refresh
    after one push."""
    from django.conf import settings

    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    # Nothing else waits for a driver (the load above may leave jobs queued): each claim below
    # takes the job just launched.
    Job.objects.filter(status__in=[JobStatus.QUEUED, JobStatus.PENDING]).update(status="canceled")
    ladder = Ladder.objects.get(pk=ladder.pk)
    driver = user("bench-driver-after", Role.DRIVER)
    rung = ladder.dispatch.snapshot["rungs"][0]
    pin = CasePin(rung["case"], rung["version"], rung["variant"], rung["engine"])
    # Every slot of this board has its runs: a run more would change nothing shown. So a climber
    # per push has the latest run of its first slot no longer counted (stamped as any write is),
    # and each push gives one of them its missing run, a change the board shows.
    all_climbers = list(ladder.dispatch.climbers.order_by("position").select_related("combination"))
    short = all_climbers[-(repeat + 1) :]
    for climber in short:
        key = cell_key(pin, CombinationCell.from_json(climber.combination_cell))
        latest = Run.objects.filter(cell_key=key, counted=True).order_by("-finished_at", "-id")
        Run.objects.filter(pk__in=latest.values("pk")[:1]).update(counted=False)
    console = Client()
    console.force_login(ladder.owner)
    api = Client(HTTP_AUTHORIZATION=f"Token {ApiToken.objects.issue(ladder.owner)[1]}")

    def push_one():
        """The missing run of one short climber's first slot, launched by hand and pushed by a
        driver."""
        climber = short.pop()
        job = run_services.launch_by_hand(
            owner=ladder.owner, pin=pin, combination=climber.combination, retry_count=0
        )
        run_services.claim_jobs(driver=driver, limit=1)
        run_services.push_run(
            pushed_by=driver,
            job_id=job.pk,
            outcome="completed",
            record=PASSING,
            finished_at=timezone.now(),
        )

    def full_read():
        shared_progress.reset()
        shared_progress.read(ladder)

    def json_read():
        shared_progress.reset()
        assert api.get(f"/api/ladders/{ladder.pk}/progress").status_code == 200

    def board_render():
        shared_progress.reset()
        assert console.get(f"/ladders/{ladder.pk}/").status_code == 200

    t = interleaved({"full": full_read, "json": json_read, "board": board_render}, repeat=repeat)
    after = []
    shared_progress.read(ladder)
    for _ in range(repeat):
        push_one()
        start = time.perf_counter()
        shared_progress.read(ladder)
        after.append(time.perf_counter() - start)
    after = Timing.of(after)
    page = console.get(f"/ladders/{ladder.pk}/").content.decode()
    held = page.split('"v": "')[1].split('"')[0]
    standing_url = f"/ladders/{ladder.pk}/standing"
    standing = console.get(standing_url).content.decode().replace("&amp;", "&")
    held_standing = standing.split("&v=", 1)[1].split('"', 1)[0]
    push_one()
    # What a viewer's page asks after the push: the board's refresh, then (told the board
    # changed) its standing, compressed as a browser accepts it.
    refresh = console.get(f"/ladders/{ladder.pk}/board", {"v": held})
    standing = console.get(standing_url, {"v": held_standing}, HTTP_ACCEPT_ENCODING="gzip")
    size = len(refresh.content) + len(standing.content)
    data = f"the {len(ladder.dispatch.snapshot['rungs'])}-rung board above"
    full = t["full"]
    return [
        Row(
            "read after one push",
            data,
            f"{after.median_ms:.0f} ms",
            f"{full.median_ms:.0f} ms full",
            after.median_ms / full.median_ms,
            "≤ 0.1× a full computation",
            after.median_ms <= 0.1 * full.median_ms,
        ),
        Row(
            "console board render",
            f"{data}, {len(page) / 1e6:.1f} MB of HTML",
            f"{t['board'].median_ms:.0f} ms",
            f"{t['json'].median_ms:.0f} ms JSON",
            t["board"].median_ms / t["json"].median_ms,
            "≤ 1.3× the progress JSON read",
            t["board"].median_ms <= 1.3 * t["json"].median_ms,
        ),
        Row(
            "console refresh after one push",
            f"{data}: its changed rows {len(refresh.content) / 1000:.1f} KB, then the standing"
            f" {len(standing.content) / 1000:.1f} KB gzipped",
            f"{size / 1000:.1f} KB",
            "-",
            size / 50_000,
            "< 50 KB",
            refresh.status_code == 200 and standing.status_code == 200 and size < 50_000,
        ),
    ]
