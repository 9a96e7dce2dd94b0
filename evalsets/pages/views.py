"""The console's pages of evalsets: the evalsets with their journaled runs, and proposals with
what the verify gate found."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Subquery
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from evalsets import selectors
from evalsets.chart import outcome_chart, series_chart
from evalsets.models import Evalset, EvalsetRun
from evalsets.verdict import SKIP_REASONS


@require_GET
@login_required
def proposal_list(request):
    page = Paginator(selectors.visible_proposals(request.user), 50).get_page(
        request.GET.get("page")
    )
    rows = [(p, selectors.gate_status(p), selectors.skip_reason(p)) for p in page]
    return render(
        request, "evalsets/proposal_list.html", {"rows": rows, "page": page, "nav": "proposals"}
    )


@require_GET
@login_required
def proposal_detail(request, pk: int):
    proposal = get_object_or_404(selectors.visible_proposals(request.user), pk=pk)
    steps = selectors.timeline(proposal)
    return render(
        request,
        "evalsets/proposal_detail.html",
        {
            "proposal": proposal,
            "policy": proposal.policy,
            "gate": selectors.gate_status(proposal),
            "skipped": SKIP_REASONS.get(selectors.skip_reason(proposal)),
            "steps": steps,
            "chart": outcome_chart([step.result for step in steps if step.result]),
            "revert_draft": getattr(proposal, "revert_draft", None),
            "advisory_flag": getattr(proposal, "advisory_flag", None),
            "nav": "proposals",
        },
    )


def _numeric_fields(summaries) -> list[str]:
    """The summary fields holding numbers in any of ``summaries``, passed, failed, total and
    error_rate first."""
    found = {
        key
        for summary in summaries
        for key, value in summary.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }
    first = [f for f in ("passed", "failed", "total", "error_rate") if f in found]
    return first + sorted(found - set(first))


@require_GET
@login_required
def evalset_list(request):
    """Every evalset (they are shared like the catalog) with its pins and latest summary."""
    latest = EvalsetRun.objects.filter(evalset=OuterRef("pk")).order_by("-journaled_at", "-id")
    evalsets = Evalset.objects.annotate(
        run_count=Count("runs", distinct=True),
        latest_summary=Subquery(latest.values("summary")[:1]),
        latest_at=Subquery(latest.values("journaled_at")[:1]),
    ).order_by("name", "id")
    page = Paginator(evalsets, 50).get_page(request.GET.get("page"))
    return render(request, "evalsets/evalset_list.html", {"page": page, "nav": "evalsets"})


@require_GET
@login_required
def evalset_detail(request, hash: str):  # noqa: A002 - the evalset's hash, as in its URL
    """One evalset: its pins, its journaled runs as a chart over time, and the proposals
    measured against it that the caller may see, with their outcomes."""
    evalset = get_object_or_404(Evalset, hash=hash)
    runs = list(EvalsetRun.objects.filter(evalset=evalset).order_by("journaled_at", "id")[:500])
    fields = _numeric_fields(r.summary for r in runs)
    field = request.GET.get("field") or (fields[0] if fields else "passed")
    if field not in fields:
        field = fields[0] if fields else "passed"
    proposals = list(
        selectors.visible_proposals(request.user).filter(evalset=evalset).order_by("-created_at")
    )
    values = [
        (r.journaled_at, r.summary[field])
        for r in runs
        if isinstance(r.summary.get(field), int | float)
    ]
    markers = [(p.applied_at, f"{p.title} applied") for p in proposals if p.applied_at]
    return render(
        request,
        "evalsets/evalset_detail.html",
        {
            "evalset": evalset,
            "runs": list(reversed(runs)),
            "fields": fields,
            "field": field,
            "chart": series_chart(values, markers),
            "proposals": [(p, selectors.gate_status(p)) for p in proposals],
            "nav": "evalsets",
        },
    )
