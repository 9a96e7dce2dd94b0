from django.core.paginator import Paginator
from django.shortcuts import render
from django.views.decorators.http import require_safe

from ladders.access import creates_ladders
from ladders.models import Ladder
from ladders.selectors import ladder_summaries
from loopweb.console import presenters, queries
from loopweb.console.access import signed_in

PAGE_SIZE = 25


@signed_in
@require_safe
def ladder_list(request):
    """The caller's ladders, and those shared with them as a reviewer."""
    user = request.user
    search = request.GET.get("q", "").strip()[:200]
    own = Ladder.objects.filter(owner=user)
    shared = Ladder.objects.filter(reviewers=user).exclude(owner=user)
    if search:
        own, shared = own.filter(name__icontains=search), shared.filter(name__icontains=search)
    page = Paginator(own.order_by("name", "id"), PAGE_SIZE).get_page(request.GET.get("page"))
    ladders = [*page, *shared.order_by("name", "id")[:100]]
    ids = [ladder.pk for ladder in ladders]
    declared, last = queries.declared_counts(ids), queries.last_runs(ids)

    def rows(items):
        return [
            presenters.summary_row(r, declared=declared.get(r["id"]), last=last.get(r["id"]))
            for r in ladder_summaries(items)
        ]

    return render(
        request,
        "console/ladders.html",
        {
            "page": page,
            "search": search,
            "own": rows(list(page)),
            "shared": rows(list(shared.order_by("name", "id")[:100])),
            "can_create": creates_ladders(user),
            "nav": "ladders",
        },
    )
