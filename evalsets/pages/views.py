"""The console's pages of evalsets: proposals and what the verify gate found."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from evalsets import selectors
from evalsets.chart import outcome_chart
from evalsets.verdict import SKIP_REASONS


@require_GET
@login_required
def proposal_list(request):
    page = Paginator(selectors.visible_proposals(request.user), 50).get_page(
        request.GET.get("page")
    )
    rows = [(p, selectors.gate_status(p), selectors.skip_reason(p)) for p in page]
    return render(request, "evalsets/proposal_list.html", {"rows": rows, "page": page})


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
        },
    )
