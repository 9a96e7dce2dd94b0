"""The ladder editor: create, edit and delete a ladder's configuration."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django_htmx.http import HttpResponseClientRedirect

from ladders import services
from ladders.access import NOT_CREATED, creates_ladders
from ladders.models import Ladder
from ladders.selectors import ladder_config_json
from loopweb import stats
from loopweb.console import editor
from loopweb.console.access import controlled_ladder, signed_in
from loopweb.console.forms import EditorState, service_errors, validate_ladder
from loopweb.console.queries import account_limit


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def ladder_new(request):
    if not creates_ladders(request.user):
        raise PermissionDenied(NOT_CREATED)
    return _editor(request, None)


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def ladder_edit(request, pk: int):
    return _editor(request, controlled_ladder(request.user, pk))


def _saved_state(ladder: Ladder) -> EditorState:
    ladder = (
        Ladder.objects.prefetch_related("rungs", "group_links", "combination_links", "reviewers")
        .select_related("owner")
        .get(pk=ladder.pk)
    )
    return EditorState.from_config(ladder_config_json(ladder, set()))


def _go(request, url: str):
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


def _editor(request, ladder: Ladder | None):
    catalog = editor.Catalog.load()
    owner = ladder.owner if ladder else request.user
    notice, errors, focus = "", {}, None
    if request.method == "POST":
        state = EditorState.from_post(request.POST)
        op = request.POST.get("op") or "save"
        if op == "save":
            data, errors = validate_ladder(state, request, owner)
            if data is not None:
                try:
                    saved = services.save_ladder(
                        owner=owner, data=data, ladder=ladder, by=request.user
                    )
                except ValidationError as exc:
                    errors = service_errors(exc)
                else:
                    messages.success(request, f"Saved the ladder {saved.name}.")
                    return _go(request, reverse("console:board", args=[saved.pk]))
            notice = "Not saved: fix the problems marked below."
            focus = "error-summary"
        else:
            notice, errors, focus = state.apply(op, catalog)
            if op == "pick":
                # The form is disabled while the pick is in flight, which takes the focus
                # away: give it back to the list the pick was made in.
                focus = request.htmx.trigger if request.htmx else "add-version"
    else:
        state = _saved_state(ladder) if ladder else EditorState()
    placed = editor.place_errors(errors, state)
    context = {
        "ladder": ladder,
        "state": state,
        "action": request.path,
        "adder": editor.adder(state, catalog),
        "rows": editor.rung_rows(state, catalog, placed.rungs),
        "choices": editor.climber_choices(state, owner),
        "errors": placed.fields,
        "summary": placed.summary,
        "notice": notice,
        "focus": focus,
        "floors": editor.FLOORS,
        "account_limit": account_limit(owner.pk),
        # How many runs per rung tell a 30-point change in a rung's pass rate from chance.
        "runs_needed": stats.runs_per_rung_needed(stats.CHANGE),
    }
    template = "console/_editor_form.html" if request.htmx else "console/editor.html"
    return render(request, template, context)


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def ladder_delete(request, pk: int):
    ladder = controlled_ladder(request.user, pk)
    if request.method == "POST":
        name = ladder.name
        services.delete_ladder(ladder=ladder)
        messages.success(request, f"Deleted the ladder {name}.")
        return redirect("console:ladders")
    return render(request, "console/delete_confirm.html", {"ladder": ladder})
