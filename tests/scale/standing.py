"""The standing a seeded simulated fleet must reach, computed from the draws alone (the gate
and the rating rule applied to what ``simulate`` would return for each attempt), not from what
the server stored.

A fault can cost an attempt its drawn result: a driver that never heard its claim's answer (the
web process was killed), or whose calls failed for longer than it retries, leaves the attempt to
its lease, which ends it as an infrastructure failure. Those attempts are named by the server
(``failure_detail`` "lease expired") and read as infrastructure here; every other attempt must
have ended as its draw says.
"""

from __future__ import annotations

from ladders.evidence import snapshot_rungs
from ladders.gate import Gate, Read, RunRead, read_run
from loopweb.driver.client import Failure
from loopweb.driver.simulate import simulate
from loopweb.runs.cells import CombinationCell, cell_key
from loopweb.runs.models import CaseVersion, Combination, Job
from loopweb.runs.validators import build_loaded, rate

LOST = "lease expired"


def expected_standing(ladder, seed: int) -> dict[str, tuple[str, int | None]]:
    """Each climber's status and the index of the rung it stopped at (None: completed)."""
    dispatch = ladder.dispatch
    snapshot = dispatch.snapshot
    gate = Gate.from_json(snapshot["gate"])
    checklists = {(v.case.slug, v.version): v.checklist for v in CaseVersion.objects.all()}
    lost = set(
        Job.objects.filter(
            origin__startswith=f"ladder:{ladder.pk}/{dispatch.dispatch_id}/", failure_detail=LOST
        ).values_list("cell_key", "attempt")
    )
    standing = {}
    for climber in dispatch.climbers.order_by("position"):
        model = Combination.objects.get(key=climber.combination_key).model
        status, at = "completed", None
        for index, rung in enumerate(snapshot["rungs"]):
            assert rung["runs"] == 1, "one run per slot: a draw is then one (cell, attempt)"
            pin = snapshot_rungs({"rungs": [rung]})[0].pin
            key = cell_key(pin, CombinationCell.from_json(climber.combination_cell))
            checklist = checklists[(rung["case"], rung["version"])]
            result = None
            for attempt in range(1, snapshot["retryCount"] + 2):
                if (key, attempt) in lost:
                    result = Failure("infrastructure", LOST)
                else:
                    job = {
                        "cellKey": key,
                        "attempt": attempt,
                        "case": rung["case"],
                        "engine": rung["engine"],
                        "cell": climber.combination_cell,
                        "combination": {"model": model},
                        "id": 0,
                    }
                    _, result = simulate(seed, job, checklist, 0)
                retryable = isinstance(result, Failure) or result.outcome == "hung"
                if not (retryable and attempt <= snapshot["retryCount"]):
                    break
            if isinstance(result, Failure):
                status, at = "blocked", index
                break
            rating = rate(result.record, checklist) if result.outcome == "completed" else None
            read = read_run(RunRead(result.outcome, rating, build_loaded(result.record)), gate)
            if read != Read.PASS:
                status, at = "failed", index
                break
        standing[climber.combination_key] = (status, at)
    return standing


def actual_standing(progress: dict) -> dict[str, tuple[str, int | None]]:
    rung_ids = [r["id"] for r in progress["dispatch"]["rungs"]]
    return {
        c["key"]: (
            c["status"],
            rung_ids.index(c["currentRung"]) if c["currentRung"] else None,
        )
        for c in progress["climbers"]
    }
