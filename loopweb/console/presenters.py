"""Shapes the ladder selectors' plain data for the console's templates.

Nothing here decides anything about a ladder: statuses, tallies and counts come from
``ladders.selectors``; this module only words them (seed 004's console wording) and lays them
out as a board.
"""

import hashlib
import json
from dataclasses import dataclass

from ladders.gate import completed as completed_gate
from ladders.statuses import (
    BLOCKED,
    COMPLETED,
    FAILED,
    FAILING,
    LIVE,
    PASSED,
    PENDING,
    RETRYABLE_REASONS,
    RUNNING,
    SKIPPED,
    STOPPED,
    UNLAUNCHABLE,
    UNRATED,
)
from ladders.wording import STATUS_LABELS, status_label  # noqa: F401 - the console's words

#: A blocked climber's reason: its cause and the fix seed 004 names.
BLOCKED_REASONS = {
    UNLAUNCHABLE: ("the combination cannot be launched", "fix the cause, then Retry"),
    FAILING: ("a launch used up its retries with no run", "fix the cause, then Retry"),
    UNRATED: ("completed runs carry no validator rating", "re-push the runs, or Stop"),
}
#: The heading of a group of blocks that share a cause.
BLOCKED_TITLES = {
    UNLAUNCHABLE: "Cannot be launched",
    FAILING: "Launches failing",
    UNRATED: "Runs waiting for a rating",
}

#: The legend's order.
SLOT_STATUSES = (PASSED, FAILED, RUNNING, BLOCKED, PENDING, SKIPPED)
SLOT_SYMBOLS = {
    PASSED: "✓",
    FAILED: "✗",
    RUNNING: "▶",
    BLOCKED: "!",
    PENDING: "·",
    SKIPPED: "–",
}
SLOT_MEANINGS = {
    PASSED: "the gate passed it",
    FAILED: "the gate failed it",
    RUNNING: "the climber's current rung, runs launched or waiting for room",
    BLOCKED: "the climber's current rung, blocked",
    PENDING: "not reached yet",
    SKIPPED: "never to run",
}


#: The board's and the ladders list's counters of runs, defined once: every count of runs the
#: console shows is one of these, and the legend beside the bar says what each means. Executed,
#: not needed and not run (stopped) together are the API's ``done``; the last is shown only for
#: a dispatch a Stop left runs unrun (the API's ``skippedByStop``).
RUN_COUNTERS = {
    "executed": ("executed", "runs the slots hold: launched, finished and counted"),
    "not_needed": ("not needed", "runs a decided or skipped slot will never need"),
    "stopped": (
        "not run (stopped)",
        "runs the Stop left unrun: what the slots it skipped still needed, less the jobs it let"
        " finish",
    ),
    "under_way": (
        "under way",
        "jobs launched and not finished: queued, pending, dispatched, starting or running",
    ),
    "left": ("left", "runs not launched yet"),
}


def counters(bar: dict) -> list[dict]:
    """The bar's counts, each with its word and meaning, in ``RUN_COUNTERS`` order."""
    return [
        {"key": key, "label": label, "meaning": meaning, "count": bar[key]}
        for key, (label, meaning) in RUN_COUNTERS.items()
        if bar[key] is not None
    ]


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def human_list(items) -> str:
    """``a``, ``a and b``, ``a, b and c``: a list as a sentence says it."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def pin_text(rung: dict) -> str:
    text = f"{rung['case']}@{rung['version']}"
    if rung.get("variant") and rung["variant"] != "default":
        text += f" · {rung['variant']}"
    if rung.get("engine"):
        text += f" · engine {rung['engine']}"
    return text


def gate_text(gate: dict) -> str:
    gate = completed_gate(gate)
    threshold = gate["threshold"]
    floor = gate["floor"]
    if threshold.get("fraction") is not None:
        share = f"{threshold['fraction'] * 100:g} %"
        text = f"at least {share} of a rung's runs rated {floor} or better"
    else:
        n = threshold.get("count", 1)
        text = f"at least {plural(n, 'run')} rated {floor} or better"
    return "Pass when " + text


def gate_details(gate: dict) -> list[str]:
    gate = completed_gate(gate)
    return [
        "a build that never loaded counts as broken"
        if gate["unloadedCountsAsBroken"]
        else "a build that never loaded is read at its rating",
        "early stop on: a rung is decided as soon as its outcome is certain"
        if gate["earlyStop"]
        else "early stop off: every run a rung started completes",
    ]


def climb_order_text(axis: str) -> str:
    if axis == "combination":
        return "Climber by climber — one climber goes as far as it gets before the next starts"
    return "Rung by rung — every climber goes up one rung before anyone moves on"


def limit_text(limit: int | None, inherited: int | None = None) -> str:
    if limit is None:
        return f"the account's default ({plural(inherited or 0, 'run')} under way at a time)"
    if limit == 0:
        return "0 — launches nothing; climbs only as far as existing runs take it"
    return f"{plural(limit, 'run')} under way at a time"


def retry_text(n: int) -> str:
    if n == 0:
        return "no automatic retries"
    return f"{plural(n, 'automatic retry', 'automatic retries')} per run"


def tally_items(tally: dict | None) -> list[tuple[str, str]]:
    if not tally:
        return []
    return [
        ("Counted", str(tally["counted"])),
        ("Passing / required", f"{tally['passing']} / {tally['required']}"),
        ("Pending", str(tally["pending"])),
        ("Under way", str(tally["inFlight"])),
        ("Unrated", str(tally["unrated"])),
    ]


@dataclass
class Blocked:
    index: int
    key: str
    label: str
    status_text: str
    reason: str
    cause: str
    fix: str
    problem: str | None
    attempts: int | None
    retryable: bool
    failure: str | None = None


@dataclass
class CauseGroup:
    """Blocked climbers that share a reason and, for a failing block, the same recorded
    failure: the cause is said once, the climbers listed under it."""

    reason: str
    title: str
    cause: str
    fix: str
    failure: str | None
    climbers: list[Blocked]

    @property
    def retryable(self) -> int:
        return sum(1 for c in self.climbers if c.retryable)


def failing_cause(retry_count: int) -> str:
    if retry_count == 0:
        return "a launch failed with no run, and the dispatch allows no automatic retries"
    retries = plural(retry_count, "automatic retry", "automatic retries")
    return f"a launch used up its {retries} with no run"


def failure_text(failure: dict | None) -> str | None:
    """The recorded failure of the job that blocks a climber, in words."""
    if not failure:
        return None
    text = f"Attempt {failure['attempt']} of {failure['attempts']} ended {failure['failure']}"
    detail = (failure.get("detail") or "").strip()
    return f"{text}: {detail}" if detail else f"{text}; the driver gave no detail"


def cause_groups(blocked: list[Blocked]) -> list[CauseGroup]:
    groups: dict[tuple, CauseGroup] = {}
    for climber in blocked:
        key = (climber.reason, climber.cause, climber.problem, climber.failure)
        group = groups.get(key)
        if group is None:
            cause = climber.cause
            if climber.problem:
                cause = f"{cause}: {climber.problem}"
            group = groups[key] = CauseGroup(
                reason=climber.reason,
                title=BLOCKED_TITLES.get(climber.reason, climber.reason),
                cause=cause,
                fix=climber.fix,
                failure=climber.failure,
                climbers=[],
            )
        group.climbers.append(climber)
    return list(groups.values())


def shown_status(climber: dict, live: bool) -> str:
    """The status a climber's row is drawn in: an ended dispatch's climber that was still
    climbing reads stopped (progress says so; a row kept from before it did is drawn so too)."""
    if live or climber["status"] in (COMPLETED, FAILED):
        return climber["status"]
    return STOPPED


def climber_status_text(climber: dict, numbers: dict[str, int], live: bool = True) -> str:
    rung = numbers.get(climber.get("currentRung"), "?")
    status = climber["status"]
    if status == STOPPED or (not live and status in (RUNNING, BLOCKED)):
        return f"Stopped at rung {rung}"
    if status == RUNNING:
        return f"Running rung {rung}"
    if status == BLOCKED:
        return f"Blocked at rung {rung}: {climber.get('blockedReason')}"
    if status == FAILED:
        return f"Failed at rung {rung}"
    return "Completed"


def board(
    progress: dict, *, titles: dict[str, str], config: dict, failures: dict | None = None
) -> dict:
    """The board's view of ``ladder_progress``: header, bar, grid and Needs attention.

    ``config`` holds the ladder's own gate, climb order, limit and retry count, shown until the
    first Run; after it the board shows what the dispatch snapshotted. ``failures`` holds the
    recorded failure blocking each failing climber's current slot, by (rungId, cellKey).
    """
    dispatch = progress["dispatch"]
    status = progress["ladder"]["status"]
    rungs = board_rungs(progress, titles)
    numbers = {r["id"]: r["number"] for r in rungs}
    view = {
        "status": status,
        "status_label": status_label(status),
        "live": status in LIVE,
        # An ended dispatch's board keeps refreshing while the jobs it launched still run.
        "refreshing": status in LIVE or bool(dispatch and dispatch["runs"]["inFlight"]),
        "dispatch": dispatch,
        "rungs": rungs,
        **settings_texts(dispatch, config),
        "blocked": [],
        "cause_groups": [],
        "retryable": 0,
        "numbers": numbers,
        "bar": None,
        "slot_counts": [],
    }
    if not dispatch:
        return view
    targets = {r["id"]: r["target"] for r in rungs}
    executed = sum(executed_runs(c, targets) for c in progress["climbers"])
    view["bar"] = run_bar(dispatch["runs"], executed)
    view["counters"] = counters(view["bar"])
    view["slot_counts"] = slot_count_rows(dispatch["slotCounts"])
    view["blocked"] = blocked_climbers(progress, numbers, failures or {})
    view["cause_groups"] = cause_groups(view["blocked"])
    view["retryable"] = sum(1 for c in view["blocked"] if c.retryable)
    return view


def board_rungs(progress: dict, titles: dict[str, str]) -> list[dict]:
    """The grid's rungs: the dispatch's snapshot once there is one, else the ladder's own, each
    marked stale when the ladder's rung is."""
    dispatch = progress["dispatch"]
    stale = {r["id"] for r in progress["rungs"] if r["stale"]}
    return [
        {
            "id": r["id"],
            "number": i + 1,
            "pin": pin_text(r),
            "title": titles.get(r["case"], r["case"]),
            "target": r.get("target") or r["runs"],
            "stale": r["id"] in stale,
        }
        for i, r in enumerate(dispatch["rungs"] if dispatch else progress["rungs"])
    ]


def settings_texts(dispatch: dict | None, config: dict) -> dict:
    """The header's gate, climb order, limit and retries: the dispatch's snapshot once there is
    one, else the ladder's configuration (its limit with the account's)."""
    if dispatch:
        settings = dispatch
        limit = limit_text(dispatch["runsInFlightLimit"])
    else:
        settings = config
        limit = limit_text(config["runsInFlightLimit"], config.get("accountLimit"))
    return {
        "gate": gate_text(settings["gate"]),
        "gate_details": gate_details(settings["gate"]),
        "climb_order": climb_order_text(settings["outerAxis"]),
        "limit": limit,
        "retries": retry_text(settings["retryCount"]),
    }


def slot_count_rows(counts: dict[str, int]) -> list[dict]:
    """The legend: each slot status with its count, symbol and meaning."""
    return [
        {"status": s, "count": counts.get(s, 0), "symbol": SLOT_SYMBOLS[s], "meaning": m}
        for s, m in SLOT_MEANINGS.items()
    ]


def blocked_climbers(progress: dict, numbers: dict[str, int], failures: dict) -> list[Blocked]:
    """Needs attention: each blocked climber with its cause, fix and the recorded failure that
    blocks its current slot; retryable while the dispatch is live."""
    dispatch = progress["dispatch"]
    live = progress["ladder"]["status"] in LIVE
    blocked = []
    for ci, climber in enumerate(progress["climbers"]):
        reason = climber.get("blockedReason")
        if climber["status"] != BLOCKED or not reason:
            continue
        cause, fix = BLOCKED_REASONS.get(reason, (reason, "Stop"))
        if reason == FAILING:
            cause = failing_cause(dispatch["retryCount"])
        blocked.append(
            Blocked(
                index=ci,
                key=climber["key"],
                label=climber["label"],
                status_text=climber_status_text(climber, numbers, live),
                reason=reason,
                cause=cause,
                fix=fix,
                problem=climber.get("problem"),
                attempts=climber.get("attempts"),
                retryable=reason in RETRYABLE_REASONS and live,
                failure=failure_text(
                    failures.get((climber["currentRung"], climber.get("cellKey")))
                ),
            )
        )
    return blocked


def executed_runs(climber: dict, targets: dict[str, int]) -> int:
    """The runs a climber's slots hold, each slot up to its target."""
    total = 0
    for slot in climber["slots"]:
        tally = climber["tally"] if slot["rung"] == climber["currentRung"] else slot.get("tally")
        if tally:
            total += min(tally["counted"], targets.get(slot["rung"], 0))
    return total


def _pct(n: int, total: int) -> str:
    return f"{100 * n / total:.2f}" if total else "0"


def run_bar(runs: dict | None, executed: int | None = None) -> dict | None:
    """The dispatch's runs in the counters of ``RUN_COUNTERS``, as widths of a stacked bar.
    Without ``executed`` (the ladders list), executed and not needed are shown together as done.
    The runs a Stop left unrun (``skippedByStop``) are part of the API's ``done`` but never
    shown as done: they have a counter and a segment of their own."""
    if not runs:
        return None
    total = runs["total"] or 0
    settled = min(runs["done"], total)  # the API's done: needs no more executing
    stopped = min(runs.get("skippedByStop") or 0, settled)
    done = settled - stopped
    under_way = min(runs["inFlight"], max(total - settled, 0))
    left = max(total - settled - under_way, 0)
    bar = {
        "total": total,
        "done": done,
        "in_flight": runs["inFlight"],
        "under_way": under_way,
        "left": left,
        "executed": None,
        "not_needed": None,
        "stopped": stopped or None,
        # Of the executed: runs from before the Run, read again and not launched (nor paid) again.
        "reused": runs.get("reused") or None,
        "done_pct": _pct(done, total),
        "executed_pct": _pct(done, total),
        "not_needed_pct": "0",
        "stopped_pct": _pct(stopped, total),
        "flight_pct": _pct(under_way, total),
    }
    unrun = f"{stopped} not run (stopped), " if stopped else ""
    if executed is not None:
        executed = min(executed, done)
        bar.update(
            executed=executed,
            not_needed=done - executed,
            executed_pct=_pct(executed, total),
            not_needed_pct=_pct(done - executed, total),
        )
        bar["text"] = (
            f"{executed} executed, {done - executed} not needed, {unrun}{under_way} under way, "
            f"{left} left, of {plural(total, 'run')}"
        )
    else:
        bar["text"] = (
            f"{done} of {plural(total, 'run')} done, {unrun}{under_way} under way, {left} left"
        )
    return bar


#: Where reused runs came from, as a Run's message names them.
REUSED_FROM = {"hand": "launched by hand", "outside": "pushed without a job"}


def what_a_run_did(reused: dict, runs: dict) -> str:
    """What pressing Run did, as its message says it: the jobs its first pass launched, the runs
    from before it that its slots read again (and where from), and the runs left to launch; with
    nothing launched and nothing left, how to measure afresh."""
    sources = []
    for source in reused.get("from", []):
        where = REUSED_FROM.get(source["kind"]) or f"from dispatch {source.get('dispatch')}"
        sources.append(f"{source['runs']} {where}")
    reused_runs = reused.get("runs", 0)
    launched = runs.get("inFlight", 0)
    left = max(runs.get("total", 0) - runs.get("done", 0) - launched, 0)
    said = (
        f"Run started: {plural(launched, 'job')} launched, {plural(reused_runs, 'run')} reused"
        + (f" ({human_list(sources)})" if sources else "")
        + f", {plural(left, 'run')} left to launch."
    )
    if launched == 0 and left == 0 and reused_runs:
        said += (
            " Every slot was decided by runs from before this Run, which cost nothing again."
            " To measure afresh, pin a new case version on a rung or raise the runs per rung."
        )
    return said


def review_coverage(completed: int, unreviewed: int) -> dict:
    """How many of the dispatch's completed slot runs somebody on the ladder reviewed."""
    reviewed = max(completed - unreviewed, 0)
    return {
        "completed": completed,
        "reviewed": reviewed,
        "unreviewed": unreviewed,
        "pct": f"{100 * reviewed / completed:.2f}" if completed else "0",
    }


def summary_row(row: dict, *, declared: int | None = None, last: dict | None = None) -> dict:
    """One line of the ladders page, from ``ladder_summaries``: before a first Run its climbers
    are those a Run would climb (``declared``); ``last`` is its latest dispatch's times."""
    return {
        **row,
        "status_label": status_label(row["status"]),
        "bar": run_bar(row["runs"]),
        "climbers_shown": row["climbers"] if row["climbers"] is not None else declared,
        "declared": row["climbers"] is None,
        "last": last,
    }


def version_of(*shown) -> str:
    """A short fingerprint of what the board shows: an unchanged board is not re-sent."""
    text = json.dumps(shown, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
