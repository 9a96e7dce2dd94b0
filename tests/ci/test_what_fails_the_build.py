"""What fails the build, read from a compare and a record alone (no server): ``--fail-on`` and
the JUnit report's test cases; and a server that cannot be reached is exit 2."""

import xml.etree.ElementTree as ET

import pytest

from loopweb.driver import ci


def climber(key: str, a: int, b: int, verdict: str, p: float | None = None) -> dict:
    change = "up" if b > a else "down" if b < a else "same"
    return {"key": key, "label": f"{key} via aider (acme)", "a": {"reached": a},
            "b": {"reached": b}, "change": change,
            "significance": {"verdict": verdict, "pValue": p, "adjustedP": p}}  # fmt: skip


def slots(*statuses: str) -> list[dict]:
    return [{"status": s} for s in statuses]


COMPARE = {
    "climbers": [
        climber("sure", 3, 1, "down", 0.01),
        climber("unsure", 3, 2, "inconclusive", 0.5),
        climber("better", 1, 2, "inconclusive", 0.5),
        climber("flat", 2, 2, "same"),
    ]
}
RECORD = {
    "id": 9,
    "rungs": [{"case": f"step-{i}", "version": "7"} for i in (1, 2, 3)],
    "climbers": [
        {"key": "sure", "label": "sure via aider (acme)", "reached": 1, "status": "failed",
         "slots": slots("passed", "failed", "skipped")},
        {"key": "unsure", "label": "unsure via aider (acme)", "reached": 2, "status": "failed",
         "slots": slots("passed", "passed", "failed")},
        {"key": "better", "label": "better via aider (acme)", "reached": 2, "status": "failed",
         "slots": slots("passed", "passed", "failed")},
        {"key": "flat", "label": "flat via aider (acme)", "reached": 2, "status": "blocked",
         "slots": slots("passed", "passed", "blocked")},
    ],
}  # fmt: skip


@pytest.mark.parametrize(
    ("fail_on", "failing"),
    [
        ("down", ["sure"]),
        ("inconclusive", ["sure", "unsure"]),  # a climb up never fails the build
        ("any-failed", ["sure", "unsure", "better", "flat"]),
    ],
)
def test_fail_on_says_which_climbers_fail_the_build(fail_on, failing):
    assert list(ci.judge(COMPARE, RECORD, fail_on)) == failing


def test_a_compare_without_significance_reads_the_change():
    bare = {"climbers": [{**c, "significance": None} for c in COMPARE["climbers"]]}
    assert list(ci.judge(bare, RECORD, "down")) == ["sure", "unsure"]


def test_the_report_fails_the_rungs_a_climber_passed_before_and_not_now():
    outcome = ci.Outcome(
        ci.REGRESSION, "Regression", {"name": "climb"}, record=RECORD, baseline={"id": 8},
        compare=COMPARE, regressed=ci.judge(COMPARE, RECORD, "down"),
    )  # fmt: skip
    suite = ET.fromstring(ci.junit(outcome)).find("testsuite")
    failed = [
        (case.get("classname").split()[0], case.get("name"))
        for case in suite.iter("testcase")
        if case.find("failure") is not None
    ]
    assert failed == [("sure", "rung 2: step-2@7"), ("sure", "rung 3: step-3@7")]
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("12", "2", "0")
    summary = ci.summary(outcome)
    assert "| sure via aider (acme) ❌ | 3 | 1 | down | down | 0.01 |" in summary
    assert "Inconclusive: unsure via aider (acme), better via aider (acme)" in summary


def test_a_server_that_cannot_be_reached_is_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("LOOPWEB_TOKEN", "secret-token")
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    report = tmp_path / "report.xml"
    code = ci.main(
        ["run", "--url", "http://127.0.0.1:9", "--ladder", "1", "--timeout", "1",
         "--junit", str(report)]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert code == 2
    assert "the server was lost" in out and "secret-token" not in out
    suite = ET.parse(report).getroot().find("testsuite")
    assert suite.get("errors") == "1"
