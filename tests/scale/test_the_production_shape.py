"""The production shape climbs a ladder to the end through faults, and the result is right.

``make test`` runs the smoke size: two web processes, two task workers and four drivers on a
6 × 4 ladder, and cuts every database connection instead of restarting PostgreSQL (the rest of
the suite is using it). ``make scale`` (``LOOPWEB_SCALE=full``) runs three web processes, two
task workers and 32 drivers on a 100 × 20 ladder, and restarts PostgreSQL once.

Every other climber's provider has a budget of a few jobs in flight (``harness.CAPPED``): at no
moment of the climb were more of its jobs in flight, read from the job rows every 20 ms.

Afterwards: the standing equals the one computed from the simulated draws alone; no slot place
was launched twice; every run the drivers were told was stored exists, on its job, and no cell
counts more runs than its target; nothing is in flight, nor was anything left in flight without
a lease; no request answered a server error other than 503. The throughput and each fault's
recovery time are printed (and written to var/scale/).
"""

import json
import os
import re
import shutil
import time
from collections import Counter

import pytest

from ladders.models import Ladder
from ladders.selectors import ladder_progress
from loopweb.runs.models import ApiToken, Job, Run
from tests.scale import harness
from tests.scale.standing import actual_standing, expected_standing
from tests.support.processes import BASE_DIR, wait_until

FULL = os.environ.get("LOOPWEB_SCALE") == "full"
SIZE = harness.FULL if FULL else harness.SMOKE
#: make scale restarts PostgreSQL unless told not to (LOOPWEB_SCALE_RESTART=0: cut every
#: connection instead, as the smoke size always does).
RESTART = SIZE.restart_database and os.environ.get("LOOPWEB_SCALE_RESTART", "1") != "0"
SEED = 11

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("live"),
    pytest.mark.postgres,  # gunicorn, workers and PgBouncer on one PostgreSQL
]


def test_the_production_shape_climbs_to_the_end_through_faults(owner, tmp_path):
    climb(owner, tmp_path, SIZE, restart=RESTART)


@pytest.mark.skipif(not shutil.which("pgbouncer"), reason="PgBouncer is not installed")
def test_the_production_shape_works_through_pgbouncer_in_transaction_pooling(owner, tmp_path):
    """Row locks, transaction-level advisory locks, SKIP LOCKED claims and the chores' claims
    hold through PgBouncer's transaction pooling: the same climb and checks, every process
    connected through it (its own pool in front of PostgreSQL's)."""
    bouncer = harness.PgBouncer()
    try:
        climb(owner, tmp_path, harness.SMOKE, restart=False, database_url=bouncer.url())
    finally:
        bouncer.stop()


def climb(owner, tmp_path, size: harness.Size, *, restart: bool, database_url: str | None = None):
    SIZE = size  # noqa: N806 - the size of this climb
    ladder = harness.build_ladder(owner, SIZE)
    _, owner_token = ApiToken.objects.issue(owner)
    token = harness.driver_token()
    origin = f"ladder:{ladder.pk}/"

    def board() -> str:
        return ladder_progress(Ladder.objects.get(pk=ladder.pk))["dispatch"]["status"]

    def runs_now() -> int:
        return Run.objects.filter(job__origin__startswith=origin).count()

    def progressed():
        """A check that a run was stored after now (or the climb has ended)."""
        before = runs_now()
        return lambda: runs_now() > before or board() != "running"

    shape = harness.Shape(SIZE, SIZE.lease, database_url)
    fleet, faults, metrics = None, [], ""
    cap = harness.CapWatch()
    try:
        cap.start()
        started = time.monotonic()
        harness.api(shape.url, owner_token, "POST", f"/api/ladders/{ladder.pk}/run", {})
        ladder.refresh_from_db()
        reach = sum(
            SIZE.rungs if at is None else at + 1
            for _, at in expected_standing(ladder, SEED).values()
        )
        fleet = harness.Fleet(shape.url, token, SIZE, SEED, tmp_path)

        everything = harness.Watched(shape.process, *fleet.processes)

        def after(share: float):
            wait_until(
                lambda: runs_now() >= max(1, int(reach * share)), SIZE.deadline, "runs", everything
            )

        after(0.15)
        faults.append(harness.kill_a_web_process(shape, SIZE.web))
        after(0.35)
        faults.append(harness.kill_a_worker_mid_pass(shape, ladder.pk))
        after(0.55)
        if restart:
            faults.append(harness.restart_the_database(shape, progressed))
        else:
            faults.append(harness.cut_every_connection(shape, progressed))
        wait_until(
            lambda: board() in ("finished", "needsAttention"),
            SIZE.deadline,
            "the climb to end",
            everything,
        )
        climbed = time.monotonic() - started
        # The board ends when the last pass has run: read it once it has.
        progress = wait_until(
            lambda: (
                (
                    body := harness.api(
                        shape.url, owner_token, "GET", f"/api/ladders/{ladder.pk}/progress"
                    )
                )["dispatch"]["status"]
                != "running"
                and body
            ),
            30,
            "the board to show the climb's end",
            everything,
        )
        metrics = shape.metrics()
    finally:
        cap.stop()
        if fleet is not None:
            fleet.stop()
        shape.stop()
    # What the server said of its errors, to read a failure below by.
    server_errors = [
        line
        for line in shape.process.output.splitlines()
        if "Error" in line or "Traceback" in line or "Internal Server" in line
    ][-40:]

    ladder.refresh_from_db()
    jobs = list(Job.objects.filter(origin__startswith=origin))
    runs = list(Run.objects.filter(job__origin__startswith=origin))
    report = {
        "mode": ("full" if SIZE is harness.FULL else "smoke")
        + (" through PgBouncer" if database_url else ""),
        "size": vars(SIZE),
        "climb_seconds": round(climbed, 1),
        "runs": len(runs),
        "jobs": len(jobs),
        "runs_per_second": round(len(runs) / climbed, 2),
        "attempts_lost_to_faults": sum(j.failure_detail == "lease expired" for j in jobs),
        "faults": [
            {"fault": f.name, "recovered_in_s": round(f.seconds, 1), **f.detail} for f in faults
        ],
        "status": progress["dispatch"]["status"],
        "budget": {
            "provider": harness.CAPPED,
            "cap": SIZE.budget,
            "most_in_flight_seen": max(cap.seen, default=0),
            "reads": len(cap.seen),
        },
    }
    _write(report)
    print(_table(report))

    # The climb ended (finished, or waiting on climbers the draws blocked) with the standing the
    # draws determine.
    assert progress["dispatch"]["status"] in ("finished", "needsAttention"), report
    assert progress["dispatch"]["runs"]["inFlight"] == 0
    # The budget held: never more of the capped provider's jobs in flight than its cap.
    assert len(cap.seen) > 10 and max(cap.seen) <= SIZE.budget, report["budget"]
    assert actual_standing(progress) == expected_standing(ladder, SEED)
    # No slot place launched twice: one first attempt per slot, one retry per failed attempt.
    firsts = Counter((j.origin, j.cell_key) for j in jobs if j.attempt == 1)
    assert max(firsts.values()) == 1, [k for k, n in firsts.items() if n > 1]
    retried = Counter(j.retry_id for j in jobs if j.retry_id)
    assert not [k for k, n in retried.items() if n > 1]
    # Every acknowledged push is a stored run of its job; no cell counts more than its target.
    stored = {r.pk: r.job_id for r in runs}
    for entry in fleet.acknowledged():
        assert stored.get(entry["run"]) == entry["job"], entry
    counted = Counter(r.cell_key for r in runs if r.counted)
    assert max(counted.values()) == 1
    # Nothing in flight at the end; nothing was ever left in flight without a lease.
    assert not [j for j in jobs if j.status in ("queued", "pending", "dispatched", "running")]
    assert not Job.objects.filter(
        status__in=["pending", "dispatched", "starting", "running"], lease_expires_at=None
    ).exists()
    # No server error but the 503s of an unreachable database.
    errors = [
        line
        for line in metrics.splitlines()
        if line.startswith("loopweb_http_requests_total{")
        and re.search(r'status="5\d\d"', line)
        and 'status="503"' not in line
    ]
    assert not errors, (errors, server_errors)


def _write(report: dict) -> None:
    folder = BASE_DIR / "var" / "scale"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{report['mode'].replace(' ', '-')}.json").write_text(json.dumps(report, indent=2))


def _table(report: dict) -> str:
    size = report["size"]
    lines = [
        "",
        f"scale ({report['mode']}): {size['climbers']} climbers × {size['rungs']} rungs, "
        f"{size['web']} web processes × {size['threads']} threads, {size['workers']} task "
        f"workers, {size['driver_processes'] * size['drivers_per_process']} drivers",
        f"  climb: {report['climb_seconds']} s, {report['runs']} runs ({report['jobs']} jobs), "
        f"{report['runs_per_second']} runs/s; attempts lost to faults: "
        f"{report['attempts_lost_to_faults']}; dispatch {report['status']}",
    ]
    lines += [f"  {f['fault']}: recovered in {f['recovered_in_s']} s" for f in report["faults"]]
    budget = report["budget"]
    lines.append(
        f"  budget on {budget['provider']}: cap {budget['cap']}, at most "
        f"{budget['most_in_flight_seen']} in flight in {budget['reads']} reads"
    )
    return "\n".join(lines)
