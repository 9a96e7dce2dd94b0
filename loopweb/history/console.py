"""The console's history pages: the standing on the board (a height chart, cost, activity), the
history of a ladder (records, heights across them) and the compare of two. Server-rendered; the
board's section refreshes itself while its dispatch runs, and reads fine without scripts."""

from urllib.parse import urlencode

from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_safe

from ladders.models import Dispatch, DispatchStatus
from loopweb import stats
from loopweb.console import grid, queries
from loopweb.console.access import signed_in, viewable_ladder
from loopweb.console.presenters import (
    climber_status_text,
    pin_text,
    shown_status,
    status_label,
    tally_items,
    version_of,
)
from loopweb.console.runs import run_cards
from loopweb.history import charts, records, selectors
from loopweb.history.models import Action
from loopweb.runs.models import Run
from loopweb.runs.numbers import typed_integer

PAGE_SIZE = 20
LINES = 10  # records on the heights-across-records chart, unless asked otherwise
ACTIONS = {
    Action.RUN: "pressed Run",
    Action.STOP: "pressed Stop",
    Action.STOP_CANCEL_RUNNING: "pressed Stop and cancel running",
    Action.RETRY: "retried",
    Action.CREATED: "created the ladder",
    Action.EDITED: "edited the configuration",
    Action.RUNGS_REORDERED: "reordered the rungs",
}


def sort_of(request) -> str:
    sort = request.GET.get("sort", "height")
    return sort if sort in charts.SORTS else "height"


def activity_rows(ladder) -> list[dict]:
    return [
        {
            "at": a.at,
            "who": a.by_name or "a script",
            "what": ACTIONS.get(a.action, a.action),
            "detail": a.detail,
            "dispatch": a.dispatch_id,
            "action": a.action,
            "id": a.pk,
        }
        for a in selectors.activity_of(ladder)
    ]


def chart_context(record, sort: str, ident: str, *, keep: str = "", anchor: str = "") -> dict:
    """A bar chart of the record, sorted; ``keep`` is the query its sort links keep."""
    svg, bars = charts.bar_chart(record, sort, ident=ident)
    rows = [
        {"bar": b, "cost": charts.cost_text(b.totals), "usd": b.totals["usdMicros"]} for b in bars
    ]
    return {
        "svg": svg,
        "bars": rows,
        "sort": sort,
        "sorts": charts.SORTS,
        "keep": keep,
        "anchor": anchor or ident,
        "rungs": len(record.snapshot["rungs"]),
        "totals": record.totals,
        "total_text": charts.cost_text(record.totals),
    }


def standing_context(request, ladder) -> dict:
    """What the board's standing section shows: the latest dispatch's heights and cost, and
    the ladder's activity. ``version`` names what it shows."""
    dispatch = Dispatch.objects.filter(ladder=ladder).first()
    activity = activity_rows(ladder)
    context = {"ladder": ladder, "activity": activity, "dispatch": dispatch}
    shown = [[a["id"] for a in activity]]
    if dispatch is not None:
        record = records.live(dispatch)
        context.update(
            record=record,
            live=dispatch.status == DispatchStatus.RUNNING,
            chart=chart_context(record, sort_of(request), "board-height-chart", anchor="standing"),
        )
        shown += [record.dispatch_id, record.status, record.climbers, record.totals]
    context["version"] = version_of(*shown)
    return context


@signed_in
@require_safe
@gzip_page
def board_standing(request, pk: int):
    """The board's standing section alone, asked for at every change of the board: 204 while it
    shows what the page holds (``v``), so an open table is not swapped shut. Compressed: a
    200-climber standing is 118 KB of HTML and 11 KB gzipped, asked for by every viewer of a busy
    board every poll."""
    ladder = viewable_ladder(request.user, pk)
    context = standing_context(request, ladder)
    if request.GET.get("v") == context["version"]:
        return HttpResponse(status=204)
    return render(request, "history/_standing.html", context)


def _count(raw, default: int, low: int, high: int) -> int:
    value = typed_integer(raw)
    return default if value is None else max(low, min(high, value))


@signed_in
@require_safe
def history(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    page = Paginator(selectors.records_of(ladder), PAGE_SIZE).get_page(request.GET.get("page"))
    n = _count(request.GET.get("n"), LINES, 2, 50)
    recent = selectors.recent(ladder, n)
    chosen = None
    raw = request.GET.get("record")
    if (record_id := typed_integer(raw, low=1)) is not None:
        chosen = selectors.record_of(ladder, record_id)
    chosen = chosen or (recent[-1] if recent else None)
    context = {
        "ladder": ladder,
        "page": page,
        "rows": [
            {
                "record": r,
                "status_label": status_label(r.status),
                "cost": charts.cost_text(r.totals),
            }
            for r in page
        ],
        "n": n,
        "recent": recent,
        "chosen": chosen,
        "nav": "ladders",
    }
    if recent:
        svg, lines = charts.line_chart(recent)
        context.update(lines_svg=svg, lines=lines)
    if chosen is not None:
        context["chart"] = chart_context(
            chosen,
            sort_of(request),
            "record-height-chart",
            keep=f"record={chosen.pk}",
            anchor="record-chart",
        )
    return render(request, "history/history.html", context)


def _grid_climber(climber: dict) -> dict:
    """A record's climber as the board's grid draws one: its current rung's tally beside it."""
    current = next((s for s in climber["slots"] if s["rung"] == climber.get("currentRung")), None)
    return {**climber, "tally": current["tally"] if current else None}


def _record_or_404(request, pk: int, record_id: int):
    ladder = viewable_ladder(request.user, pk)
    record = selectors.record_of(ladder, record_id)
    if record is None:
        raise Http404("This ladder has no such record.")
    return ladder, record


def _counted_runs(record, index: int, rung_id: str) -> list[int] | None:
    """The ids of the runs a record's slot counted, as its dispatch's standing holds them; None
    when the standing does not keep them (a record written before standings kept their slots'
    runs: the slot counted runs, and the standing lists none)."""
    climbers = record.standing.climbers
    if not 0 <= index < len(climbers):
        return None
    climber = climbers[index]
    for slot, held in zip(climber["body"]["slots"], climber["runs"], strict=True):
        if slot["rung"] == rung_id:
            if not held and (slot.get("tally") or {}).get("counted"):
                return None
            return list(held)
    return None


def record_slot_detail(ladder, record, index: int, rung_id: str) -> dict:
    """What a record's slot panel shows: the slot as the dispatch ended (status, tally, cost)
    and the runs it counted, each a card as on the live board's panel."""
    detail = records.detail_json(record)
    rungs = detail["rungs"]
    number = next((r["number"] for r in rungs if r["id"] == rung_id), None)
    if number is None or not 0 <= index < len(detail["climbers"]):
        raise Http404("This record has no such rung slot.")
    rung, climber = rungs[number - 1], detail["climbers"][index]
    slot = climber["slots"][number - 1]
    numbers = {r["id"]: r["number"] for r in rungs}
    held = _counted_runs(record, index, rung_id)
    cards = []
    if held:
        found = Run.objects.filter(pk__in=held).select_related("job").in_bulk()
        runs = [(found[i], "counted") for i in held if i in found]
        cards = run_cards(runs, queries.checklist_for(rung["case"], rung["version"]))
        for card in cards:
            query = urlencode({"ladder": ladder.pk})
            card.link = f"{reverse('console:run-page', args=[card.run.pk])}?{query}"
    return {
        "ladder": ladder,
        "record": record,
        "index": index,
        "rung_id": rung_id,
        "number": number,
        "pin": pin_text(rung),
        "title": queries.case_titles([rung["case"]]).get(rung["case"], rung["case"]),
        "target": rung["runs"],
        "climber": climber,
        "climber_status": climber_status_text(climber, numbers, live=False),
        "climber_shown": shown_status(climber, live=False),
        "status": slot["status"],
        "tally": tally_items(slot["tally"]),
        "pass_rate": stats.pass_rate_text(slot["passRate"]) if slot["tally"] else "",
        "cost": charts.cost_text(slot["totals"]) if slot["totals"] else "",
        "kept": held is not None,
        "held": held or [],
        "cards": cards,
    }


def _open_slot(ladder, record, param: str) -> dict | None:
    """The slot a record page's address names (``<climber index>/<rung id>``), or None."""
    raw, _, rung = param.partition("/")
    index = typed_integer(raw)
    if index is None or not rung:
        return None
    try:
        return record_slot_detail(ladder, record, index, rung)
    except Http404:
        return None


@signed_in
@require_safe
def record_slot(request, pk: int, record_id: int, index: int, rung: str):
    """A record's slot with the runs it counted: the record page's side panel for the page's own
    request, else a page of its own."""
    ladder, record = _record_or_404(request, pk, record_id)
    detail = record_slot_detail(ladder, record, index, rung)
    if request.htmx:
        return render(request, "history/_record_slot.html", {"s": detail, "panel": True})
    return render(
        request, "history/record_slot.html", {"s": detail, "ladder": ladder, "nav": "ladders"}
    )


@signed_in
@require_safe
def record_page(request, pk: int, record_id: int):
    """One record: the ended dispatch's frozen grid, drawn as the live board draws its own; a
    slot opens the runs it counted beside it (``?slot=<climber index>/<rung id>`` opens one)."""
    ladder, record = _record_or_404(request, pk, record_id)
    detail = records.detail_json(record)
    rungs = [{**r, "pin": pin_text(r), "target": r["runs"]} for r in detail["rungs"]]
    numbers = {r["id"]: r["number"] for r in rungs}
    rows = "".join(
        grid.row_html(i, _grid_climber(c), numbers, live=False)
        for i, c in enumerate(detail["climbers"])
    )
    return render(
        request,
        "history/record.html",
        {
            "ladder": ladder,
            "record": record,
            "rungs": rungs,
            "rows": mark_safe(rows),  # noqa: S308 - the grid escapes every value it writes
            "status_label": status_label(record.status),
            "cost": charts.cost_text(record.totals),
            "slot": _open_slot(ladder, record, request.GET.get("slot", "")),
            "nav": "ladders",
        },
    )


def default_sides(ladder) -> tuple[str, str]:
    """The last record against the running dispatch; once none runs, the last two records."""
    latest = [str(pk) for pk in selectors.records_of(ladder).values_list("pk", flat=True)[:2]]
    running = Dispatch.objects.filter(ladder=ladder, status=DispatchStatus.RUNNING).exists()
    if running:
        return (latest[0] if latest else "", records.CURRENT)
    if len(latest) == 2:
        return latest[1], latest[0]
    return (latest[0], latest[0]) if latest else ("", "")


def _pin_text(pin: dict) -> str:
    text = f"{pin['case']}@{pin['version']}"
    if pin.get("variant") not in (None, "default"):
        text += f" ({pin['variant']})"
    if pin.get("engine"):
        text += f" on {pin['engine']}"
    return text


DIFFERENCE_NAMES = {
    "rungs": "Rungs",
    "runsPerRung": "Runs per rung",
    "gate.floor": "Gate floor",
    "gate.threshold": "Gate threshold",
    "gate.unloadedCountsAsBroken": "Unloaded builds count as broken",
    "gate.earlyStop": "Early stop",
    "retryCount": "Automatic retries",
    "outerAxis": "Climb order",
    "runsInFlightLimit": "Runs in flight limit",
}


def _value_text(value) -> str:
    if isinstance(value, dict) and "case" in value:
        return _pin_text(value)
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items())
    if value is None:
        return "none"
    return str(value)


def difference_text(difference: dict) -> str:
    """One configuration difference as the compare page says it: ``Rung 1: a@1 → a@2``."""
    what, a, b = difference["what"], difference["a"], difference["b"]
    if what == "climbers":
        parts = []
        if a:
            parts.append(f"only in A: {', '.join(a)}")
        if b:
            parts.append(f"only in B: {', '.join(b)}")
        return f"Climbers: {'; '.join(parts)}"
    if what.startswith("rungs.") and what.endswith(".runs"):
        name = f"Runs on rung {what.split('.')[1]}"
    elif what.startswith("rungs."):
        name = f"Rung {what.split('.')[1]}"
    else:
        name = DIFFERENCE_NAMES.get(what, what)
    return f"{name}: {_value_text(a)} → {_value_text(b)}"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.2g}"


def evidence_text(row: dict) -> str:
    """``rung 1: 0 of 5 passed (0–43 %) → 5 of 5 passed (57–100 %), p = 0.0079``."""
    a, b = (
        stats.pass_rate_text(row[side] if row[side]["counted"] else None) for side in ("a", "b")
    )
    return f"rung {row['rung']}: {a} → {b}, p = {_p(row['pValue'])}"


@signed_in
@require_safe
def compare(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    a, b = default_sides(ladder)
    a = request.GET.get("a", a)
    b = request.GET.get("b", b)
    context = {
        "ladder": ladder,
        "a": a,
        "b": b,
        "choices": selectors.choices(ladder),
        "nav": "ladders",
    }
    alpha, change = request.GET.get("alpha"), request.GET.get("change")
    context["alpha"], context["change"] = alpha or "", change or ""
    status = 200
    try:
        result = selectors.compared(ladder, a, b, alpha, change)
    except ValidationError as exc:
        context["errors"] = [f"{field}: {' '.join(m)}" for field, m in exc.message_dict.items()]
        status = 400 if {"a", "b", "alpha", "change"} & set(request.GET) else 200
    else:
        context["result"] = result
        context["rows"] = [
            {
                **c,
                "a_cost": charts.cost_text(c["totals"]["a"]) if c["totals"]["a"] else "–",
                "b_cost": charts.cost_text(c["totals"]["b"]) if c["totals"]["b"] else "–",
                "usd_difference": charts.usd_change(
                    (c["totals"]["difference"] or {}).get("usdMicros")
                ),
                "evidence": [evidence_text(e) for e in c["evidence"]],
                "verdict": c["significance"]["verdict"],
                "p_value": _p(c["significance"]["pValue"]),
                "adjusted_p": _p(c["significance"]["adjustedP"]),
            }
            for c in result["climbers"]
        ]
        context["differs"] = [difference_text(d) for d in result["configurationDiffers"]]
        context["power"] = result["significance"]["power"]
        difference = result["totals"]["difference"]
        context["total_a"] = charts.cost_text(result["totals"]["a"])
        context["total_b"] = charts.cost_text(result["totals"]["b"])
        context["usd_difference"] = charts.usd_change(difference["usdMicros"])
    return render(request, "history/compare.html", context, status=status)
