"""``loopweb-ci``: gate a pull request on a ladder (docs/ci.md). Standard library only.

    export LOOPWEB_TOKEN=…   # the ladder owner's API token; never given on the command line
    loopweb-ci run --url https://loopweb.example --ladder 12 --junit ladder.xml

``run`` presses Run (or joins the dispatch already running), prints a line each time the
progress changes, waits for the dispatch to end, and compares its record with the baseline
(``--baseline latest``: the newest record before it, or a record id) through the history's
compare, significance included. It exits 0 when nothing regressed, 1 on a regression
(``--fail-on``: ``down`` a climber significantly lower, ``inconclusive`` also one lower but not
significantly, ``any-failed`` also any climber that did not reach the top), and 2 when it could
not decide: the dispatch needs attention or was stopped, ``--timeout`` passed, the server was
lost. It writes a Markdown summary to ``$GITHUB_STEP_SUMMARY`` (appended) or else stdout, and
with ``--junit FILE`` a JUnit report: one test case per climber and rung.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loopweb.driver.client import Driver, DriverError

OK, REGRESSION, UNDECIDED = 0, 1, 2
FAIL_ON = ("down", "inconclusive", "any-failed")
LIVE = ("running", "needsAttention")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="loopweb-ci", description=__doc__.split("\n\n")[0])
    commands = p.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a ladder and compare it with a baseline")
    run.add_argument("--url", required=True, help="the Loopweb server")
    run.add_argument("--ladder", required=True, type=int, help="the ladder's id")
    run.add_argument(
        "--baseline", default="latest", help="latest (the record before this run) or a record id"
    )
    run.add_argument(
        "--version",
        help="pin every rung to this case version first (made from the pinned one if missing),"
        " e.g. the commit under test: new cells, so the runs are measured afresh",
    )
    run.add_argument("--fail-on", choices=FAIL_ON, default="down", help="what fails the build")
    run.add_argument("--alpha", type=float, default=0.05, help="the compare's significance level")
    run.add_argument("--timeout", type=float, default=3600, help="seconds to wait for the end")
    run.add_argument("--poll", type=float, default=2.0, help="seconds between progress reads")
    run.add_argument("--junit", metavar="FILE", help="write a JUnit XML report here")
    return p


@dataclass
class Outcome:
    """What a run of the ladder came to, for the exit code, the summary and the report."""

    code: int
    headline: str
    ladder: dict = field(default_factory=dict)
    progress: dict | None = None
    record: dict | None = None
    baseline: dict | None = None
    compare: dict | None = None
    regressed: dict[str, str] = field(default_factory=dict)  # climber key -> why
    notes: list[str] = field(default_factory=list)


class Session:
    """The calls ``run`` makes, through the driver client (its retries and backoff)."""

    def __init__(self, url: str, token: str, ladder: int, stop: threading.Event):
        self.client = Driver(url, token, stop=stop, retries=6, max_backoff=10.0)
        self.base = f"/api/ladders/{ladder}"

    def get(self, path: str, **query: Any) -> Any:
        suffix = f"?{urllib.parse.urlencode(query)}" if query else ""
        return self.client.call("GET", f"{self.base}{path}{suffix}")

    def pin(self, version: str) -> None:
        """Pin every rung to ``version``, adding that version of a case where it is missing as a
        copy of the version the rung pinned (its checklist, variants and engines)."""
        config = self.client.call("GET", f"{self.base}/")
        if all(rung["version"] == version for rung in config["rungs"]):
            return
        for rung in config["rungs"]:
            if rung["version"] != version:
                self.add_version(rung["case"], rung["version"], version)
                rung["version"] = version
        self.client.call("PUT", f"{self.base}/", config)

    def add_version(self, case: str, source: str, version: str) -> None:
        slug = urllib.parse.quote(case, safe="")
        versions = {
            v["version"]: v for v in self.client.call("GET", f"/api/cases/{slug}/")["versions"]
        }
        if version in versions:
            return
        copied = {k: versions[source][k] for k in ("legacy", "variants", "engines", "checklist")}
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        self.client.call(
            "POST",
            f"/api/cases/{slug}/versions/",
            {**copied, "version": version, "ingestedAt": now},
        )

    def press_run(self, version: str | None = None) -> tuple[dict, bool]:
        """The progress of the dispatch this run follows, and whether it was running already."""
        progress = self.get("/progress")
        if progress["ladder"]["status"] in LIVE:
            return progress, True
        if version:
            self.pin(version)
        try:
            return self.client.call("POST", f"{self.base}/run", {}), False
        except DriverError as exc:
            if exc.status != 409:  # someone else pressed Run a moment ago: join it
                raise
            return self.get("/progress"), True

    def record_of(self, dispatch: str) -> dict | None:
        for summary in self.get("/history")["results"]:
            if summary["dispatch"] == dispatch:
                return self.get(f"/history/{summary['id']}")
        return None

    def baseline(self, wanted: str, dispatch: str) -> dict | None:
        if wanted != "latest":
            return self.get(f"/history/{int(wanted)}")
        return next((r for r in self.get("/history")["results"] if r["dispatch"] != dispatch), None)


def progress_line(progress: dict) -> str:
    dispatch = progress.get("dispatch") or {}
    runs = dispatch.get("runs") or {}
    counts = dispatch.get("slotCounts") or {}
    slots = " · ".join(f"{k} {v}" for k, v in counts.items() if v)
    return (
        f"{progress['ladder']['status']}: runs {runs.get('done', 0)}/{runs.get('total', 0)} done,"
        f" {runs.get('inFlight', 0)} in flight · {slots or 'no slots'}"
    )


def follow(
    session: Session, first: dict, deadline: float, poll: float, say: Callable[[str], None]
) -> dict:
    """Read progress until the dispatch ends, needs attention or the deadline passes."""
    progress, last = first, None
    while True:
        line = progress_line(progress)
        if line != last:
            say(f"[{time.strftime('%H:%M:%S')}] {line}")
            last = line
        if progress["ladder"]["status"] not in ("running",):
            return progress
        if time.monotonic() + poll > deadline:
            return progress
        time.sleep(poll)
        progress = session.get("/progress")


def judge(compare: dict, record: dict, fail_on: str) -> dict[str, str]:
    """The climbers that fail the build, and why."""
    failing = {}
    for climber in compare.get("climbers", []) if compare else []:
        verdict = (climber.get("significance") or {}).get("verdict", climber["change"])
        heights = _heights(climber)
        if verdict == "down":
            failing[climber["key"]] = f"down {heights}{_p(climber)}"
        elif fail_on != "down" and verdict == "inconclusive" and climber["change"] == "down":
            failing[climber["key"]] = f"lower, inconclusive {heights}{_p(climber)}"
    if fail_on == "any-failed":
        for climber in record["climbers"]:
            if climber["status"] != "completed" and climber["key"] not in failing:
                failing[climber["key"]] = f"{climber['status']} at rung {climber['reached'] + 1}"
    return failing


def run(args: argparse.Namespace, token: str, say: Callable[[str], None]) -> Outcome:
    stop = threading.Event()
    deadline = time.monotonic() + args.timeout
    timer = threading.Timer(args.timeout, stop.set)
    timer.daemon = True
    timer.start()
    session = Session(args.url, token, args.ladder, stop)
    try:
        return _run(session, args, deadline, say)
    except DriverError as exc:
        if exc.status in (401, 403, 404):
            return Outcome(UNDECIDED, f"the server refused: {exc}")
        if exc.status is None or exc.status >= 500:
            return Outcome(UNDECIDED, f"the server was lost: {exc}")
        if stop.is_set():
            return Outcome(UNDECIDED, f"timed out after {args.timeout:g} s")
        return Outcome(UNDECIDED, f"the server answered {exc}")
    finally:
        timer.cancel()


def _run(session: Session, args: argparse.Namespace, deadline: float, say) -> Outcome:
    progress, joined = session.press_run(args.version)
    dispatch = progress["dispatch"]["id"]
    ladder = progress["ladder"]
    say(
        f"{'joining the running dispatch' if joined else 'Run pressed:'} {dispatch}"
        f" of ladder {ladder['id']} ({ladder['name']})"
    )
    if joined and args.version:
        say(f"the ladder was running already: its rungs were not pinned to {args.version}")
    baseline = session.baseline(args.baseline, dispatch)
    progress = follow(session, progress, deadline, args.poll, say)
    status = progress["ladder"]["status"]
    if status == "needsAttention":
        outcome = Outcome(UNDECIDED, "the dispatch needs attention", ladder, progress)
        outcome.notes = blocked_notes(session, progress)
        return outcome
    if status == "running":
        return Outcome(UNDECIDED, f"timed out after {args.timeout:g} s", ladder, progress)
    record = session.record_of(dispatch)
    if record is None or status == "stopped":
        return Outcome(UNDECIDED, f"the dispatch was {status}", ladder, progress, record)
    compare = None
    if baseline is not None:
        compare = session.get("/compare", a=baseline["id"], b=record["id"], alpha=args.alpha)
    regressed = judge(compare or {}, record, args.fail_on)
    code = REGRESSION if regressed else OK
    notes = []
    runs = progress["dispatch"].get("runs") or {}
    reused = runs.get("reused", progress["dispatch"].get("reused", 0))
    read = sum(
        (slot.get("tally") or {}).get("counted", 0)
        for climber in record["climbers"]
        for slot in climber["slots"]
    )
    if read and reused >= read:
        notes.append(
            "Every run was reused from earlier runs of the same cells: nothing new was measured."
            " Pin a new case version (--version) to measure a change (docs/ci.md)."
        )
    headline = (
        f"Regression: {len(regressed)} climber(s) ({args.fail_on})" if regressed
        else "No regression" + ("" if baseline else " (no baseline record: nothing to compare)")
    )  # fmt: skip
    return Outcome(code, headline, ladder, progress, record, baseline, compare, regressed, notes)


def blocked_notes(session: Session, progress: dict) -> list[str]:
    notes = []
    for climber in progress["climbers"]:
        if climber["status"] != "blocked":
            continue
        note = f"{climber['label']}: blocked ({climber.get('blockedReason')})"
        if climber.get("attempts"):
            note += f" after {climber['attempts']} attempt(s)"
        if climber.get("problem"):
            note += f": {climber['problem']}"
        elif climber.get("cellKey"):
            jobs = session.client.call(
                "GET", "/api/jobs/?" + urllib.parse.urlencode({"cellKey": climber["cellKey"]})
            )
            failures = [j.get("failure") for j in jobs.get("results", []) if j.get("failure")]
            if failures:
                note += f", last failure {failures[0]}"
        notes.append(note)
    return notes


# The summary and the report -----------------------------------------------------------------


def summary(outcome: Outcome) -> str:
    name = outcome.ladder.get("name", "")
    lines = [f"## Loopweb: {name}", "", f"**{outcome.headline}**", ""]
    if outcome.record and outcome.baseline:
        lines += [f"Record {outcome.record['id']} against record {outcome.baseline['id']}.", ""]
    if outcome.compare:
        lines += ["| climber | before | now | change | verdict | p |", "|---|---|---|---|---|---|"]
        for c in outcome.compare["climbers"]:
            sig = c.get("significance") or {}
            mark = " ❌" if c["key"] in outcome.regressed else ""
            before = c["a"]["reached"] if c.get("a") else "–"
            now = c["b"]["reached"] if c.get("b") else "–"
            lines.append(
                f"| {c['label']}{mark} | {before} | {now} | {c['change']} |"
                f" {sig.get('verdict', '')} | {_number(sig.get('adjustedP'))} |"
            )
        lines.append("")
        inconclusive = [
            c["label"]
            for c in outcome.compare["climbers"]
            if (c.get("significance") or {}).get("verdict") == "inconclusive"
        ]
        if inconclusive:
            lines += [
                f"Inconclusive: {', '.join(inconclusive)} moved, but not by more than chance "
                "explains; more runs per rung would decide (docs/ci.md).",
                "",
            ]
        for diff in outcome.compare.get("configurationDiffers") or []:
            lines.append(f"- The configuration differs: {_differs(diff)}")
    elif outcome.record:
        for c in outcome.record["climbers"]:
            lines.append(f"- {c['label']}: {c['status']}, reached rung {c['reached']}")
    if outcome.regressed:
        lines += ["", "Regressions:"]
        labels = _labels(outcome)
        lines += [f"- {labels.get(k, k)}: {why}" for k, why in outcome.regressed.items()]
    if outcome.notes:
        title = "Needs attention:" if outcome.headline.endswith("needs attention") else "Notes:"
        lines += ["", title] + [f"- {note}" for note in outcome.notes]
    return "\n".join(lines).rstrip() + "\n"


def junit(outcome: Outcome) -> str:
    """One test case per climber and rung of the new record; a failure where it regressed."""
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", name=f"ladder {outcome.ladder.get('name', '')}")
    tests = failures = skipped = 0
    record = outcome.record or {}
    rungs = record.get("rungs", [])
    before = {
        c["key"]: (c.get("a") or {}).get("reached", 0)
        for c in (outcome.compare or {}).get("climbers", [])
    }
    for climber in record.get("climbers", []):
        for number, (rung, slot) in enumerate(zip(rungs, climber["slots"], strict=False), 1):
            tests += 1
            name = f"rung {number}: {rung['case']}@{rung['version']}"
            case = ET.SubElement(suite, "testcase", classname=climber["label"], name=name)
            why = outcome.regressed.get(climber["key"])
            regressed = why and before.get(climber["key"], 0) >= number > climber["reached"]
            failed = slot["status"] in ("failed", "blocked")
            if regressed or (failed and why):
                failures += 1
                message = (
                    f"{slot['status']} now; passed in record {outcome.baseline['id']}"
                    if (regressed and outcome.baseline)
                    else f"{slot['status']}"
                )
                ET.SubElement(case, "failure", message=f"{message} ({why})")
            elif slot["status"] not in ("passed", "failed", "blocked"):
                skipped += 1
                ET.SubElement(case, "skipped", message=f"not reached ({slot['status']})")
    if outcome.code == UNDECIDED:
        tests += 1
        case = ET.SubElement(suite, "testcase", classname="loopweb", name="the dispatch ended")
        ET.SubElement(case, "error", message=outcome.headline)
    suite.set("tests", str(tests))
    suite.set("failures", str(failures))
    suite.set("errors", str(int(outcome.code == UNDECIDED)))
    suite.set("skipped", str(skipped))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def _differs(diff: dict) -> str:
    a, b = diff.get("a"), diff.get("b")
    if isinstance(a, dict) and isinstance(b, dict):
        keys = [k for k in {**a, **b} if a.get(k) != b.get(k)]
        a, b = ({k: side.get(k) for k in keys} for side in (a, b))
    return f"{diff['what']}: {json.dumps(a)} → {json.dumps(b)}"


def _labels(outcome: Outcome) -> dict[str, str]:
    climbers = (outcome.record or {}).get("climbers", []) + (outcome.compare or {}).get(
        "climbers", []
    )
    return {c["key"]: c["label"] for c in climbers}


def _heights(climber: dict) -> str:
    return f"({climber['a']['reached']} → {climber['b']['reached']})"


def _p(climber: dict) -> str:
    p = (climber.get("significance") or {}).get("adjustedP")
    return f", p = {_number(p)}" if p is not None else ""


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}"


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    token = os.environ.get("LOOPWEB_TOKEN")
    if not token:
        parser().error("set LOOPWEB_TOKEN to the ladder owner's API token")
    if args.baseline != "latest" and not args.baseline.isdigit():
        parser().error("--baseline takes latest or a record id")

    def say(line: str) -> None:
        print(line, flush=True)

    outcome = run(args, token, say)
    text = summary(outcome)
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(text)
    else:
        print(text, end="")
    if args.junit:
        with open(args.junit, "w", encoding="utf-8") as handle:
            handle.write(junit(outcome))
    say(f"loopweb-ci: {outcome.headline} (exit {outcome.code})")
    return outcome.code


if __name__ == "__main__":
    sys.exit(main())
