"""A review posted or corrected from the console (the queue or a run's page), through the
services the API calls, with the message that says what happened."""

from django.contrib import messages

from loopweb.runs.errors import Conflict
from loopweb.runs.services import edit_review, review_run


def save_review(request, run, data: dict, *, editing: bool = False) -> None:
    act = edit_review if editing else review_run
    try:
        act(
            run=run,
            reviewer=request.user,
            aesthetic_rating=data["aesthetic_rating"],
            writeup=data.get("writeup", ""),
            verdict=data.get("verdict") or "",
        )
    except Conflict as exc:
        messages.error(request, exc.detail)
    else:
        messages.success(
            request,
            f"Your review of run {run.pk} was corrected."
            if editing
            else f"Review of run {run.pk} saved.",
        )
