"""Provider budgets in the console: everyone signed in sees each budget and its figures (in
flight, started in the last minute, the cap now); staff add, change and delete them. The form
is checked by the API's own serializer (``loopweb.runs.budget_inputs``)."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from loopweb.console.access import signed_in
from loopweb.console.views.manage import error_map
from loopweb.runs import budgeting
from loopweb.runs.budget_inputs import BudgetSerializer
from loopweb.runs.errors import Conflict
from loopweb.runs.models import ProviderBudget
from loopweb.runs.numbers import typed_integer

FIELDS = {"provider": "provider", "model": "model", "maxInFlight": "max_in_flight",
          "perMinute": "per_minute", "enabled": "enabled"}  # fmt: skip


def _staff_only(user) -> None:
    if not user.is_staff:
        raise PermissionDenied("Only staff change provider budgets.")


def _body(post) -> dict:
    """The form as the API's body: empty caps are none, typed numbers integers."""
    body: dict = {"provider": post.get("provider", ""), "model": post.get("model") or None}
    for name in ("maxInFlight", "perMinute"):
        raw = (post.get(name) or "").strip()
        number = typed_integer(raw, low=0, high=10**12)
        body[name] = None if raw == "" else (number if number is not None else raw)
    body["enabled"] = post.get("enabled") == "on"
    return body


def _rows(budgets: list[ProviderBudget]) -> list[tuple[ProviderBudget, budgeting.Figures]]:
    figures = budgeting.figures(budgets)
    return [(budget, figures[budget.pk]) for budget in budgets]


def _save(request, budget: ProviderBudget | None):
    serializer = BudgetSerializer(instance=budget, data=_body(request.POST))
    if not serializer.is_valid():
        return None, error_map(serializer.errors)
    try:
        return budgeting.save_budget(budget=budget, values=serializer.validated_data), {}
    except Conflict as exc:
        return None, {"model": [str(exc)]}


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def budget_list(request):
    errors, values = {}, {}
    if request.method == "POST":
        _staff_only(request.user)
        saved, errors = _save(request, None)
        if saved is not None:
            messages.success(request, f"Budget for {saved} added.")
            return redirect("console:budgets")
        values = request.POST
    return render(
        request,
        "console/budgets.html",
        {
            "rows": _rows(list(ProviderBudget.objects.order_by("provider", "model", "id"))),
            "errors": errors,
            "values": values,
            "may_edit": request.user.is_staff,
            "nav": "budgets",
        },
        status=400 if errors else 200,
    )


@signed_in
@require_POST
def budget_change(request, pk: int):
    _staff_only(request.user)
    budget = get_object_or_404(ProviderBudget, pk=pk)
    if request.POST.get("delete"):
        budgeting.delete_budget(budget=budget)
        messages.success(request, f"Budget for {budget} deleted.")
        return redirect("console:budgets")
    saved, errors = _save(request, budget)
    if saved is not None:
        messages.success(request, f"Budget for {saved} saved.")
        return redirect("console:budgets")
    return render(
        request,
        "console/budgets.html",
        {
            "rows": _rows(list(ProviderBudget.objects.order_by("provider", "model", "id"))),
            "errors": {},
            "edit_errors": errors,
            "editing": budget.pk,
            "values": {},
            "may_edit": True,
            "nav": "budgets",
        },
        status=400,
    )
