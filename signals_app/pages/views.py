"""The console's run page: the run's signals and its outcome with the reason."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from loopweb.runs.errors import Conflict
from signals_app import selectors


@require_safe
@login_required
def run_detail(request, pk: int):
    run = selectors.visible_run_or_404(request.user, pk)
    signals = list(selectors.run_signals(run))
    try:
        outcome, problem = selectors.run_outcome(run, signals), ""
    except Conflict as exc:
        outcome, problem = None, exc.detail
    return render(
        request,
        "signals/run_detail.html",
        {"run": run, "signals": signals, "outcome": outcome, "problem": problem},
    )
