"""A run's checklist overrides: ``GET, POST /api/runs/{id}/overrides``.

Everyone who reads the run reads who overrode what; only those who may review it (SPEC §1)
override, anyone else is told the run does not exist (404) and nothing is recorded."""

from django.db.models import Max
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.permissions import SAFE_METHODS, IsAuthenticated
from rest_framework.response import Response

from loopweb.runs import overrides
from loopweb.runs.access import reviewable_runs, visible_runs
from loopweb.runs.api import fields as f
from loopweb.runs.api.permissions import CanReview
from loopweb.runs.models import ChecklistOverride, Run
from loopweb.runs.models.overrides import NOTE_MAX


class OverrideSerializer(serializers.Serializer):
    """One override as the API shows it: ``current`` when it is the one that stands for its
    item (the latest, whoever made it), the one the stored rating folds in."""

    id = f.IntegerField(read_only=True)
    item = f.CharField(max_length=100, help_text="The id of an item of the run's checklist.")
    passed = f.BooleanField(help_text="The reviewer's word: the item passed (true) or not.")
    note = f.CharField(max_length=NOTE_MAX, allow_blank=True, default="", help_text="Why.")
    reviewer = serializers.SerializerMethodField()
    createdAt = f.DateTimeField(source="created_at", read_only=True)
    current = serializers.SerializerMethodField()

    def get_reviewer(self, override) -> str | None:
        """The reviewer's username (null once their account is gone)."""
        return override.reviewer.username if override.reviewer_id else None

    def get_current(self, override) -> bool:
        standing = self.context.get("standing")
        return True if standing is None else override.pk in standing


OVERRIDDEN = inline_serializer(
    "Overridden",
    {
        "override": OverrideSerializer(),
        "validatorRating": f.CharField(
            allow_null=True, help_text="The run's validator rating, the one the gate reads."
        ),
        "storedRating": f.CharField(
            allow_null=True,
            help_text="The run's stored rating, this override and the others that stand folded in.",
        ),
    },
)


def _readable(user, pk: int) -> Run:
    # first(), not get(): a visibility rule that joins could list a run twice.
    run = visible_runs(user).filter(pk=pk).first()
    if run is None:
        raise NotFound()
    return run


class RunOverridesView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = OverrideSerializer
    queryset = ChecklistOverride.objects.none()  # for the schema; requests read the run's own

    def get_permissions(self):
        if self.request.method in SAFE_METHODS:
            return [IsAuthenticated()]
        return [CanReview()]

    @extend_schema(
        description="The run's checklist overrides, oldest first, with who made each; "
        "``current`` marks the one that stands for its item (the latest).",
        responses=OverrideSerializer(many=True),
    )
    def get(self, request, pk: int):
        run = _readable(request.user, pk)
        rows = ChecklistOverride.objects.filter(run=run).select_related("reviewer")
        standing = set(
            rows.values("item").annotate(latest=Max("id")).values_list("latest", flat=True)
        )
        page = self.paginate_queryset(rows.order_by("id"))
        data = OverrideSerializer(page, many=True, context={"standing": standing}).data
        return self.get_paginated_response(data)

    @extend_schema(
        request=OverrideSerializer,
        description="Override one checklist item of the run (pass or fail, with a note). The "
        "run's stored rating folds in the latest override of each item, whoever made it; its "
        "validator rating, the one the gate reads, does not change.",
        responses={
            201: OVERRIDDEN,
            400: OpenApiResponse(description="A field is missing or wrong, naming it."),
            404: OpenApiResponse(description="No run the caller may review."),
        },
    )
    def post(self, request, pk: int):
        run = reviewable_runs(request.user).filter(pk=pk).first()
        if run is None:
            raise NotFound()
        body = OverrideSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        override = overrides.override_item(
            run=run, reviewer=request.user, item=d["item"], passed=d["passed"], note=d["note"]
        )
        run.refresh_from_db(fields=["validator_rating", "stored_rating"])
        return Response(
            {
                "override": OverrideSerializer(override).data,
                "validatorRating": run.validator_rating,
                "storedRating": run.stored_rating,
            },
            status=status.HTTP_201_CREATED,
        )
