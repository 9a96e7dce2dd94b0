"""A simulated harness for the demo and the tests: plausible, reproducible runs.

Every draw is seeded by (seed, cell, attempt, n), n counting the executions of that cell and
attempt so far, so the results a cell's runs get do not depend on which driver thread runs
them or when: a seeded fleet always produces the same standing.

Each model has a skill and each case a difficulty; a run's quality is skill minus difficulty
plus noise, and decides how many checklist items pass. Runs sometimes fail on infrastructure or
hang, and every run reports cost and tokens and a ``tests`` verdict (pass when the build is good
and every critical check passes), so an acceptance rule that requires tests reads it.

Each model is served from a simulated host; one of them (``FLAKY_HOSTS``) loses most of its
attempts, so with the default of one retry a climber on it blocks and its dispatch needs
attention.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import random
import re
import threading
import time

from loopweb.driver.client import Driver, Failure, Job, RunResult

INFRASTRUCTURE_RATE = 0.05
HANG_RATE = 0.03
#: Model -> (its host, the share of attempts that host loses).
FLAKY_HOSTS = {"lumen-pro": ("gpu-box-3", 0.6)}


def _unit(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


def skill(model: str) -> float:
    """A model's skill in [0.35, 0.95], fixed by its name."""
    return 0.35 + 0.6 * _unit(f"skill:{model}")


def difficulty(case: str, engine: str | None) -> float:
    """A case's difficulty: a trailing number n reads as step n of a ladder (0.1 per step)."""
    match = re.search(r"(\d+)$", case)
    base = 0.1 * int(match.group(1)) if match else 0.3 + 0.4 * _unit(f"difficulty:{case}")
    return base + (0.05 if engine else 0.0)


def rng_for(seed: int, job: dict, n: int = 0) -> random.Random:
    key = f"{seed}|{job['cellKey']}|{job['attempt']}|{n}"
    return random.Random(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))  # noqa: S311


def simulate(
    seed: int, job: dict, checklist: list[dict], n: int = 0
) -> tuple[float, RunResult | Failure]:
    """The seconds the run takes (before speed-up) and its result."""
    rng = rng_for(seed, job, n)
    seconds = rng.uniform(2.0, 6.0)
    draw = rng.random()
    model = (job.get("cell") or {}).get("model") or job["combination"].get("model") or "?"
    host, failure_rate = FLAKY_HOSTS.get(model, ("", INFRASTRUCTURE_RATE))
    if draw < failure_rate:
        lost = f"simulated host {host} lost the connection" if host else "simulated host lost"
        return seconds / 2, Failure("infrastructure", lost)
    quality = skill(model) - difficulty(job["case"], job.get("engine")) + rng.gauss(0, 0.15)
    input_tokens = int(rng.uniform(20_000, 90_000))
    output_tokens = int(rng.uniform(3_000, 25_000))
    metrics = {
        "runtime_s": round(seconds * (1.5 - min(quality, 0.5)), 2),
        "input_tokens": input_tokens,
        "output_tokens": output_tokens,
        "usd_micros": input_tokens * 3 + output_tokens * 15,
        "wall_ms": int(seconds * 1000),
    }
    if draw < failure_rate + HANG_RATE:
        return seconds, RunResult(
            outcome="hung", record={"metrics": metrics}, signals=[tests_verdict(job, False)]
        )
    share = 1 / (1 + math.exp(-8 * quality))
    build_ok = rng.random() < 0.6 + 0.4 * share
    results = {item["id"]: build_ok and rng.random() < share for item in checklist}
    critical = [item["id"] for item in checklist if item.get("critical")] or list(results)
    record = {
        "checklist": results,
        "toolchain": {"build": "ok" if build_ok else "failed", "loaded": build_ok},
        "metrics": metrics,
        "artifacts": [{"name": "transcript", "url": f"https://example.invalid/runs/{job['id']}"}],
    }
    passed = build_ok and all(results[item] for item in critical)
    return seconds, RunResult(
        outcome="completed", record=record, signals=[tests_verdict(job, passed)]
    )


def tests_verdict(job: dict, passed: bool) -> dict:
    """The harness's own tests, as a verdict signal (seed 000) on the run it pushes."""
    return {
        "id": "tests",
        "kind": "verdict",
        "name": "tests",
        "value": "pass" if passed else "fail",
        "at_attempt": str(job["attempt"]),
        "observed_at": dt.datetime.now(dt.UTC).isoformat(),
        "tier": "verified",
    }


class Executions:
    """How many times each (cell, attempt) has been executed, shared by a fleet."""

    def __init__(self):
        self._counts: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def next(self, cell_key: str, attempt: int) -> int:
        with self._lock:
            n = self._counts.get((cell_key, attempt), 0)
            self._counts[(cell_key, attempt)] = n + 1
            return n


class Simulator:
    """``execute`` for a Driver: looks up the case's checklist, waits, returns the result."""

    def __init__(
        self,
        driver: Driver,
        *,
        seed: int = 0,
        speed: float = 1.0,
        executions: Executions | None = None,
    ):
        self.driver = driver
        self.seed = seed
        self.speed = speed
        self.executions = executions or Executions()
        self._checklists: dict[tuple[str, str], list[dict]] = {}
        self._lock = threading.Lock()

    def checklist(self, case: str, version: str) -> list[dict]:
        with self._lock:
            if (case, version) not in self._checklists:
                detail = self.driver.call("GET", f"/api/cases/{case}/") or {}
                for item in detail.get("versions", []):
                    self._checklists[(case, item["version"])] = item.get("checklist", [])
            return self._checklists.get((case, version), [])

    def __call__(self, job: Job) -> RunResult:
        n = self.executions.next(job.cellKey, job.attempt)
        seconds, result = simulate(self.seed, job.data, self.checklist(job.case, job.version), n)
        deadline = time.monotonic() + seconds / self.speed
        while time.monotonic() < deadline:
            if job.cancelled.wait(min(0.2, max(0.0, deadline - time.monotonic()))):
                raise Failure("canceled", "cancelled by the server")
            if job.stopping.is_set():
                raise Failure("infrastructure", "the driver stopped")
        if isinstance(result, Failure):
            raise result
        result.finished_at = dt.datetime.now(dt.UTC)
        return result


def run_fleet(
    url: str,
    token: str,
    *,
    concurrency: int = 4,
    seed: int = 0,
    speed: float = 1.0,
    stop: threading.Event | None = None,
    poll_interval: float = 1.0,
    heartbeat: float = 10.0,
    on_pushed=None,
) -> list[threading.Thread]:
    """Start ``concurrency`` simulated drivers in threads; they stop when ``stop`` is set."""
    stop = stop or threading.Event()
    executions = Executions()
    threads = []
    for _ in range(concurrency):
        driver = Driver(
            url,
            token,
            poll_interval=poll_interval,
            heartbeat=heartbeat,
            stop=stop,
            on_pushed=on_pushed,
        )
        simulator = Simulator(driver, seed=seed, speed=speed, executions=executions)
        thread = threading.Thread(
            target=driver.serve, args=(simulator,), kwargs={"stop": stop}, daemon=True
        )
        thread.start()
        threads.append(thread)
    return threads
