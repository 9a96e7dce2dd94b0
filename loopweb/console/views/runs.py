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
from loopweb.console import overrides, queries
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


def _run_page(request, run, *, errors=None, values=None, status=200):
    checklist = queries.checklist_of(run)
    [card] = run_cards([(run, "run")], checklist)
    mine = next((r for r in card.reviews if r.reviewer_id == request.user.pk), None)
    may_review = reviewable_runs(request.user).filter(pk=run.pk).exists()
    return render(
        request,
        "console/run.html",
        {
            "o": overrides.panel(run, checklist, may_override=may_review),
            "override_errors": errors or {},
            "override_values": values or {},
            "run": run,
            "card": card,
            "signals": list(run_signals(run)),
            "chain": attempt_chain(run),
            "crumb": _breadcrumb(request),
            "may_review": mine is None and may_review,
            "mine": mine,
            "review": ReviewInput(),
            "errors": {},
            "back": request.GET.urlencode(),
        },
        status=status,
    )


@signed_in
@require_safe
def run_page(request, pk: int):
    return _run_page(request, visible_run_or_404(request.user, pk))


@signed_in
@require_POST
def run_overrides(request, pk: int):
    """A checklist override from the run page: the overrides section again for HTMX, else the
    run page (400 with the form's errors when it was refused)."""
    if not can_review(request.user):
        raise PermissionDenied("Only owners and reviewers override checklist items.")
    run = get_object_or_404(reviewable_runs(request.user), pk=pk)
    data, errors = overrides.parse(request.POST)
    if data is not None:
        errors = overrides.save(run, request.user, data)
    back = request.POST.get("back", "")
    if request.htmx:
        values = request.POST if errors else {}
        saved = "" if errors else f"{data['item']} {'passed' if data['passed'] else 'failed'}"
        context = {
            "o": overrides.panel(run, queries.checklist_of(run), may_override=True),
            "errors": errors,
            "values": values,
            "back": back,
            "saved": saved,
            "swapped": True,
        }
        return render(request, "console/_overrides.html", context)
    if errors:
        return _run_page(request, run, errors=errors, values=request.POST, status=400)
    messages.success(request, f"Override saved: {data['item']}.")
    target = reverse("console:run-page", args=[run.pk]) + (f"?{back}" if back else "")
    return redirect(target)


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
