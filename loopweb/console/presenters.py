"""Shapes the ladder selectors' plain data for the console's templates.

Nothing here decides anything about a ladder: statuses, tallies and counts come from
``ladders.selectors``; this module only words them (seed 004's console wording) and lays them
out as a board.
"""

import hashlib
import json
from dataclasses import dataclass

from ladders.statuses import (
    BLOCKED,
    COMPLETED,
    FAILED,
    FAILING,
    FINISHED,
    LIVE,
    NEEDS_ATTENTION,
    NOT_RUN_YET,
    PASSED,
    PENDING,
    RETRYABLE_REASONS,
    RUNNING,
    SKIPPED,
    STOPPED,
    UNLAUNCHABLE,
    UNRATED,
)

STATUS_LABELS = {
    NOT_RUN_YET: "Not run yet",
    RUNNING: "Running",
    NEEDS_ATTENTION: "Needs attention",
    FINISHED: "Finished",
    STOPPED: "Stopped",
}

#: A blocked climber's reason: its cause and the fix seed 004 names.
BLOCKED_REASONS = {
    UNLAUNCHABLE: ("the combination cannot be launched", "fix the cause, then Retry"),
    FAILING: ("a launch used up its retries with no run", "fix the cause, then Retry"),
    UNRATED: ("completed runs carry no validator rating", "re-push the runs, or Stop"),
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


def status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)


def plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def pin_text(rung: dict) -> str:
    text = f"{rung['case']}@{rung['version']}"
    if rung.get("variant") and rung["variant"] != "default":
        text += f" · {rung['variant']}"
    if rung.get("engine"):
        text += f" · engine {rung['engine']}"
    return text


def gate_text(gate: dict) -> str:
    threshold = gate.get("threshold") or {"count": 1}
    floor = gate.get("floor", "scuffed")
    if threshold.get("fraction") is not None:
        share = f"{threshold['fraction'] * 100:g} %"
        text = f"at least {share} of a rung's runs rated {floor} or better"
    else:
        n = threshold.get("count", 1)
        text = f"at least {plural(n, 'run')} rated {floor} or better"
    return "Pass when " + text


def gate_details(gate: dict) -> list[str]:
    return [
        "a build that never loaded counts as broken"
        if gate.get("unloadedCountsAsBroken", True)
        else "a build that never loaded is read at its rating",
        "early stop on: a rung is decided as soon as its outcome is certain"
        if gate.get("earlyStop")
        else "early stop off: every run a rung started completes",
    ]


def climb_order_text(axis: str) -> str:
    if axis == "combination":
        return "Climber by climber — one climber goes as far as it gets before the next starts"
    return "Rung by rung — every climber goes up one rung before anyone moves on"


def limit_text(limit: int | None, inherited: int | None = None) -> str:
    if limit is None:
        return f"the account's default ({plural(inherited or 0, 'run')} in flight)"
    if limit == 0:
        return "0 — launches nothing; climbs only as far as existing runs take it"
    return f"{plural(limit, 'run')} in flight"


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
        ("In flight", str(tally["inFlight"])),
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


def shown_status(climber: dict, live: bool) -> str:
    """The status a climber's row is drawn in: an ended dispatch's running or blocked climber is
    drawn stopped."""
    if live or climber["status"] in (COMPLETED, FAILED):
        return climber["status"]
    return STOPPED


def climber_status_text(climber: dict, numbers: dict[str, int], live: bool = True) -> str:
    rung = numbers.get(climber.get("currentRung"), "?")
    status = climber["status"]
    if not live and status in (RUNNING, BLOCKED):
        return f"Stopped at rung {rung}"
    if status == RUNNING:
        return f"Running rung {rung}"
    if status == BLOCKED:
        return f"Blocked at rung {rung}: {climber.get('blockedReason')}"
    if status == FAILED:
        return f"Failed at rung {rung}"
    return "Completed"


def board(progress: dict, *, titles: dict[str, str], config: dict) -> dict:
    """The board's view of ``ladder_progress``: header, bar, grid and Needs attention.

    ``config`` holds the ladder's own gate, climb order, limit and retry count, shown until the
    first Run; after it the board shows what the dispatch snapshotted.
    """
    dispatch = progress["dispatch"]
    status = progress["ladder"]["status"]
    stale = {r["id"] for r in progress["rungs"] if r["stale"]}
    rungs_source = dispatch["rungs"] if dispatch else progress["rungs"]
    rungs = [
        {
            "id": r["id"],
            "number": i + 1,
            "pin": pin_text(r),
            "title": titles.get(r["case"], r["case"]),
            "target": r.get("target") or r["runs"],
            "stale": r["id"] in stale,
        }
        for i, r in enumerate(rungs_source)
    ]
    numbers = {r["id"]: r["number"] for r in rungs}
    if dispatch:
        settings = dispatch
        limit = limit_text(dispatch["runsInFlightLimit"])
    else:
        settings = config
        limit = limit_text(config["runsInFlightLimit"], config.get("accountLimit"))
    view = {
        "status": status,
        "status_label": status_label(status),
        "live": status in LIVE,
        # An ended dispatch's board keeps refreshing while the jobs it launched still run.
        "refreshing": status in LIVE or bool(dispatch and dispatch["runs"]["inFlight"]),
        "dispatch": dispatch,
        "rungs": rungs,
        "gate": gate_text(settings["gate"]),
        "gate_details": gate_details(settings["gate"]),
        "climb_order": climb_order_text(settings["outerAxis"]),
        "limit": limit,
        "retries": retry_text(settings["retryCount"]),
        "blocked": [],
        "numbers": numbers,
        "bar": None,
        "slot_counts": [],
    }
    if not dispatch:
        return view
    view["bar"] = run_bar(dispatch["runs"])
    counts = dispatch["slotCounts"]
    view["slot_counts"] = [
        {"status": s, "count": counts.get(s, 0), "symbol": SLOT_SYMBOLS[s], "meaning": m}
        for s, m in SLOT_MEANINGS.items()
    ]
    for ci, climber in enumerate(progress["climbers"]):
        reason = climber.get("blockedReason")
        if climber["status"] == BLOCKED and reason:
            cause, fix = BLOCKED_REASONS.get(reason, (reason, "Stop"))
            view["blocked"].append(
                Blocked(
                    index=ci,
                    key=climber["key"],
                    label=climber["label"],
                    status_text=climber_status_text(climber, numbers, view["live"]),
                    reason=reason,
                    cause=cause,
                    fix=fix,
                    problem=climber.get("problem"),
                    attempts=climber.get("attempts"),
                    retryable=reason in RETRYABLE_REASONS and status in LIVE,
                )
            )
    return view


def run_bar(runs: dict | None) -> dict | None:
    """Runs done / total with the runs in flight, as widths of a stacked bar."""
    if not runs:
        return None
    total = runs["total"] or 0
    flight = min(runs["inFlight"], max(total - runs["done"], 0))
    return {
        "total": total,
        "done": runs["done"],
        "in_flight": runs["inFlight"],
        "done_pct": f"{100 * runs['done'] / total:.2f}" if total else "0",
        "flight_pct": f"{100 * flight / total:.2f}" if total else "0",
        "text": f"{runs['done']} of {plural(total, 'run')} done, {runs['inFlight']} in flight",
    }


def summary_row(row: dict) -> dict:
    """One line of the ladders page, from ``ladder_summaries``."""
    return {**row, "status_label": status_label(row["status"]), "bar": run_bar(row["runs"])}


def version_of(*shown) -> str:
    """A short fingerprint of what the board shows: an unchanged board is not re-sent."""
    text = json.dumps(shown, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
