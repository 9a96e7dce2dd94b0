"""The review queue: one run at a time, filtered and ordered as the reviewer chooses; opening a
run keeps it for the reader for the ladder's reservation time, and a submitted review (with the
ladder's rubric) moves to the next. "My reviews" lists the reader's own reviews, each one
correctable. What the page shows is put together by ``loopweb.console.queue_page``."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from ladders import queue as review_queue
from loopweb.console import queries
from loopweb.console.access import can_review, signed_in, viewable_ladder
from loopweb.console.forms import ReviewInput, service_errors
from loopweb.console.queue_page import QueuePage, context, queue_url
from loopweb.console.review_form import values_from_post
from loopweb.console.review_queue import Choice
from loopweb.runs.errors import Conflict
from loopweb.runs.numbers import typed_integer


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def queue(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    # A posted review carries the reader's choice in hidden fields; the address may carry it too.
    choice = Choice.from_query({**request.GET.dict(), **request.POST.dict()})
    page = QueuePage.read(request.user, ladder, choice)
    if request.method == "POST":
        return _post(request, page)
    index = page.pick(
        current=typed_integer(request.GET.get("run")), after=typed_integer(request.GET.get("after"))
    )
    if index is not None and choice.view == "todo" and can_review(request.user):
        _reserve(request, page, page.entries[index])
    body = context(request, page, index, ReviewInput(), {}, {})
    return render(request, "console/queue.html", body)


def _reserve(request, page: QueuePage, entry: dict) -> None:
    """Opening a run keeps it for the reader (one run at a time); a run someone took a moment
    ago is still shown, with why it cannot be reviewed now."""
    try:
        kept = review_queue.reserve(page.ladder, request.user, entry["run"], listed_already=True)
    except (Conflict, PermissionDenied) as exc:
        text = str(getattr(exc, "detail", exc))
        messages.info(request, f"{text[:1].upper()}{text[1:]}.")
    else:
        entry["reservedUntil"] = kept.expires_at


def _post(request, page: QueuePage):
    if not can_review(request.user):
        raise PermissionDenied("Only owners and reviewers review runs.")
    ladder, choice = page.ladder, page.choice
    current = typed_integer(request.POST.get("run"))
    if current not in page.ids:
        messages.info(
            request,
            f"Run {current} is no longer waiting for review."
            if choice.view == "todo"
            else f"Run {current} is not among your reviews of this ladder.",
        )
        return redirect(queue_url(ladder, choice))
    run = queries.run_for(request.user, current)
    if run is None:
        raise Http404("No such run.")
    review, values = (
        ReviewInput.from_post(request.POST),
        values_from_post(ladder.rubric, request.POST),
    )
    data, errors = review.validate()
    try:
        review_queue.checked_values(ladder, values)
    except ValidationError as exc:
        data, errors = None, {**errors, **service_errors(exc)}
    if data is not None:
        errors = _save(request, page, run, {**data, "values": values})
        if not errors:
            return redirect(
                queue_url(ladder, choice, run=run.pk if choice.view == "mine" else None)
            )
    index = page.pick(current=current, after=None)
    return render(
        request, "console/queue.html", context(request, page, index, review, values, errors)
    )


def _save(request, page: QueuePage, run, data: dict) -> dict[str, list[str]]:
    """Saves the review (a correction in My reviews): the form's errors, none once saved."""
    editing = page.choice.view == "mine"
    try:
        if editing:
            review_queue.correct(page.ladder, request.user, run, data)
        else:
            review_queue.review(page.ladder, request.user, run.pk, data, listed_already=True)
    except ValidationError as exc:
        return service_errors(exc)
    except Conflict as exc:
        messages.error(request, exc.detail)
        return {}
    messages.success(
        request,
        f"Your review of run {run.pk} was corrected."
        if editing
        else f"Review of run {run.pk} saved.",
    )
    return {}
