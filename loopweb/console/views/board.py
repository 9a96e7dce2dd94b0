"""One ladder's progress board, the endpoint it refreshes itself from, and Run / Stop / Retry.

Every action calls the service the API calls, then redirects back to the board (post, redirect,
get), where the message area says what happened. The board polls every
``LOOPWEB_BOARD_POLL_MS`` milliseconds (an optional setting, 2000 by default) while its
dispatch runs, and stops when it ends.
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django_htmx.http import trigger_client_event

from ladders import services, shared_progress
from ladders.access import controls
from ladders.models import Dispatch, DispatchStatus
from ladders.statuses import FAILING
from loopweb.console import grid, presenters, queries
from loopweb.console.access import controlled_ladder, signed_in, viewable_ladder
from loopweb.console.presenters import human_list, plural
from loopweb.console.views.messages import report_invalid
from loopweb.console.views.runs import open_slot
from loopweb.console.waiting import board_waits
from loopweb.runs.errors import Conflict


def poll_ms() -> int:
    return int(getattr(settings, "LOOPWEB_BOARD_POLL_MS", 2000))


def board_context(request, ladder, board=None) -> dict:
    board = board or shared_progress.read(ladder)
    progress = board.body
    dispatch = progress["dispatch"]
    slugs = {r["case"] for r in progress["rungs"]}
    if dispatch:
        slugs |= {r["case"] for r in dispatch["rungs"]}
    titles = queries.case_titles(slugs)
    config = {
        "gate": ladder.gate,
        "outerAxis": ladder.outer_axis,
        "runsInFlightLimit": ladder.runs_in_flight_limit,
        "retryCount": ladder.retry_count,
        "accountLimit": None,
    }
    declared = []
    if dispatch is None:
        if ladder.runs_in_flight_limit is None:
            config["accountLimit"] = queries.account_limit(ladder.owner_id)
        declared = queries.declared_climbers(ladder)
    control = controls(request.user, ladder)
    failures = {}
    if dispatch:
        failing = [
            (c["currentRung"], c.get("cellKey"))
            for c in progress["climbers"]
            if c.get("blockedReason") == FAILING
        ]
        failures = queries.blocking_failures(ladder.pk, dispatch["id"], failing)
    b = presenters.board(progress, titles=titles, config=config, failures=failures)
    if dispatch:
        completed = len(frozenset().union(*(part.completed for part in board.parts)))
        b["reviews"] = presenters.review_coverage(completed, dispatch["runsUnreviewed"])
    # Read with the board, never captured: a budget fills and empties with other ladders' jobs.
    waits = board_waits(ladder.pk, progress) if dispatch else []
    # What the page shows besides the board's progress: its version names both.
    extra = presenters.version_of(
        control, config, declared, sorted(failures.items()), [vars(w) for w in waits]
    )
    return {
        "ladder": ladder,
        "board": board,
        "b": b,
        "control": control,
        "declared": declared,
        "extra": extra,
        "waits": waits,
        "version": f"{board.version}~{extra}",
        "poll_ms": poll_ms(),
    }


def with_rows(context: dict, only=None, oob=False) -> dict:
    b = context["b"]
    rows = grid.rows_html(context["board"].parts, b["numbers"], live=b["live"], only=only, oob=oob)
    return {**context, "rows": mark_safe(rows)}  # noqa: S308 - built from escaped parts


#: Stands for the board's rows while the page around them is rendered (escaped text cannot
#: make it): a large board's rows are megabytes, which every template level would copy again.
ROWS = "<!--loopweb:rows-->"


def render_board(request, template: str, context: dict) -> HttpResponse:
    """``render`` with the context's rows put in place once the rest of the page is rendered."""
    page = render_to_string(template, {**context, "rows": mark_safe(ROWS)}, request)  # noqa: S308
    head, found, tail = page.partition(ROWS)
    if not found:  # a ladder not run yet has no grid
        return HttpResponse(page)
    return HttpResponse([head, context["rows"], tail])


def same_board(held: str, current: str) -> bool:
    """Whether the board the page holds shows what the current one shows (versions end with a
    digest of what they show)."""
    return held.rpartition(".")[2] == current.rpartition(".")[2] != ""


@signed_in
@require_safe
def board(request, pk: int):
    """The board; ``?slot=<climber index>/<rung id>`` opens that slot's side panel."""
    ladder = viewable_ladder(request.user, pk)
    context = with_rows(board_context(request, ladder))
    context["slot"] = open_slot(ladder, request.GET.get("slot", ""))
    return render_board(request, "console/board.html", context)


@signed_in
@require_safe
@gzip_page  # BREACH-safe: its CSRF token is masked anew in every response, no input echoed
def board_refresh(request, pk: int):
    """What changed on the board since the version the page holds, for its own polling: 204 when
    nothing did (so an unchanged board is not swapped under the reader's focus); the rows of the
    climbers that changed and the figures, swapped in place, when the version can be followed;
    else the whole board."""
    ladder = viewable_ladder(request.user, pk)
    context = board_context(request, ladder)
    held = request.GET.get("v", "")
    progress_version, _, extra = held.partition("~")
    if extra == context["extra"] and same_board(progress_version, context["board"].version):
        return HttpResponse(status=204)
    if extra == context["extra"]:
        changed = shared_progress.changed_since(context["board"], progress_version)
        if changed is not None:
            delta = with_rows(context, only=changed, oob=True)
            return _changed(render_board(request, "console/_board_delta.html", delta))
    return _changed(
        render_board(request, "console/_board.html", {**with_rows(context), "oob": True})
    )


def _changed(response: HttpResponse) -> HttpResponse:
    """A refresh that changed the board tells the page (``board-changed``): the standing below
    it asks for itself then, so the grid and the chart never show two standings."""
    return trigger_client_event(response, "board-changed")


@signed_in
@require_POST
def run(request, pk: int):
    ladder = controlled_ladder(request.user, pk)
    try:
        services.start_dispatch(ladder=ladder, by=request.user)
    except Conflict as exc:
        messages.error(request, exc.detail)
    except ValidationError as exc:
        report_invalid(request, exc, "Run refused.")
    else:
        board = shared_progress.read(ladder.pk)
        reused = board.dispatch.reused if board.dispatch is not None else {}
        runs = (board.figures or {}).get("runs", {})
        messages.success(request, presenters.what_a_run_did(reused, runs))
    return redirect("console:board", pk=ladder.pk)


@signed_in
@require_POST
def stop(request, pk: int):
    ladder = controlled_ladder(request.user, pk)
    return _stop(request, ladder, cancel_running=False)


def _stop(request, ladder, *, cancel_running: bool):
    try:
        cancelled = services.stop_dispatch(
            ladder=ladder, cancel_running=cancel_running, by=request.user
        )
    except Conflict as exc:
        messages.error(request, exc.detail)
    else:
        jobs = plural(cancelled, "job")
        messages.success(
            request,
            f"Dispatch stopped: {jobs} cancelled, including those dispatched, starting or running."
            if cancel_running
            else f"Dispatch stopped: {jobs} cancelled. "
            "Jobs already dispatched, starting or running will finish.",
        )
    return redirect("console:board", pk=ladder.pk)


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def stop_cancel_running(request, pk: int):
    """Stop and cancel running: those jobs are partly or wholly paid for, so the console asks
    first, saying how many it will cancel; the POST is the confirmation."""
    ladder = controlled_ladder(request.user, pk)
    if request.method == "POST":
        return _stop(request, ladder, cancel_running=True)
    dispatch = Dispatch.objects.filter(ladder=ladder).only("status").first()
    return render(
        request,
        "console/stop_confirm.html",
        {
            "ladder": ladder,
            "running": dispatch is not None and dispatch.status == DispatchStatus.RUNNING,
            "counts": queries.jobs_to_cancel(ladder),
        },
    )


@signed_in
@require_POST
def retry(request, pk: int):
    ladder = controlled_ladder(request.user, pk)
    key = request.POST.get("climber", "")
    try:
        services.retry_climber(ladder=ladder, combination_key=key, by=request.user)
    except Conflict as exc:
        messages.error(request, exc.detail)
    except ValidationError as exc:
        report_invalid(request, exc, "Retry refused.")
    else:
        label = queries.climber_label(ladder.dispatch, key)
        messages.success(request, f"Retried {label}: its rung is launched again.")
    return redirect("console:board", pk=ladder.pk)


@signed_in
@require_POST
def retry_all(request, pk: int):
    ladder = controlled_ladder(request.user, pk)
    try:
        keys = services.retry_blocked(ladder=ladder, by=request.user)
    except Conflict as exc:
        messages.error(request, exc.detail)
    else:
        labels = queries.climber_labels(ladder.dispatch, keys)
        messages.success(
            request,
            f"Retried {plural(len(keys), 'blocked climber')}: {human_list(labels)}. "
            "Their rungs are launched again.",
        )
    return redirect("console:board", pk=ladder.pk)
