"""The review queue: one run at a time, in ladder order; a submitted review moves to the next."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from ladders.access import controls
from ladders.selectors import review_queue
from loopweb.console import queries
from loopweb.console.access import can_review, signed_in, viewable_ladder
from loopweb.console.forms import ReviewInput
from loopweb.console.presenters import pin_text, plural
from loopweb.console.review import run_summary
from loopweb.runs.errors import Conflict
from loopweb.runs.services import review_run


def _int(raw) -> int | None:
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


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


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def queue(request, pk: int):
    ladder = viewable_ladder(request.user, pk)
    entries = review_queue(ladder)
    review, errors, current = ReviewInput(), {}, None
    if request.method == "POST":
        if not can_review(request.user):
            raise PermissionDenied("Only owners and reviewers review runs.")
        current = _int(request.POST.get("run"))
        if current not in {e["run"] for e in entries}:
            messages.info(request, f"Run {current} is no longer waiting for review.")
            return redirect("console:queue", pk=ladder.pk)
        run = queries.run_for(request.user, current)
        if run is None:
            raise Http404("No such run.")
        review = ReviewInput.from_post(request.POST)
        data, errors = review.validate()
        if data is not None:
            try:
                review_run(
                    run=run,
                    reviewer=request.user,
                    aesthetic_rating=data["aesthetic_rating"],
                    writeup=data.get("writeup", ""),
                    verdict=data.get("verdict") or "",
                )
            except Conflict as exc:
                messages.error(request, exc.detail)
            else:
                messages.success(request, f"Review of run {run.pk} saved.")
            return redirect("console:queue", pk=ladder.pk)
    index = _pick(entries, current=current, after=_int(request.GET.get("after")))
    context = {
        "ladder": ladder,
        "left": len(entries),
        "left_text": plural(len(entries), "run") + " left to review",
        "control": controls(request.user, ladder),
        "may_review": can_review(request.user),
        "review": review,
        "errors": errors,
        "entry": None,
    }
    if index is not None:
        entry = entries[index]
        run = queries.run_for(request.user, entry["run"])
        rungs = ladder.dispatch.snapshot["rungs"]
        number = next((i + 1 for i, r in enumerate(rungs) if r["id"] == entry["rung"]), None)
        rung = rungs[number - 1] if number else None
        context.update(
            entry=entry,
            position=index + 1,
            run=run,
            summary=run_summary(run, queries.checklist_of(run)) if run else None,
            rung_number=number,
            rung_pin=pin_text(rung) if rung else entry["rung"],
            climber=queries.climber_label(ladder.dispatch, entry["climber"]),
            next_run=entries[(index + 1) % len(entries)]["run"] if len(entries) > 1 else None,
        )
    return render(request, "console/queue.html", context)
