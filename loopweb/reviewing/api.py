"""The reviewing API under /api/ladders/{id}/: blind pairwise judgements and their results,
agreement between reviewers, the runs they split on, and the ladder's review settings
(docs/reviewing.md). Anyone who may not read the ladder gets a 404."""

import re

from django.db import transaction
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import ErrorDetail, PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.response import Response

from ladders.access import NOT_CONTROLLED, controls
from ladders.api.serializers import slot_run_fields
from ladders.models import Ladder
from ladders.selectors import ladders_for
from loopweb.reviewing import selectors, services
from loopweb.reviewing.models import Choice, ReviewSettings
from loopweb.runs import json_fields as fields
from loopweb.runs.models import Run

NOT_REVIEWER = selectors.NOT_REVIEWER

#: What a rung id may look like (``r_`` and hex when minted); anything else names no rung.
RUNG_PATTERN = r"^[A-Za-z0-9_-]{1,40}$"
RUNG_TYPE = {"type": "string", "pattern": RUNG_PATTERN}
RUNG = OpenApiParameter(
    "rung", RUNG_TYPE, description="A rung id of the ladder (the latest dispatch's rungs)."
)
RUNG_REQUIRED = OpenApiParameter("rung", RUNG_TYPE, required=True, description=RUNG.description)


def _ladder(request, pk: int) -> Ladder:
    return get_object_or_404(ladders_for(request.user).select_related("owner"), pk=pk)


def _judged_ladder(request, pk: int) -> Ladder:
    """The ladder, for a caller who judges its pairs (the owner or a reviewer; else 403)."""
    ladder = _ladder(request, pk)
    if not selectors.may_judge(request.user, ladder):
        raise PermissionDenied(NOT_REVIEWER)
    return ladder


def _rung(request, *, required: bool) -> str | None:
    rung = request.query_params.get("rung")
    if rung is None:
        if required:
            raise ValidationError(
                {"rung": [ErrorDetail("This parameter is required.", "required")]}
            )
        return None
    if not re.fullmatch(RUNG_PATTERN, rung):
        raise ValidationError({"rung": [ErrorDetail("Not a rung id.", "invalid")]})
    return rung


class JudgementIn(serializers.Serializer):
    rung = fields.RegexField(RUNG_PATTERN, max_length=40)
    left = fields.IdField()
    right = fields.IdField()
    choice = fields.ChoiceField(choices=Choice.choices)


class Judgement(serializers.Serializer):
    id = serializers.IntegerField()
    rung = serializers.CharField()
    dispatch = serializers.CharField()
    left = serializers.IntegerField()
    right = serializers.IntegerField()
    leftClimber = serializers.CharField()  # noqa: N815 - the API's names
    rightClimber = serializers.CharField()  # noqa: N815
    choice = serializers.ChoiceField(choices=Choice.choices)
    reviewer = serializers.CharField()
    createdAt = serializers.DateTimeField()  # noqa: N815


SIDE = inline_serializer(
    "PairwiseSide",
    {
        "run": serializers.IntegerField(),
        "outcome": serializers.CharField(),
        "record": serializers.DictField(),
        "finishedAt": serializers.DateTimeField(),
    },
)
NEXT_PAIR = inline_serializer(
    "PairwiseNext",
    {
        "rung": serializers.CharField(),
        "left": SIDE,
        "right": SIDE,
        "remaining": serializers.IntegerField(),
    },
)
COUNTS = {
    "wins": serializers.IntegerField(),
    "losses": serializers.IntegerField(),
    "ties": serializers.IntegerField(),
}
RESULTS = inline_serializer(
    "PairwiseResults",
    {
        "rung": serializers.CharField(allow_null=True),
        "judgements": serializers.IntegerField(),
        "preferences": inline_serializer(
            "Preference",
            {"climber": serializers.CharField(), "opponent": serializers.CharField(), **COUNTS},
            many=True,
        ),
        "ranking": inline_serializer(
            "BradleyTerryStrength",
            {
                "climber": serializers.CharField(),
                "rank": serializers.IntegerField(),
                "score": serializers.FloatField(help_text="Centred log-strength."),
                "low": serializers.FloatField(help_text="95 % interval, from the Hessian."),
                "high": serializers.FloatField(),
                "stderr": serializers.FloatField(),
                "wins": serializers.FloatField(help_text="A tie counts as half a win."),
                "comparisons": serializers.IntegerField(),
            },
            many=True,
        ),
    },
)


def _stat(name: str) -> serializers.Serializer:
    return inline_serializer(
        name,
        {
            "shared": serializers.IntegerField(),
            "agreement": serializers.FloatField(allow_null=True),
            "kappa": serializers.FloatField(allow_null=True),
        },
    )


def _alpha(name: str) -> serializers.Serializer:
    return inline_serializer(
        name,
        {
            "level": serializers.CharField(),
            "value": serializers.FloatField(allow_null=True),
            "units": serializers.IntegerField(),
        },
    )


AGREEMENT = inline_serializer(
    "Agreement",
    {
        "runs": serializers.IntegerField(),
        "reviewedRuns": serializers.IntegerField(),
        "reviewers": serializers.ListField(child=serializers.CharField()),
        "pairs": inline_serializer(
            "ReviewerPairAgreement",
            {
                "reviewers": serializers.ListField(child=serializers.CharField()),
                "verdict": _stat("VerdictKappa"),
                "rating": _stat("RatingKappa"),
            },
            many=True,
        ),
        "alpha": inline_serializer(
            "KrippendorffAlpha",
            {"verdict": _alpha("VerdictAlpha"), "rating": _alpha("RatingAlpha")},
        ),
        "validators": inline_serializer(
            "ReviewerValidatorAgreement",
            {
                "reviewer": serializers.CharField(),
                "verdict": _stat("VerdictGateKappa"),
                "rating": _stat("RatingValidatorKappa"),
            },
            many=True,
        ),
    },
)
DISAGREEMENTS = inline_serializer(
    "Disagreement",
    {
        **slot_run_fields(),
        "reasons": serializers.ListField(child=serializers.ChoiceField(["verdict", "rating"])),
        "reviews": inline_serializer(
            "SplitReview",
            {
                "reviewer": serializers.CharField(),
                "aestheticRating": serializers.IntegerField(),
                "verdict": serializers.CharField(allow_null=True),
            },
            many=True,
        ),
    },
    many=True,
)


class SettingsIn(serializers.Serializer):
    backlogThreshold = fields.IntegerField(  # noqa: N815
        min_value=1, max_value=1_000_000, allow_null=True
    )


SETTINGS = inline_serializer(
    "ReviewBacklog",
    {
        "backlogThreshold": serializers.IntegerField(allow_null=True),
        "backlog": serializers.IntegerField(help_text="Runs waiting for review now."),
        "over": serializers.BooleanField(
            help_text="Whether the backlog stood at or past the threshold when last counted."
        ),
    },
)


def _side(run) -> dict:
    """A run as a blind judge sees it: nothing that names its climber."""
    record = run.record if isinstance(run.record, dict) else {}
    shown = {k: record[k] for k in ("artifacts", "checklist", "metrics") if k in record}
    return {
        "run": run.pk,
        "outcome": run.outcome,
        "record": shown,
        "finishedAt": run.finished_at,
    }


class PairwiseView(GenericAPIView):
    queryset = Ladder.objects.none()

    @extend_schema(
        operation_id="ladders_pairwise_list",
        parameters=[RUNG],
        responses=Judgement(many=True),
        description="The ladder's pairwise judgements, oldest first (one rung's with ?rung=).",
    )
    def get(self, request, pk: int):
        ladder = _ladder(request, pk)
        page = self.paginate_queryset(selectors.judgements(ladder, _rung(request, required=False)))
        return self.get_paginated_response([selectors.judgement_json(j) for j in page])

    @extend_schema(
        operation_id="ladders_pairwise_create",
        request=JudgementIn,
        responses={201: Judgement},
        description="Judge a pair: which of two runs of the rung (as shown left and right) is"
        " better, or a tie. The owner and the ladder's reviewers judge (anyone else who reads"
        " the ladder: 403); a pair once per reviewer (409 already_judged).",
    )
    def post(self, request, pk: int):
        ladder = _judged_ladder(request, pk)
        body = JudgementIn(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            judgement = services.record_judgement(
                ladder=ladder,
                reviewer=request.user,
                given=services.PairInput(**body.validated_data),
            )
        except services.Invalid as exc:
            raise ValidationError(
                {
                    field: [ErrorDetail(m, "does_not_exist") for m in messages]
                    for field, messages in exc.errors.items()
                }
            ) from None
        return Response(selectors.judgement_json(judgement), status=status.HTTP_201_CREATED)


class NextPairView(GenericAPIView):
    queryset = Ladder.objects.none()

    @extend_schema(
        operation_id="ladders_pairwise_next",
        parameters=[RUNG_REQUIRED],
        responses={200: NEXT_PAIR, 204: None},
        description="The next pair for the caller to judge on the rung: two runs by two"
        " different climbers, sides drawn at random, climbers not named. 204 when none is"
        " left.",
    )
    def get(self, request, pk: int):
        ladder = _judged_ladder(request, pk)
        rung = _rung(request, required=True)
        if rung not in {r["id"] for r in selectors.rungs(ladder)}:
            raise ValidationError({"rung": [ErrorDetail(services.NOT_A_RUNG, "does_not_exist")]})
        pair = selectors.next_pair(ladder, request.user, rung)
        if pair is None:
            return Response(status=status.HTTP_204_NO_CONTENT)
        runs = Run.objects.in_bulk([pair["left"], pair["right"]])
        return Response(
            {
                "rung": rung,
                "left": _side(runs[pair["left"]]),
                "right": _side(runs[pair["right"]]),
                "remaining": pair["remaining"],
            }
        )


class ResultsView(GenericAPIView):
    queryset = Ladder.objects.none()

    @extend_schema(
        operation_id="ladders_pairwise_results",
        parameters=[RUNG],
        responses=RESULTS,
        description="One rung's pairwise results (every rung's together without ?rung=): the"
        " preference table and the Bradley–Terry ranking with 95 % intervals.",
    )
    def get(self, request, pk: int):
        ladder = _ladder(request, pk)
        return Response(selectors.results(ladder, _rung(request, required=False)))


class AgreementView(GenericAPIView):
    queryset = Ladder.objects.none()

    @extend_schema(operation_id="ladders_agreement", responses=AGREEMENT)
    def get(self, request, pk: int):
        return Response(selectors.agreement_report(_ladder(request, pk)))


class DisagreementsView(GenericAPIView):
    queryset = Ladder.objects.none()

    @extend_schema(operation_id="ladders_disagreements", responses=DISAGREEMENTS)
    def get(self, request, pk: int):
        page = self.paginate_queryset(selectors.disagreements(_ladder(request, pk)))
        return self.get_paginated_response(page)


def settings_json(ladder: Ladder, row: ReviewSettings | None) -> dict:
    return {
        "backlogThreshold": row.backlog_threshold if row else None,
        "backlog": selectors.backlog(ladder),
        "over": row.backlog_over if row else False,
    }


class SettingsView(GenericAPIView):
    queryset = Ladder.objects.none()

    @extend_schema(operation_id="ladders_backlog", responses=SETTINGS)
    def get(self, request, pk: int):
        ladder = _ladder(request, pk)
        return Response(settings_json(ladder, ReviewSettings.objects.filter(ladder=ladder).first()))

    @extend_schema(
        operation_id="ladders_backlog_update",
        request=SettingsIn,
        responses=SETTINGS,
        description="The owner sets the backlog threshold (null: no review.backlog events).",
    )
    def put(self, request, pk: int):
        ladder = _ladder(request, pk)
        if not controls(request.user, ladder):
            raise PermissionDenied(NOT_CONTROLLED)
        body = SettingsIn(data=request.data)
        body.is_valid(raise_exception=True)
        with transaction.atomic():
            row = services.save_settings(
                ladder=ladder, backlog_threshold=body.validated_data["backlogThreshold"]
            )
        return Response(settings_json(ladder, row))
