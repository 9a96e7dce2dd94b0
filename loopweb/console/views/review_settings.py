"""A ladder's review settings: its rubric, the reviews each run wants, the reviewers assigned to
its queue and how long opening a run keeps it. Only the ladder's owner (or staff) changes them."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from ladders.configuration import save_review_settings
from ladders.rubric import KINDS
from loopweb.console.access import controlled_ladder, signed_in
from loopweb.console.forms import service_errors
from loopweb.console.review_settings import SettingsForm


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def review_settings(request, pk: int):
    ladder = controlled_ladder(request.user, pk)
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        form = SettingsForm.from_post(request.POST)
        data, errors = form.validate()
        if data is not None:
            try:
                save_review_settings(ladder=ladder, data=data, by=request.user)
            except ValidationError as exc:
                errors = service_errors(exc)
            else:
                messages.success(request, "Review settings saved.")
                return redirect(reverse("console:review-settings", args=[ladder.pk]))
    else:
        form = SettingsForm.from_ladder(ladder)
    body = {
        "ladder": ladder,
        "form": form,
        "rows": [
            {**row, "n": i, "key": f"c{i}", "errors": _of_row(errors, i)}
            for i, row in enumerate(form.rows)
        ],
        "kinds": KINDS,
        "reviewers": [u.username for u in ladder.reviewers.order_by("username")],
        "errors": errors,
    }
    return render(request, "console/review_settings.html", body)


def _of_row(errors: dict[str, list[str]], row: int) -> dict[str, list[str]]:
    """A criterion row's errors by field (``c<row>.<field>``)."""
    prefix = f"c{row}."
    return {key[len(prefix) :]: found for key, found in errors.items() if key.startswith(prefix)}
