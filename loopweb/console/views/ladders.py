from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_safe

from ladders.access import creates_ladders
from ladders.models import Ladder
from ladders.selectors import ladder_summaries
from loopweb.console import presenters
from loopweb.console.access import signed_in

PAGE_SIZE = 25


@signed_in
@require_safe
def ladder_list(request):
    """The caller's ladders, and those shared with them as a reviewer."""
    user = request.user
    page = Paginator(Ladder.objects.filter(owner=user).order_by("name", "id"), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    shared = Ladder.objects.filter(reviewers=user).exclude(owner=user).order_by("name", "id")
    return render(
        request,
        "console/ladders.html",
        {
            "page": page,
            "own": [presenters.summary_row(r) for r in ladder_summaries(list(page))],
            "shared": [presenters.summary_row(r) for r in ladder_summaries(list(shared[:100]))],
            "can_create": creates_ladders(user),
            "nav": "ladders",
        },
    )
