"""A rung slot's runs and jobs (the board's side panel, or a page of its own), and one run's page
with its review form."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from ladders.selectors import ladders_for
from loopweb.console import queries
from loopweb.console.access import can_review, signed_in, viewable_ladder
from loopweb.console.forms import ReviewInput
from loopweb.console.runs import attempt_chain, run_cards, slot_detail
from loopweb.console.views.reviewing import save_review
from loopweb.runs.access import reviewable_runs
from loopweb.runs.numbers import typed_integer
from signals_app.selectors import run_signals, visible_run_or_404


def run_link(run_id: int, ladder_id: int, index: int, rung_id: str) -> str:
    """The run's page, with the slot it was reached from for its breadcrumbs."""
    query = urlencode({"ladder": ladder_id, "slot": f"{index}/{rung_id}"})
    return f"{reverse('console:run-page', args=[run_id])}?{query}"


def linked_slot(ladder, index: int, rung: str) -> dict:
    detail = slot_detail(ladder, index, rung)
    for card in detail["cards"]:
        card.link = run_link(card.run.pk, ladder.pk, index, rung)
    return detail


def open_slot(ladder, param: str) -> dict | None:
    """The slot a board's address names (``<climber index>/<rung id>``), or None."""
    raw, _, rung = param.partition("/")
    index = typed_integer(raw)
    if index is None or not rung:
        return None
    try:
        return linked_slot(ladder, index, rung)
    except Http404:
        return None


@signed_in
@require_safe
def slot(request, pk: int, index: int, rung: str):
    """The slot's runs and jobs: the side panel's content for the board's own request, else a
    page of its own."""
    ladder = viewable_ladder(request.user, pk)
    detail = linked_slot(ladder, index, rung)
    if request.htmx:
        return render(request, "console/_slot_panel.html", {"s": detail, "panel": True})
    return render(request, "console/slot.html", {"s": detail, "ladder": ladder})


def _breadcrumb(request) -> dict | None:
    """The ladder and slot the run page was reached from (when the reader may see it)."""
    ladder_id = typed_integer(request.GET.get("ladder"))
    if ladder_id is None:
        return None
    ladder = ladders_for(request.user).filter(pk=ladder_id).first()
    if ladder is None:
        return None
    index, _, rung = request.GET.get("slot", "").partition("/")
    crumb = {"ladder": ladder, "slot": None}
    if typed_integer(index) is not None and rung:
        query = urlencode({"slot": f"{index}/{rung}"})
        crumb["slot"] = {"url": f"{reverse('console:board', args=[ladder.pk])}?{query}"}
    return crumb


@signed_in
@require_safe
def run_page(request, pk: int):
    run = visible_run_or_404(request.user, pk)
    [card] = run_cards([(run, "run")], queries.checklist_of(run))
    mine = next((r for r in card.reviews if r.reviewer_id == request.user.pk), None)
    return render(
        request,
        "console/run.html",
        {
            "run": run,
            "card": card,
            "signals": list(run_signals(run)),
            "chain": attempt_chain(run),
            "crumb": _breadcrumb(request),
            "may_review": mine is None and reviewable_runs(request.user).filter(pk=run.pk).exists(),
            "mine": mine,
            "review": ReviewInput(),
            "errors": {},
            "back": request.GET.urlencode(),
        },
    )


@signed_in
@require_POST
def run_review(request, pk: int):
    if not can_review(request.user):
        raise PermissionDenied("Only owners and reviewers review runs.")
    run = get_object_or_404(reviewable_runs(request.user), pk=pk)
    review = ReviewInput.from_post(request.POST)
    data, errors = review.validate()
    back = request.POST.get("back", "")
    target = reverse("console:run-page", args=[run.pk]) + (f"?{back}" if back else "")
    if data is None:
        for field, texts in errors.items():
            for text in texts:
                messages.error(request, f"The review was not saved: {field}: {text}")
        return redirect(target)
    save_review(request, run, data)
    return redirect(target)
