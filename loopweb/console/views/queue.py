"""The review queue: one run at a time, filtered and ordered as the reviewer chooses; a submitted
review moves to the next. "My reviews" lists the reviewer's own reviews, each one correctable."""

from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from ladders.access import controls
from ladders.models import DispatchClimber
from ladders.selectors import review_queue, slot_run_entries
from loopweb.console import queries
from loopweb.console.access import can_review, signed_in, viewable_ladder
from loopweb.console.forms import ReviewInput
from loopweb.console.presenters import pin_text, plural
from loopweb.console.review import run_summary
from loopweb.console.review_queue import ORDERS, OUTCOMES, VIEWS, Choice, arrange
from loopweb.console.runs import acceptance_of
from loopweb.console.views.reviewing import save_review
from loopweb.runs.models import Review
from loopweb.runs.numbers import typed_integer
from loopweb.runs.outcomes import RATING_ORDER


def _pick(entries: list[dict], *, current: int | None, after: int | None) -> int | None:
    """The index of the entry to show: the one being reviewed, the one after a skipped run
    (wrapping round), or the first."""
    ids = [e["run"] for e in entries]
    if not ids:
        return None
    if current in ids:
        return ids.index(current)
    if after in ids:
        return (ids.index(after) + 1) % len(ids)
    return 0


def _queue_url(ladder, choice: Choice, **extra) -> str:
    query = {**choice.query(), **{k: v for k, v in extra.items() if v is not None}}
    url = reverse("console:queue", args=[ladder.pk])
    return f"{url}?{urlencode(query)}" if query else url


def _entries(request, ladder, choice: Choice, numbers):
    """The entries of the chosen view, filtered and ordered, and the reader's own reviews."""
    if choice.view == "mine":
        all_entries = slot_run_entries(ladder)
        mine = {
            r.run_id: r
            for r in Review.objects.filter(
                reviewer=request.user, run_id__in=[e["run"] for e in all_entries]
            )
        }
        entries = [e for e in all_entries if e["run"] in mine]
    else:
        entries, mine = review_queue(ladder), {}
    acceptance = acceptance_of([e["run"] for e in entries]) if choice.outcome else None
    return arrange(entries, choice, numbers=numbers, acceptance=acceptance, reviews=mine), mine


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def queue(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    # A posted review carries the reader's choice in hidden fields; the address may carry it too.
    choice = Choice.from_query({**request.GET.dict(), **request.POST.dict()})
    rungs = ladder.dispatch.snapshot["rungs"] if hasattr(ladder, "dispatch") else []
    numbers = {r["id"]: i + 1 for i, r in enumerate(rungs)}
    entries, mine = _entries(request, ladder, choice, numbers)
    review, errors, current = ReviewInput(), {}, None
    if request.method == "POST":
        if not can_review(request.user):
            raise PermissionDenied("Only owners and reviewers review runs.")
        current = typed_integer(request.POST.get("run"))
        if current not in {e["run"] for e in entries}:
            messages.info(
                request,
                f"Run {current} is no longer waiting for review."
                if choice.view == "todo"
                else f"Run {current} is not among your reviews of this ladder.",
            )
            return redirect(_queue_url(ladder, choice))
        run = queries.run_for(request.user, current)
        if run is None:
            raise Http404("No such run.")
        review = ReviewInput.from_post(request.POST)
        data, errors = review.validate()
        if data is not None:
            save_review(request, run, data, editing=choice.view == "mine")
            if choice.view == "mine":
                return redirect(_queue_url(ladder, choice, run=run.pk))
            return redirect(_queue_url(ladder, choice))
    if current is None:
        current = typed_integer(request.GET.get("run"))
    index = _pick(entries, current=current, after=typed_integer(request.GET.get("after")))
    context = {
        "ladder": ladder,
        "choice": choice,
        "left": len(entries),
        "left_text": (
            plural(len(entries), "run") + " left to review"
            if choice.view == "todo"
            else plural(len(entries), "review") + " of yours"
        ),
        "control": controls(request.user, ladder),
        "may_review": can_review(request.user),
        "review": review,
        "errors": errors,
        "entry": None,
        "views": VIEWS,
        "orders": ORDERS,
        "order_label": ORDERS[choice.order],
        "outcomes": OUTCOMES,
        "ratings": [*reversed(RATING_ORDER), "unrated"],
        "rung_options": [(r["id"], f"Rung {i + 1} · {pin_text(r)}") for i, r in enumerate(rungs)],
        "climber_options": _climber_options(ladder),
        "hidden": choice.query(),
        "list": [
            {**e, "number": numbers.get(e["rung"]), "url": _queue_url(ladder, choice, run=e["run"])}
            for e in entries[:200]
        ],
    }
    if index is not None:
        entry = entries[index]
        run = queries.run_for(request.user, entry["run"])
        number = numbers.get(entry["rung"])
        rung = rungs[number - 1] if number else None
        mine_review = mine.get(entry["run"])
        if mine_review is not None and request.method != "POST":
            review = ReviewInput(
                aesthetic_rating=str(mine_review.aesthetic_rating),
                writeup=mine_review.writeup,
                verdict=mine_review.verdict,
            )
        several = len(entries) > 1
        context.update(
            entry=entry,
            review=review,
            mine_review=mine_review,
            position=index + 1,
            run=run,
            summary=run_summary(run, queries.checklist_of(run)) if run else None,
            rung_number=number,
            rung_pin=pin_text(rung) if rung else entry["rung"],
            climber=queries.climber_label(ladder.dispatch, entry["climber"]),
            next_url=_queue_url(ladder, choice, run=entries[(index + 1) % len(entries)]["run"])
            if several
            else None,
            previous_url=_queue_url(ladder, choice, run=entries[index - 1]["run"])
            if several
            else None,
            skip_url=_queue_url(ladder, choice, after=entry["run"]) if several else None,
        )
    return render(request, "console/queue.html", context)


def _climber_options(ladder) -> list[tuple[str, str]]:
    if not hasattr(ladder, "dispatch"):
        return []
    keys = list(
        DispatchClimber.objects.filter(dispatch=ladder.dispatch)
        .order_by("position")
        .values_list("combination_key", flat=True)
    )
    return list(zip(keys, queries.climber_labels(ladder.dispatch, keys), strict=True))
