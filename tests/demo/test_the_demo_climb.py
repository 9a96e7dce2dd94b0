"""The main job end to end: demo data, a seeded simulated fleet speaking HTTP through the
driver client, Run pressed through the API, and the standing the seed determines. At the demo's
own seed the climb shows every part: outcomes read success or failure under the owner's rule, a
climber blocks on the flaky simulated host with the default retry count, and the verify gate
measures the seeded proposal."""

import json
import threading
import time
import urllib.request

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.urls import reverse

from evalsets.models import Evalset, OutcomeResult, Proposal
from evalsets.selectors import gate_status, visible_proposals
from ladders.evidence import snapshot_rungs
from ladders.gate import Gate, Read, RunRead, read_run
from ladders.inputs import LadderConfigSerializer
from ladders.models import Ladder
from loopweb.driver.client import Failure
from loopweb.driver.simulate import run_fleet, simulate
from loopweb.runs.cells import CombinationCell, cell_key
from loopweb.runs.models import ApiToken, CaseVersion, Combination, Run
from loopweb.runs.validators import build_loaded, rate
from signals_app.selectors import run_outcome
from tests.console.helpers import text_of
from tests.tasks import run_queued_tasks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("live")]
SEED = 7
#: The seed ``make demo``'s fleet draws with (``run_driver``'s default).
DEMO_SEED = 0


def api(url, token, method="GET", body=None):
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        method=method,
    )
    # Generous: the first Run of a live server on a busy machine can take seconds.
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def expected_standing(ladder: Ladder, seed: int = SEED) -> dict[str, tuple[str, int | None]]:
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
                    _, result = simulate(seed, job, checklists[(rung["case"], "1")], n)
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


class Climb:
    """The demo data, a worker thread running queued tasks and a seeded fleet; ``run`` presses
    Run through the API and waits until the dispatch finishes or needs attention."""

    def __init__(self, live_server, seed: int):
        call_command("seed_demo")
        self.ladder = Ladder.objects.get(name="Platformer climb")
        _, self.owner_token = ApiToken.objects.issue(self.ladder.owner)
        _, driver_token = ApiToken.objects.issue(get_user_model().objects.get(username="fleet"))
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.worker, daemon=True)]
        self.threads[0].start()
        self.threads += run_fleet(
            live_server.url,
            driver_token,
            concurrency=4,
            seed=seed,
            speed=60,
            stop=self.stop,
            poll_interval=0.05,
        )
        self.base = f"{live_server.url}/api/ladders/{self.ladder.pk}"

    def worker(self):
        try:
            while not self.stop.is_set():
                if not run_queued_tasks():
                    time.sleep(0.05)
        finally:
            connection.close()

    def run(self) -> dict:
        started = api(f"{self.base}/run", self.owner_token, "POST", {})
        assert started["dispatch"]["status"] == "running"
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            progress = api(f"{self.base}/progress", self.owner_token)
            if progress["dispatch"]["status"] in ("finished", "needsAttention"):
                return progress
            time.sleep(0.2)
        raise AssertionError(f"the climb did not end: {progress['dispatch']}")

    def wait_for(self, condition, what: str, seconds: float = 30):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.2)
        raise AssertionError(f"waited {seconds} s for {what}")

    def close(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=15)
        self.ladder.refresh_from_db()


def standing_of(progress: dict) -> dict[str, tuple[str, int | None]]:
    rung_ids = [r["id"] for r in progress["dispatch"]["rungs"]]
    return {
        c["key"]: (
            c["status"],
            rung_ids.index(c["currentRung"]) if c["currentRung"] else None,
        )
        for c in progress["climbers"]
    }


def test_a_seeded_fleet_climbs_the_demo_ladder_to_the_standing_its_seed_determines(live_server):
    climb = Climb(live_server, SEED)
    try:
        progress = climb.run()
    finally:
        climb.close()
    assert standing_of(progress) == expected_standing(climb.ladder, SEED)
    assert progress["dispatch"]["runs"]["inFlight"] == 0


def test_every_simulated_run_reports_a_tests_verdict_that_agrees_with_its_rating():
    checklist = [
        {"id": "boots", "critical": True},
        {"id": "goal", "critical": True},
        {"id": "polish", "critical": False},
    ]
    seen = set()
    for n in range(400):
        job = {
            "id": n,
            "cellKey": f"cell-{n % 40}",
            "attempt": 1 + n % 3,
            "case": f"platformer-{1 + n % 8}",
            "engine": "godot",
            "cell": {"model": ["orca-large", "basalt-7b", "quill-2"][n % 3]},
            "combination": {},
        }
        _, result = simulate(DEMO_SEED, job, checklist, n)
        if isinstance(result, Failure):
            continue  # no run is pushed: nothing to judge
        [verdict] = [s for s in result.signals or [] if s["name"] == "tests"]
        assert verdict["kind"] == "verdict" and verdict["tier"] == "verified"
        passing = result.outcome == "completed" and rate(result.record, checklist) in (
            "passable",
            "great",
            "flawless",
        )
        assert verdict["value"] == ("pass" if passing else "fail"), (result, verdict)
        seen.add(verdict["value"])
    assert seen == {"pass", "fail"}


def test_the_demo_data_holds_an_evalset_with_journaled_runs_and_an_applied_proposal():
    call_command("seed_demo")
    call_command("seed_demo")  # idempotent: a second run adds nothing
    ladder = Ladder.objects.get(name="Platformer climb")
    [evalset] = Evalset.objects.all()
    assert len(evalset.pins) == 8, evalset.pins
    assert {p["case"] for p in evalset.pins} == {f"platformer-{n}" for n in range(1, 9)}
    assert evalset.runs.count() >= 3
    proposals = {p.title: p for p in visible_proposals(ladder.owner)}
    measured = [p for p in proposals.values() if gate_status(p) == "measuring"]
    assert len(measured) == 1, proposals
    [proposal] = measured
    assert proposal.applied_at is not None and proposal.has_baseline_run
    assert not proposal.results.exists()  # measured during the demo, not by the seed
    assert any(gate_status(p) == "skipped" for p in proposals.values())  # the gate says why
    assert Proposal.objects.count() == len(proposals)

    console = Client()
    console.force_login(ladder.owner)
    evalsets = text_of(console.get(reverse("evalsets:evalsets")))
    assert "Platformer rungs" in evalsets and "no run journaled" not in evalsets
    listed = text_of(console.get(reverse("evalsets:proposals")))
    assert all(title in listed for title in proposals), listed


def test_the_demo_climb_shows_every_part(live_server):
    """At the demo's seed: every run reads success or failure under the owner's acceptance
    rule; the flaky simulated host blocks a climber with the default retry count, so the
    dispatch needs attention; and the verify gate measures the seeded proposal's verdict."""
    climb = Climb(live_server, DEMO_SEED)
    try:
        default = LadderConfigSerializer().fields["retryCount"].default
        assert climb.ladder.retry_count == default == Ladder._meta.get_field("retry_count").default
        progress = climb.run()
        proposal = Proposal.objects.get(applied_at__isnull=False, authored_by="llm")
        climb.wait_for(
            lambda: OutcomeResult.objects.filter(proposal=proposal).exists(),
            "the verify gate's verdict",
        )
    finally:
        climb.close()

    assert standing_of(progress) == expected_standing(climb.ladder, DEMO_SEED)
    assert progress["dispatch"]["status"] == "needsAttention"
    blocked = [c for c in progress["climbers"] if c["status"] == "blocked"]
    assert blocked, progress["climbers"]
    board = Client()
    board.force_login(climb.ladder.owner)
    shown = text_of(board.get(reverse("console:board", args=[climb.ladder.pk])))
    assert "Needs attention" in shown
    assert "simulated host gpu-box-3 lost the connection" in shown, shown

    results = {run_outcome(run).outcome.result for run in Run.objects.all()}
    assert results == {"success", "failure"}, results

    result = OutcomeResult.objects.get(proposal=proposal)
    assert result.verdict == "regressed"
    assert proposal.revert_draft is not None
    page = text_of(board.get(reverse("evalsets:proposal", args=[proposal.pk])))
    assert "Revert draft" in page and "regressed" in page, page
