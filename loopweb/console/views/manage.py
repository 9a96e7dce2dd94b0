"""What an owner manages without the admin: combinations, coverage groups and the acceptance rule.

Every form is checked by what the API checks (its serializers, ``signals_app.acceptance``), so the
console and the API accept and refuse the same input with the same messages.
"""

from types import SimpleNamespace

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from ladders.access import creates_ladders as can_create
from ladders.models import LadderGroup
from loopweb.console.access import signed_in
from loopweb.console.rule_preview import RuleInput, preview
from loopweb.runs import catalog
from loopweb.runs.errors import django_detail, leaves
from loopweb.runs.inputs import CombinationSerializer, GroupSerializer, ModelEntrySerializer
from loopweb.runs.models import (
    Combination,
    CombinationKind,
    CoverageGroup,
    GGConfiguration,
    ModelEntry,
)
from loopweb.runs.numbers import typed_integer
from loopweb.runs.resolve import launch_problems
from signals_app.acceptance import parse_rule
from signals_app.services import current_rule_of, set_acceptance_rule


def error_map(detail) -> dict[str, list[str]]:
    """Field → messages, an E195 violation's message prefixed with its code."""
    found: dict[str, list[str]] = {}
    for path, message, code in leaves(detail):
        found.setdefault(path, []).append(f"E195: {message}" if code == "E195" else message)
    return found


#: The score target's fields, each with an input of its own on the rule page.
SCORE_FIELDS = ("name", "target", "better", "scale")


def score_errors(errors: dict[str, list[str]]) -> dict[str, list[str]]:
    """The score target's errors by the input they belong under: ``score.target`` under Target,
    and so on; anything else about the score (not an object, an unknown key) under ``other``."""
    found: dict[str, list[str]] = {}
    for path, messages_ in errors.items():
        if path != "score" and not path.startswith("score."):
            continue
        field = path.removeprefix("score.").split(".", 1)[0]
        found.setdefault(field if field in SCORE_FIELDS else "other", []).extend(messages_)
    return found


def _owner_only(user) -> None:
    if not can_create(user):
        raise PermissionDenied("Only owners manage combinations and groups.")


def _labels(combinations) -> list[tuple[Combination, str]]:
    names = dict(GGConfiguration.objects.values_list("id", "name"))
    return [(c, c.label(names.get(c.configuration_id))) for c in combinations]


def _request_context(request) -> dict:
    return {"request": SimpleNamespace(user=request.user)}


# Combinations ---------------------------------------------------------------------------------


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def combinations(request):
    """The shared catalog's combinations, and a form to add one (harness or gg)."""
    errors, values = {}, {}
    if request.method == "POST":
        _owner_only(request.user)
        values = request.POST
        body = {"kind": values.get("kind", "harness")}
        if body["kind"] == CombinationKind.GG:
            body["configuration"] = values.get("configuration") or None
            body["bindings"] = {
                key.removeprefix("bind-"): value
                for key, value in values.items()
                if key.startswith("bind-") and value
            }
        else:
            body.update({k: values.get(k, "") for k in ("harness", "model", "provider")})
        serializer = CombinationSerializer(data=body)
        if serializer.is_valid():
            combination = serializer.save(created_by=request.user)
            label = _labels([combination])[0][1]
            problem = launch_problems([combination])[combination.pk]
            if problem:
                messages.warning(
                    request,
                    f"Combination {label} added, but it cannot be launched: {problem}. "
                    "Fix the model catalog below before a ladder runs it.",
                )
            else:
                messages.success(request, f"Combination {label} added.")
            return redirect("console:combinations")
        errors = error_map(serializer.errors)
    return _combinations_page(request, errors=errors, values=values)


def _combinations_page(request, *, errors=None, values=None, model_errors=None, model_values=None):
    combinations = list(Combination.objects.order_by("id"))
    problems = launch_problems(combinations)
    failed = bool(errors or model_errors)
    return render(
        request,
        "console/combinations.html",
        {
            "rows": [(c, label, problems[c.pk]) for c, label in _labels(combinations)],
            "models": [
                (entry, catalog.may_change(request.user, entry))
                for entry in ModelEntry.objects.order_by("name")
            ],
            "configurations": GGConfiguration.objects.order_by("name", "id"),
            "errors": errors or {},
            "values": values or {},
            "model_errors": model_errors or {},
            "model_values": model_values or {},
            "may_add": can_create(request.user),
            "nav": "combinations",
        },
        status=400 if failed else 200,
    )


@signed_in
@require_http_methods(["POST"])
def model_add(request):
    """Add a model to the catalog (owners and staff), launchable unless unticked."""
    _owner_only(request.user)
    values = request.POST
    serializer = ModelEntrySerializer(
        data={
            "name": values.get("name", ""),
            "provider": values.get("provider", ""),
            "launchable": values.get("launchable") == "on",
        }
    )
    if not serializer.is_valid():
        return _combinations_page(
            request, model_errors=error_map(serializer.errors), model_values=values
        )
    entry = serializer.save(created_by=request.user)
    state = "launchable" if entry.launchable else "not launchable"
    messages.success(request, f"Model {entry.name} added to the catalog, {state}.")
    return redirect("console:combinations")


@signed_in
@require_http_methods(["POST"])
def model_launchable(request, pk: int):
    """Mark a model launchable (the box ticked) or not, as its creator or staff."""
    entry = ModelEntry.objects.filter(pk=pk).first()
    if entry is None:
        raise Http404("No such model in the catalog.")
    launchable = request.POST.get("launchable") == "on"
    catalog.set_launchable(entry=entry, launchable=launchable, by=request.user)
    state = "launchable" if launchable else "not launchable"
    messages.success(request, f"Model {entry.name} is {state}.")
    return redirect("console:combinations")


# Coverage groups ------------------------------------------------------------------------------


def _own_group(user, pk: int) -> CoverageGroup:
    group = CoverageGroup.objects.filter(owner=user, pk=pk).first()
    if group is None:
        raise Http404("No such group.")
    return group


def _save_group(request, group, name: str, members: list[int]):
    serializer = GroupSerializer(
        instance=group,
        data={"name": name, "kind": "combo", "members": members},
        context=_request_context(request),
    )
    if not serializer.is_valid():
        return None, error_map(serializer.errors)
    with transaction.atomic():
        return serializer.save(), {}


def _int_list(values) -> list:
    """Posted ids as ints; anything else is passed on for the serializer to refuse."""
    return [found if (found := typed_integer(v)) is not None else v for v in values]


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def groups(request):
    """The owner's coverage groups with their members and the ladders that use them."""
    _owner_only(request.user)
    errors, values = {}, {}
    if request.method == "POST":
        values = request.POST
        members = _int_list(values.getlist("members"))
        group, errors = _save_group(request, None, values.get("name", ""), members)
        if group is not None:
            messages.success(request, f"Group {group.name} created.")
            return redirect("console:group", pk=group.pk)
    own = list(CoverageGroup.objects.filter(owner=request.user).prefetch_related("memberships"))
    used = _ladders_using([g.pk for g in own])
    return render(
        request,
        "console/groups.html",
        {
            "groups": [
                {"group": g, "size": len(g.memberships.all()), "ladders": used.get(g.pk, [])}
                for g in own
            ],
            "combinations": _labels(Combination.objects.order_by("id")),
            "chosen": set(_int_list(values.getlist("members"))) if values else set(),
            "errors": errors,
            "values": values,
            "nav": "groups",
        },
        status=400 if errors else 200,
    )


def _ladders_using(group_ids) -> dict[int, list]:
    used: dict[int, list] = {}
    links = LadderGroup.objects.filter(group_id__in=group_ids).select_related("ladder")
    for link in links.order_by("ladder__name", "ladder_id"):
        used.setdefault(link.group_id, []).append(link.ladder)
    return used


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def group(request, pk: int):
    """One group: rename it, add and remove members, see which ladders use it."""
    _owner_only(request.user)
    found = _own_group(request.user, pk)
    members = [m.combination_id for m in found.memberships.all()]
    errors = {}
    if request.method == "POST":
        action = request.POST.get("action")
        name = found.name
        if action == "rename":
            name = request.POST.get("name", "")
        elif action == "add":
            members = [*members, *_int_list([request.POST.get("combination")])]
        elif action == "remove":
            gone = _int_list([request.POST.get("combination")])[0]
            members = [m for m in members if m != gone]
        else:
            errors = {"action": ["Choose rename, add or remove."]}
        if not errors:
            saved, errors = _save_group(request, found, name, members)
            if saved is not None:
                messages.success(request, f"Group {saved.name} saved.")
                return redirect("console:group", pk=found.pk)
        members = [m.combination_id for m in found.memberships.all()]
        found.refresh_from_db()
    by_id = {c.pk: label for c, label in _labels(Combination.objects.filter(pk__in=members))}
    return render(
        request,
        "console/group.html",
        {
            "group": found,
            "members": [(pk, by_id.get(pk, pk)) for pk in members],
            "others": _labels(Combination.objects.exclude(pk__in=members).order_by("id")),
            "ladders": _ladders_using([found.pk]).get(found.pk, []),
            "errors": errors,
            "nav": "groups",
        },
        status=400 if errors else 200,
    )


# The acceptance rule ---------------------------------------------------------------------------


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def acceptance_rule(request):
    """The caller's acceptance rule: edit it with the API's checks (E195), and preview how it
    reads the caller's latest runs before saving."""
    current = current_rule_of(request.user.pk)
    form = RuleInput.from_rule(current)
    errors, rule = {}, current
    if request.method == "POST":
        form = RuleInput.from_post(request.POST)
        body = form.body()
        try:
            if request.POST.get("action") == "save":
                set_acceptance_rule(user=request.user, body=body)
                messages.success(request, f"Acceptance rule {body['name']} saved.")
                return redirect("console:acceptance-rule")
            rule = parse_rule(body)
        except ValidationError as exc:
            errors = error_map(django_detail(exc))
    return render(
        request,
        "console/acceptance_rule.html",
        {
            "form": form,
            "errors": errors,
            "score_errors": score_errors(errors),
            "previewing": request.method == "POST" and not errors,
            "preview": None if errors else preview(request.user, rule),
            "nav": "rule",
        },
        status=400 if errors else 200,
    )
