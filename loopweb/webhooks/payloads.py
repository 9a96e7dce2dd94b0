"""What each event says: the JSON ``data`` a receiver needs without calling back, and the same
news as one line of chat. Built in the transaction that records the event, from the objects
the announcement carries; every builder returns ``(data, text)``.
"""

from django.conf import settings
from django.urls import reverse

from ladders import statuses
from loopweb.webhooks import events as e

#: A payload lists at most this many climbers; ``climbersOmitted`` says how many more there were.
MAX_CLIMBERS = 100
DETAIL_CHARS = 500


def link(path: str) -> str:
    return settings.LOOPWEB_PUBLIC_URL.rstrip("/") + path


def moment(value) -> str | None:
    return value.isoformat() if value is not None else None


def chat(text: str) -> str:
    """Text as Slack's mrkdwn reads it: &, < and > escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _username(user) -> str | None:
    return user.get_username() if user is not None else None


# Ladders --------------------------------------------------------------------------------------


def ladder_part(ladder) -> dict:
    return {
        "id": ladder.pk,
        "name": ladder.name,
        "owner": _username(ladder.owner),
        "url": link(reverse("console:board", args=[ladder.pk])),
    }


def dispatch_part(dispatch) -> dict:
    return {
        "id": dispatch.dispatch_id,
        "status": dispatch.status,
        "startedAt": moment(dispatch.started_at),
        "endedAt": moment(dispatch.ended_at),
        "startedBy": _username(dispatch.started_by),
        "stoppedBy": _username(dispatch.stopped_by),
        "rungs": len(dispatch.snapshot.get("rungs", [])),
    }


def _board_link(ladder_data: dict) -> str:
    return f"<{ladder_data['url']}|Open the board>"


def dispatch_started(ladder, dispatch, by, previous, climbers: int) -> tuple[dict, str]:
    ladder = ladder_part(ladder)
    data = {
        "ladder": ladder,
        "dispatch": {**dispatch_part(dispatch), "climbers": climbers},
        "previousDispatch": previous,
        "startedBy": _username(by),
        "url": ladder["url"],
    }
    who = f" by {chat(_username(by))}" if by is not None else ""
    text = (
        f"▶ *{chat(ladder['name'])}* started{who}: {climbers} climber(s) on "
        f"{data['dispatch']['rungs']} rung(s). {_board_link(ladder)}"
    )
    return data, text


def _reached(slots: list[dict]) -> int:
    """The highest rung passed (1-based), 0 for none."""
    return max(
        (i + 1 for i, slot in enumerate(slots) if slot["status"] == statuses.PASSED), default=0
    )


def final_climbers(final) -> list[dict]:
    return [
        {
            "key": c["body"]["key"],
            "label": c["body"]["label"],
            "status": c["body"]["status"],
            "blockedReason": c["body"].get("blockedReason"),
            "reached": _reached(c["body"]["slots"]),
        }
        for c in final.climbers
    ]


def dispatch_ended(ladder, dispatch, final, by, cancel_running, cancelled) -> tuple[str, dict, str]:
    ladder = ladder_part(ladder)
    climbers = final_climbers(final)
    stopped = dispatch.status == statuses.STOPPED
    data = {
        "ladder": ladder,
        "dispatch": dispatch_part(dispatch),
        "slotCounts": final.slot_counts,
        "climbers": climbers[:MAX_CLIMBERS],
        "climbersOmitted": max(0, len(climbers) - MAX_CLIMBERS),
        "url": ladder["url"],
    }
    rungs = data["dispatch"]["rungs"]
    best = max(climbers, key=lambda c: c["reached"], default=None)
    best_text = (
        f" Highest: {chat(best['label'])} reached rung {best['reached']} of {rungs}."
        if best is not None and best["reached"]
        else ""
    )
    counts = final.slot_counts
    if stopped:
        data.update(stoppedBy=_username(by), cancelRunning=cancel_running, cancelled=cancelled)
        who = f" by {chat(_username(by))}" if by is not None else ""
        jobs = "running and queued" if cancel_running else "queued"
        text = (
            f"■ *{chat(ladder['name'])}* was stopped{who}: {cancelled} {jobs} job(s) "
            f"cancelled.{best_text} {_board_link(ladder)}"
        )
        return e.DISPATCH_STOPPED, data, text
    text = (
        f"✓ *{chat(ladder['name'])}* finished: {counts.get('passed', 0)} rung slot(s) passed, "
        f"{counts.get('failed', 0)} failed.{best_text} {_board_link(ladder)}"
    )
    return e.DISPATCH_FINISHED, data, text


def blocked_climber(row, standing, rungs: list[dict], failure: dict | None) -> dict:
    """A blocked climber: its reason, the rung it is stuck on and, when failing, the failure."""
    rung_id = next((s.rung for s in standing.slots if s.status == statuses.BLOCKED), None)
    rung_id = rung_id or standing.current_rung
    number = next((i + 1 for i, r in enumerate(rungs) if r["id"] == rung_id), None)
    rung = rungs[number - 1] if number else None
    return {
        "key": row.combination_key,
        "label": standing.label,
        "reason": standing.blocked_reason,
        "problem": standing.problem,
        "attempts": standing.attempts,
        "rung": None
        if rung is None
        else {
            "id": rung["id"],
            "number": number,
            "case": rung["case"],
            "version": rung["version"],
            "variant": rung["variant"],
            "engine": rung.get("engine"),
        },
        "failure": failure,
    }


def failure_part(job: dict) -> dict:
    """The failing slot's last attempt, from ``Job.objects.values(...)`` (see receivers)."""
    return {
        "job": job["id"],
        "attempt": job["attempt"],
        "failure": job["failure"],
        "detail": job["failure_detail"][:DETAIL_CHARS],
        "finishedAt": moment(job["finished_at"]),
        "run": job["run_id"],
    }


def _why(climber: dict) -> str:
    reason = climber["reason"] or "blocked"
    failure = climber["failure"]
    if failure:
        detail = f": {failure['detail']}" if failure["detail"] else ""
        return f"{reason} — {failure['failure'] or 'failed'}{detail}"
    if climber["problem"]:
        return f"{reason} — {climber['problem']}"
    return reason


def _rung_text(climber: dict) -> str:
    rung = climber["rung"]
    return f" on rung {rung['number']} ({rung['case']}@{rung['version']})" if rung else ""


def climber_blocked(ladder, dispatch, climber: dict) -> tuple[dict, str]:
    ladder = ladder_part(ladder)
    data = {
        "ladder": ladder,
        "dispatch": dispatch_part(dispatch),
        "climber": climber,
        "url": ladder["url"],
    }
    text = (
        f"⚠ {chat(climber['label'])} is blocked{chat(_rung_text(climber))} of "
        f"*{chat(ladder['name'])}*: {chat(_why(climber))}. {_board_link(ladder)}"
    )
    return data, text


def needs_attention(ladder, dispatch, climbers: list[dict], blocked: int) -> tuple[dict, str]:
    ladder = ladder_part(ladder)
    data = {
        "ladder": ladder,
        "dispatch": dispatch_part(dispatch),
        "blocked": blocked,
        "climbers": climbers[:MAX_CLIMBERS],
        "climbersOmitted": max(0, len(climbers) - MAX_CLIMBERS),
        "url": ladder["url"],
    }
    first = climbers[0]
    more = f" (and {len(climbers) - 1} more)" if len(climbers) > 1 else ""
    text = (
        f"⚠ *{chat(ladder['name'])}* needs attention: {chat(first['label'])} is blocked"
        f"{chat(_rung_text(first))}: {chat(_why(first))}{more}. Retry it from the board. "
        f"{_board_link(ladder)}"
    )
    return data, text


# Proposals ------------------------------------------------------------------------------------


def proposal_part(proposal) -> dict:
    return {
        "id": proposal.pk,
        "title": proposal.title,
        "owner": _username(proposal.owner),
        "authoredBy": proposal.authored_by,
        "appliedAt": moment(proposal.applied_at),
        "evalset": {"hash": proposal.evalset.hash, "name": proposal.evalset.name},
        "url": link(reverse("evalsets:proposal", args=[proposal.pk])),
    }


def result_part(result) -> dict:
    return {
        "id": result.pk,
        "checkpoint": result.checkpoint,
        "metric": result.metric,
        "verdict": result.verdict,
        "baseline": result.baseline,
        "current": result.current,
        "tolerance": result.tolerance,
        "bestBefore": result.best_before,
        "cost": None
        if not result.cost_read
        else {
            "read": result.cost_read,
            "baseline": result.cost_baseline,
            "current": result.cost_current,
        },
        "pValue": result.p_value,
        "casesNeeded": result.cases_needed,
        "measuredAt": moment(result.measured_at),
    }


def _proposal_event(opened, key: str, part: dict) -> tuple[dict, dict, dict]:
    """The data of a proposal event: the proposal, the result, and what the result opened."""
    proposal = proposal_part(opened.proposal)
    result = result_part(opened.result)
    part = {"id": opened.pk, **part, "createdAt": moment(opened.created_at)}
    data = {"proposal": proposal, "result": result, key: part, "url": proposal["url"]}
    return data, proposal, result


def proposal_regressed(draft) -> tuple[dict, str]:
    data, proposal, result = _proposal_event(
        draft, "revertDraft", {"severity": draft.severity, "reason": draft.reason}
    )
    text = (
        f"↓ Proposal *{chat(proposal['title'])}* regressed: {chat(result['metric'])} "
        f"{result['baseline']:g} → {result['current']:g}. A revert draft is open "
        f"(severity {draft.severity}). <{proposal['url']}|Open the proposal>"
    )
    return data, text


def proposal_held_costlier(flag) -> tuple[dict, str]:
    data, proposal, _ = _proposal_event(flag, "advisoryFlag", {"reason": flag.reason})
    text = (
        f"$ Proposal *{chat(proposal['title'])}* held but costs more: {chat(flag.reason)} "
        f"<{proposal['url']}|Open the proposal>"
    )
    return data, text


def proposal_inconclusive(result) -> tuple[dict, str]:
    proposal = proposal_part(result.proposal)
    part = result_part(result)
    data = {"proposal": proposal, "result": part, "url": proposal["url"]}
    needed = (
        f" It needs more evidence: about {result.cases_needed} cases per run would detect"
        " this difference at 80 % power."
        if result.cases_needed
        else ""
    )
    text = (
        f"? Proposal *{chat(proposal['title'])}* is inconclusive: {chat(part['metric'])} "
        f"{part['baseline']:g} → {part['current']:g}, which chance alone could explain "
        f"(p = {result.p_value:.2g}); no revert draft.{needed} "
        f"<{proposal['url']}|Open the proposal>"
    )
    return data, text


# Ping -----------------------------------------------------------------------------------------


def ping(subscription) -> tuple[dict, str]:
    url = link(reverse("webhooks_console:detail", args=[subscription.pk]))
    data = {
        "webhook": {
            "id": subscription.pk,
            "url": subscription.url,
            "events": subscription.events,
            "format": subscription.format,
        },
        "message": "A test delivery from Loopweb: this endpoint is registered.",
        "url": url,
    }
    text = f"Loopweb test delivery: this endpoint is registered. <{url}|Open the webhook>"
    return data, text
