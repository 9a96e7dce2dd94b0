"""Inspect AI evaluations as a driver, end to end: ``loopweb-driver --inspect`` climbs a
two-rung ladder of two Inspect tasks over HTTP, with two combinations mapped to scripted models
(Inspect's mock model: no network). One passes both rungs, the other fails the second."""

import threading
import time
from pathlib import Path

import pytest
from django.db import connection

from ladders import services
from loopweb.driver import cli
from loopweb.runs.models import ApiToken, Run
from tests.factories import CaseFactory, CaseVersionFactory, CombinationFactory, UserFactory
from tests.ladders.builders import climber_of, make_ladder, progress_of
from tests.tasks import run_queued_tasks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("live")]


def worker(stop: threading.Event) -> None:
    """The task worker: launch passes, as ``db_worker`` runs them."""
    try:
        while not stop.is_set():
            if not run_queued_tasks():
                time.sleep(0.05)
    finally:
        connection.close()


def test_two_scripted_models_climb_a_ladder_of_two_inspect_tasks(live_server, owner, tmp_path):
    fleet = UserFactory(username="inspector", role="driver")
    _, token = ApiToken.objects.issue(fleet)
    sums = CaseVersionFactory(
        case=CaseFactory(slug="inspect-sums"),
        checklist=[{"id": "match", "text": "Every sum is right.", "critical": True}],
    )
    capitals = CaseVersionFactory(
        case=CaseFactory(slug="inspect-capitals"),
        checklist=[
            {"id": "match", "text": "Every capital is named exactly.", "critical": True},
            {"id": "includes", "text": "Every answer names the capital.", "critical": False},
        ],
    )
    steady = CombinationFactory(harness="inspect", model="steady")
    shaky = CombinationFactory(harness="inspect", model="shaky")
    ladder = make_ladder(owner, [sums, capitals], [steady, shaky], retryCount=0)
    services.start_dispatch(ladder=ladder, by=owner)

    args = cli.parser().parse_args(
        ["--url", live_server.url, "--inspect", "tests.inspect.scripted",
         "--inspect-log-dir", str(tmp_path), "--inspect-log-url", "https://logs.example/evals/"]
    )  # fmt: skip
    stop = threading.Event()
    threads = [threading.Thread(target=worker, args=(stop,), daemon=True)]
    threads[0].start()
    threads += cli.start(
        live_server.url, token, execute=cli.inspect_executor(args), poll=0.05, stop=stop
    )
    try:
        deadline = time.monotonic() + 60
        while progress_of(ladder)["dispatch"]["status"] == "running":
            assert time.monotonic() < deadline, progress_of(ladder)
            time.sleep(0.1)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=15)

    progress = progress_of(ladder)
    assert progress["dispatch"]["status"] == "finished"
    first, second = (r["id"] for r in progress["rungs"])
    assert climber_of(progress, steady.key)["status"] == "completed"
    assert [s["status"] for s in climber_of(progress, steady.key)["slots"]] == ["passed"] * 2
    failed = climber_of(progress, shaky.key)
    assert (failed["status"], failed["currentRung"]) == ("failed", second)
    assert [s["status"] for s in failed["slots"]] == ["passed", "failed"]

    runs = {
        (run.combination.model, run.case): run for run in Run.objects.select_related("combination")
    }
    ratings = {key: run.validator_rating for key, run in runs.items()}
    assert ratings == {
        ("steady", "inspect-sums"): "flawless",
        ("steady", "inspect-capitals"): "flawless",
        ("shaky", "inspect-sums"): "flawless",
        ("shaky", "inspect-capitals"): "broken",
    }
    logs = {path.name for path in Path(tmp_path).glob("*.eval")}
    assert len(logs) == 4
    for run in runs.values():
        assert run.outcome == "completed" and run.counted
        metrics = run.record["metrics"]
        # Two samples, one call each: 12 input and 3 output tokens a call, at $2 and $10 a
        # million.
        assert (metrics["input_tokens"], metrics["output_tokens"]) == (24, 6)
        assert metrics["usd_micros"] == 108
        [artifact] = run.record["artifacts"]
        prefix, name = artifact["url"].rsplit("/", 1)
        assert (artifact["name"], prefix, name in logs) == (
            "inspect-log",
            "https://logs.example/evals",
            True,
        )
