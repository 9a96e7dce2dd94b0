"""``loopweb-ci run`` against a live server: it presses Run (or joins the running dispatch),
follows the progress, compares the new record with the baseline and exits 0 (no regression),
1 (a regression, named in the summary and the JUnit report) or 2 (could not decide)."""

import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

import pytest
from django.db import connection

from ladders import services
from ladders.selectors import ladder_config_json
from loopweb.driver import Driver, Failure, RunResult, ci
from loopweb.runs.models import ApiToken, CaseVersion
from tests.factories import CaseVersionFactory
from tests.ladders.builders import climbers, make_ladder, versions, work
from tests.runs.helpers import BROKEN, PERFECT
from tests.tasks import run_queued_tasks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("live")]

RUNS = 4  # per rung: 4 of 4 passing against 0 of 4 is significant (Fisher's p = 0.029)


class Fleet:
    """Drivers over HTTP and the task worker, in threads, running a script: the record each
    (model, case) pushes, or a failure for every job."""

    def __init__(self, url: str, token: str, script: dict | None = None, *, fail: bool = False):
        self.script = script or {}
        self.fail = fail
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self.worker, daemon=True)]
        for _ in range(4):
            driver = Driver(url, token, poll_interval=0.05, stop=self.stop)
            self.threads.append(
                threading.Thread(target=driver.serve, args=(self.execute,), daemon=True)
            )

    def execute(self, job) -> RunResult:
        if self.fail:
            raise Failure("infrastructure", "the host is gone")
        return RunResult(record=self.script.get((job.combination["model"], job.case), PERFECT))

    def worker(self) -> None:
        try:
            while not self.stop.is_set():
                if not run_queued_tasks():
                    time.sleep(0.05)
        finally:
            connection.close()

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=15)


@pytest.fixture
def setup(live_server, owner, driver, run_tasks, monkeypatch, tmp_path):
    """A two-rung ladder of two climbers, RUNS runs a rung, climbed once by both to the top
    (the baseline record); the CI's environment: the owner's token, a step summary file."""
    ladder = make_ladder(
        owner, versions(2), climbers(2), runsPerCell=RUNS, retryCount=0, runsInFlightLimit=8
    )
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PERFECT)
    assert ladder.dispatch.__class__.objects.get(ladder=ladder).status == "finished"
    _, owner_token = ApiToken.objects.issue(owner)
    _, driver_token = ApiToken.objects.issue(driver)
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("LOOPWEB_TOKEN", owner_token)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return {
        "url": live_server.url,
        "ladder": ladder,
        "driver_token": driver_token,
        "owner_token": owner_token,
        "summary": summary,
        "junit": tmp_path / "ladder.xml",
    }


def repin(ladder, version: str) -> None:
    """Pin the ladder's rungs to ``version`` of their cases (ingested now)."""
    config = ladder_config_json(ladder, set())
    del config["id"], config["owner"]
    for rung in config["rungs"]:
        rung.pop("stale", None)
        source = CaseVersion.objects.get(case__slug=rung["case"], version=rung["version"])
        CaseVersionFactory(case=source.case, version=version, checklist=source.checklist)
        rung["version"] = version
    services.save_ladder(owner=ladder.owner, data=config, ladder=ladder)


def args(setup, *more: str) -> list[str]:
    return ["run", "--url", setup["url"], "--ladder", str(setup["ladder"].pk), "--poll", "0.1",
            "--junit", str(setup["junit"]), *more]  # fmt: skip


def test_a_record_that_climbs_lower_exits_1_naming_the_regression(setup):
    """The console script itself, with its token from the environment only."""
    script = os.path.join(os.path.dirname(sys.executable), "loopweb-ci")
    environment = {
        "PATH": os.environ["PATH"],
        "LOOPWEB_TOKEN": os.environ["LOOPWEB_TOKEN"],
        "GITHUB_STEP_SUMMARY": str(setup["summary"]),
        "HTTP_PROXY": "http://127.0.0.1:9",
        "NO_PROXY": "127.0.0.1,localhost",
    }
    with Fleet(setup["url"], setup["driver_token"], {("m2", "step-2"): BROKEN}):
        done = subprocess.run(
            [script, *args(setup, "--version", "2", "--timeout", "60")],
            env=environment, capture_output=True, text=True, timeout=90,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert setup["owner_token"] not in done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert any("runs 16/16 done" in line for line in lines), done.stdout
    assert len(lines) == len(set(lines))  # one line per change
    summary = setup["summary"].read_text()
    assert "## Loopweb: climb" in summary
    assert "Regression" in summary and "m2 via aider (acme)" in summary
    assert "2 → 1" in summary and "down" in summary
    assert "Record" in summary and "reused" not in summary

    suite = ET.parse(setup["junit"]).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("4", "1")
    [failed] = [case for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failed.get("classname") == "m2 via aider (acme)"
    assert failed.get("name").startswith("rung 2: step-2@2")
    assert "passed" in failed.find("failure").get("message")


def test_an_unchanged_climb_exits_0_and_a_running_dispatch_is_joined(setup, capsys):
    ladder = setup["ladder"]
    repin(ladder, "2")
    services.start_dispatch(ladder=ladder, by=ladder.owner)  # already running: loopweb-ci joins
    with Fleet(setup["url"], setup["driver_token"]):
        code = ci.main(args(setup, "--timeout", "60"))
    out = capsys.readouterr().out
    assert code == 0, out + setup["summary"].read_text()
    assert "joining the running dispatch" in out
    summary = setup["summary"].read_text()
    assert "No regression" in summary
    suite = ET.parse(setup["junit"]).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("4", "0")


def test_any_failed_fails_on_a_rung_failed_in_the_baseline_too(setup, driver, run_tasks, capsys):
    ladder = setup["ladder"]
    script = {("m1", "step-1"): BROKEN}

    def record(job):
        return script.get((job.combination.model, job.case), PERFECT)

    repin(ladder, "2")
    services.start_dispatch(ladder=ladder, by=ladder.owner)  # a baseline where m1 fails rung 1
    work(driver, run_tasks, record)
    with Fleet(setup["url"], setup["driver_token"], script):
        # Run again on the same cells: every run is reused. Nothing changed (down: 0), but m1
        # still fails rung 1.
        assert ci.main(args(setup, "--timeout", "60")) == 0
        assert ci.main(args(setup, "--fail-on", "any-failed", "--timeout", "60")) == 1
    summary = setup["summary"].read_text()
    assert "m1 via aider (acme): failed at rung 1" in summary
    assert "nothing new was measured" in summary
    suite = ET.parse(setup["junit"]).getroot().find("testsuite")
    # m1 failed rung 1 and never reached rung 2; m2 climbed both.
    assert (suite.get("failures"), suite.get("skipped")) == ("1", "1")


def test_a_dispatch_that_needs_attention_exits_2_within_the_timeout(setup, capsys):
    started = time.monotonic()
    with Fleet(setup["url"], setup["driver_token"], fail=True):
        code = ci.main(args(setup, "--version", "2", "--timeout", "45"))
    assert code == 2
    assert time.monotonic() - started < 45
    summary = setup["summary"].read_text()
    assert "Needs attention" in summary and "blocked (failing)" in summary
    assert "infrastructure" in summary


def test_a_dispatch_still_running_at_the_timeout_exits_2(setup, capsys):
    started = time.monotonic()
    code = ci.main(args(setup, "--version", "2", "--timeout", "2"))  # no driver: nothing moves
    assert code == 2
    assert time.monotonic() - started < 10
    assert "timed out" in setup["summary"].read_text()


def test_the_token_comes_from_the_environment_only(monkeypatch, capsys):
    monkeypatch.delenv("LOOPWEB_TOKEN", raising=False)
    with pytest.raises(SystemExit) as exited:
        ci.main(["run", "--url", "http://127.0.0.1:9", "--ladder", "1"])
    assert exited.value.code == 2
    assert "LOOPWEB_TOKEN" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        ci.main(["run", "--url", "http://127.0.0.1:9", "--ladder", "1", "--token", "x"])
