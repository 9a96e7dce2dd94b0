"""The verify gate over REST (API.md, "Evalsets and proposals") and its two console pages.

Views parse, call one service or selector, and render; the rules live elsewhere.
"""

import django_filters
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count, OuterRef, Subquery
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.permissions import IsAuthenticated
from rest_framework.response import Response

from evalsets import selectors, services
from evalsets import serializers as s
from evalsets.chart import outcome_chart, series_chart
from evalsets.models import AuthoredBy, Evalset, EvalsetRun, Proposal
from evalsets.verdict import SKIP_REASONS
from loopweb.runs.api import filters
from loopweb.runs.api.permissions import CanPush, CatalogWrite, IsOwner


class EvalsetViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Evalsets are shared like the catalog: everyone signed in reads, owners and staff add."""

    serializer_class = s.EvalsetSerializer
    permission_classes = [CatalogWrite]
    lookup_field = "hash"
    lookup_value_regex = "[0-9a-f]{1,64}"

    def get_queryset(self):
        return Evalset.objects.annotate(run_count=Count("runs")).order_by("name", "id")

    def get_permissions(self):
        # Journaling is checked in ``runs`` itself: drivers journal, though they add no evalset.
        if self.action == "runs":
            return [IsAuthenticated()]
        return super().get_permissions()

    @extend_schema(
        request=s.EvalsetCreateSerializer,
        responses={201: s.EvalsetSerializer, 200: s.EvalsetSerializer},
        description="Posting pins that already form an evalset answers 200 with that evalset.",
    )
    def create(self, request):
        body = s.EvalsetCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        evalset, created = services.create_evalset(
            name=body.validated_data["name"],
            pins=body.validated_data["pins"],
            created_by=request.user,
        )
        evalset = self.get_queryset().get(pk=evalset.pk)
        return Response(
            s.EvalsetSerializer(evalset).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(methods=["GET"], request=None, responses=s.EvalsetRunSerializer(many=True))
    @extend_schema(
        methods=["POST"], request=s.JournalSerializer, responses={201: s.EvalsetRunSerializer}
    )
    def runs(self, request, hash=None):
        evalset = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(evalset.runs.select_related("evalset"))
            return self.get_paginated_response(s.EvalsetRunSerializer(page, many=True).data)
        if not CanPush().has_permission(request, self):
            self.permission_denied(request)
        body = s.JournalSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        run = services.journal_run(
            evalset=evalset,
            summary=body.validated_data["summary"],
            journaled_at=body.validated_data.get("journaled_at"),
            journaled_by=request.user,
        )
        return Response(s.EvalsetRunSerializer(run).data, status=status.HTTP_201_CREATED)


class ProposalFilter(django_filters.FilterSet):
    authored_by = filters.ChoiceFilter(choices=AuthoredBy.choices)
    applicable = filters.BooleanFilter()

    class Meta:
        model = Proposal
        fields = ["authored_by", "applicable"]


class ProposalViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Proposals belong to their creator; anyone else's answers 404."""

    serializer_class = s.ProposalSerializer
    filterset_class = ProposalFilter
    queryset = Proposal.objects.none()  # for the schema; requests use get_queryset

    def get_queryset(self):
        return selectors.visible_proposals(self.request.user)

    @extend_schema(request=s.ProposalCreateSerializer, responses={201: s.ProposalSerializer})
    def create(self, request):
        if not IsOwner().has_permission(request, self):
            self.permission_denied(request)
        body = s.ProposalCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        proposal = services.create_proposal(owner=request.user, **body.validated_data)
        proposal = self.get_queryset().get(pk=proposal.pk)
        return Response(s.ProposalSerializer(proposal).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.ApplySerializer, responses=s.ProposalSerializer)
    def apply(self, request, pk=None):
        proposal = self.get_object()
        body = s.ApplySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.apply_proposal(proposal=proposal, applied_at=body.validated_data.get("applied_at"))
        proposal = self.get_queryset().get(pk=proposal.pk)
        return Response(s.ProposalSerializer(proposal).data)

    @extend_schema(
        request=None,
        responses=inline_serializer(
            "OutcomePage",
            {
                "count": serializers.IntegerField(),
                "next": serializers.URLField(allow_null=True),
                "previous": serializers.URLField(allow_null=True),
                "results": s.OutcomeResultSerializer(many=True),
                "gate": serializers.ChoiceField(
                    choices=["skipped", "not_applied", "measuring", "complete"]
                ),
                "skipped": serializers.CharField(
                    allow_null=True, help_text="why the gate does not measure this proposal"
                ),
                "gate_outcome": s.GATE_OUTCOME,
            },
        ),
    )
    def outcomes(self, request, pk=None):
        proposal = self.get_object()
        page = self.paginate_queryset(selectors.outcome_results(proposal))
        response = self.get_paginated_response(s.OutcomeResultSerializer(page, many=True).data)
        response.data["gate"] = selectors.gate_status(proposal)
        response.data["skipped"] = selectors.skip_reason(proposal)
        response.data["gate_outcome"] = proposal.gate_outcome or None
        return response


# Console pages --------------------------------------------------------------------------------


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
