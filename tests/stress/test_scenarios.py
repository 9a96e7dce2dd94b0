"""Concurrency stress: seeded randomized scenarios of drivers, owners and workers at once.

``make test`` runs ``LOOPWEB_STRESS_SCENARIOS`` (default 20) scenarios of a few steps per
actor; ``make stress`` (the nightly mode) runs 200 longer ones. ``LOOPWEB_STRESS_SEED`` shifts
the seeds, so a nightly run can explore new ones; a failure names the seed that reproduces its
choices (``LOOPWEB_STRESS_SEED=<seed> LOOPWEB_STRESS_SCENARIOS=1``).
"""

import json
import os
import time
from pathlib import Path

import pytest

from tests.stress.scenario import Plan, Scenario, ScenarioFailure

# PostgreSQL: invariants are read from one REPEATABLE READ snapshot while the actors race.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("stress"),
    pytest.mark.postgres,
]

SCENARIOS = int(os.environ.get("LOOPWEB_STRESS_SCENARIOS", "20"))
FIRST_SEED = int(os.environ.get("LOOPWEB_STRESS_SEED", "1"))
STEPS = int(os.environ.get("LOOPWEB_STRESS_STEPS", "6" if SCENARIOS <= 50 else "16"))
# Under xdist each worker runs some of the batches and writes its own report.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
REPORT = Path(
    os.environ.get(
        "LOOPWEB_STRESS_REPORT",
        f"var/reliability/stress-{_WORKER}.json" if _WORKER else "var/reliability/stress.json",
    )
)

_results: list[dict] = []


@pytest.fixture(scope="module", autouse=True)
def report():
    yield
    if not _results:
        return
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    totals = {
        "scenarios": len(_results),
        "passed": sum(r["passed"] for r in _results),
        "steps": sum(r.get("steps", 0) for r in _results),
        "checks": sum(r.get("checks", 0) for r in _results),
        "requests": sum(r.get("requests", 0) for r in _results),
        "seconds": round(sum(r["seconds"] for r in _results), 1),
        "stepsPerActor": STEPS,
        "dispatches": sum(r.get("dispatches", 0) for r in _results),
        "jobs": sum(sum(r.get("jobs", {}).values()) for r in _results),
        "retries": sum(r.get("retries", 0) for r in _results),
        "leasesExpired": sum(r.get("leasesExpired", 0) for r in _results),
        "runs": sum(r.get("runs", 0) for r in _results),
        "seen": sorted({s for r in _results for s in r.get("seen", [])}),
        "firstSeed": FIRST_SEED,
    }
    REPORT.write_text(json.dumps({"totals": totals, "scenarios": _results}, indent=1))


BATCH = 5  # scenarios per test: each test flushes the database once (about a second)
BATCHES = [
    list(range(start, min(start + BATCH, FIRST_SEED + SCENARIOS)))
    for start in range(FIRST_SEED, FIRST_SEED + SCENARIOS, BATCH)
]


@pytest.mark.parametrize("seeds", BATCHES, ids=lambda seeds: f"seeds-{seeds[0]}-{seeds[-1]}")
def test_randomized_scenarios_keep_every_invariant(seeds, settings):
    failures = []
    for seed in seeds:
        plan = Plan.draw(seed, STEPS)
        started = time.monotonic()
        result = {"seed": seed, "passed": False}
        try:
            stats = Scenario(plan).run(settings)
        except ScenarioFailure as failure:
            failures.append(str(failure))
        else:
            result.update(
                passed=True,
                steps=stats.steps,
                checks=stats.checks,
                requests=stats.requests,
                actions=stats.actions,
                seen=sorted(stats.seen),
                **stats.outcome,
            )
        finally:
            result["seconds"] = round(time.monotonic() - started, 2)
            _results.append(result)
    assert not failures, "\n\n".join(failures)
