"""The main job end to end: demo data, a seeded simulated fleet speaking HTTP through the
driver client, Run pressed through the API, and the standing the seed determines."""

import json
import threading
import time
import urllib.request

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection

from ladders.evidence import snapshot_rungs
from ladders.gate import Gate, Read, RunRead, read_run
from ladders.models import Ladder
from loopweb.driver.client import Failure
from loopweb.driver.simulate import run_fleet, simulate
from loopweb.runs.cells import CombinationCell, cell_key
from loopweb.runs.models import ApiToken, CaseVersion, Combination
from loopweb.runs.validators import build_loaded, rate
from tests.tasks import run_queued_tasks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("live")]
SEED = 7


def api(url, token, method="GET", body=None):
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def expected_standing(ladder: Ladder) -> dict[str, tuple[str, int | None]]:
    """Replay the fleet's seeded draws through the gate: each climber's status and the index of
    the rung it stopped at."""
    snapshot = ladder.dispatch.snapshot
    gate = Gate.from_json(snapshot["gate"])
    checklists = {(v.case.slug, v.version): v.checklist for v in CaseVersion.objects.all()}
    standing = {}
    for climber in ladder.dispatch.climbers.order_by("position"):
        combination = Combination.objects.get(key=climber.combination_key)
        executions: dict[tuple[str, int], int] = {}
        status, at = "completed", None
        for index, rung in enumerate(snapshot["rungs"]):
            pin = snapshot_rungs({"rungs": [rung]})[0].pin
            key = cell_key(pin, CombinationCell.from_json(climber.combination_cell))
            passing, exhausted = 0, False
            for _ in range(rung["runs"]):
                for attempt in range(1, snapshot["retryCount"] + 2):
                    n = executions.get((key, attempt), 0)
                    executions[(key, attempt)] = n + 1
                    job = {
                        "cellKey": key,
                        "attempt": attempt,
                        "case": rung["case"],
                        "engine": rung["engine"],
                        "cell": climber.combination_cell,
                        "combination": {"model": combination.model},
                        "id": 0,
                    }
                    _, result = simulate(SEED, job, checklists[(rung["case"], "1")], n)
                    retryable = isinstance(result, Failure) or result.outcome == "hung"
                    if retryable and attempt <= snapshot["retryCount"]:
                        continue
                    break
                if isinstance(result, Failure):
                    exhausted = True
                    continue
                rating = (
                    rate(result.record, checklists[(rung["case"], "1")])
                    if result.outcome == "completed"
                    else None
                )
                read = read_run(RunRead(result.outcome, rating, build_loaded(result.record)), gate)
                passing += read == Read.PASS
            if exhausted:
                status, at = "blocked", index
                break
            if passing < gate.required(rung["runs"]):
                status, at = "failed", index
                break
        standing[climber.combination_key] = (status, at)
    return standing


def test_a_seeded_fleet_climbs_the_demo_ladder_to_the_standing_its_seed_determines(live_server):
    call_command("seed_demo")
    ladder = Ladder.objects.get(name="Platformer climb")
    _, owner_token = ApiToken.objects.issue(ladder.owner)
    _, driver_token = ApiToken.objects.issue(get_user_model().objects.get(username="fleet"))
    stop = threading.Event()

    def worker():
        try:
            while not stop.is_set():
                if not run_queued_tasks():
                    time.sleep(0.05)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, daemon=True)]
    threads[0].start()
    threads += run_fleet(
        live_server.url,
        driver_token,
        concurrency=4,
        seed=SEED,
        speed=60,
        stop=stop,
        poll_interval=0.05,
    )
    try:
        base = f"{live_server.url}/api/ladders/{ladder.pk}"
        started = api(f"{base}/run", owner_token, "POST", {})
        assert started["dispatch"]["status"] == "running"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            progress = api(f"{base}/progress", owner_token)
            if progress["dispatch"]["status"] in ("finished", "needsAttention"):
                break
            time.sleep(0.2)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=15)

    ladder.refresh_from_db()
    rung_ids = [r["id"] for r in progress["dispatch"]["rungs"]]
    actual = {
        c["key"]: (
            c["status"],
            rung_ids.index(c["currentRung"]) if c["currentRung"] else None,
        )
        for c in progress["climbers"]
    }
    assert actual == expected_standing(ladder)
    assert progress["dispatch"]["runs"]["inFlight"] == 0
