"""REST endpoints for signals and acceptance (API.md, "Signals and acceptance"). Thin: each
calls one service or selector."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.response import Response
from rest_framework.views import APIView

from loopweb.runs.access import role_of
from loopweb.runs.models import Role
from signals_app import selectors, services
from signals_app.api import openapi
from signals_app.api import serializers as s
from signals_app.models import Signal


def check_may_write_signals(user, run=None) -> None:
    """Signals about a run come from its owner, drivers and staff. Reviewers record verdicts
    through reviews, as ``referee`` signals; a reader of a published run only reads it."""
    if role_of(user) == Role.REVIEWER and not user.is_staff:
        raise PermissionDenied("Reviewers record verdicts through reviews.")
    if run is not None and not services.writable_runs(user).filter(pk=run.pk).exists():
        raise PermissionDenied("Only the run's owner, drivers and staff add signals to it.")


class RunSignalsView(GenericAPIView):
    serializer_class = s.SignalSerializer
    parser_classes = [JSONParser]
    queryset = Signal.objects.none()  # for the schema; requests read through selectors

    @extend_schema(responses=s.SignalSerializer(many=True))
    def get(self, request, pk: int):
        run = selectors.visible_run_or_404(request.user, pk)
        page = self.paginate_queryset(selectors.run_signals(run))
        return self.get_paginated_response(s.SignalSerializer(page, many=True).data)

    @extend_schema(
        request=openapi.SIGNALS_BODY,
        description="A signal, or a list of signals (all or none). Re-sending a signal with the "
        "same id and content appends nothing.",
        responses={201: openapi.SIGNALS_ANSWER, 200: openapi.SIGNALS_ANSWER},
    )
    def post(self, request, pk: int):
        run = selectors.visible_run_or_404(request.user, pk)
        check_may_write_signals(request.user, run)
        appended = services.add_signals(run=run, body=request.data, recorded_by=request.user)
        data = s.SignalSerializer(appended.signals, many=True).data
        body = data if isinstance(request.data, list) else data[0]
        code = status.HTTP_201_CREATED if appended.created else status.HTTP_200_OK
        return Response(body, status=code)


class RunOutcomeView(APIView):
    @extend_schema(responses=s.OutcomeSerializer)
    def get(self, request, pk: int):
        run = selectors.visible_run_or_404(request.user, pk)
        return Response(selectors.run_outcome(run).as_json())


class LateEventView(APIView):
    parser_classes = [JSONParser]

    @extend_schema(
        request=openapi.LATE_EVENT_BODY,
        responses={201: s.MatchedSerializer, 200: s.MatchedSerializer},
    )
    def post(self, request):
        check_may_write_signals(request.user)
        matched = services.add_late_event(user=request.user, body=request.data)
        return Response(
            {"matched": matched.run_ids},
            status=status.HTTP_201_CREATED if matched.created else status.HTTP_200_OK,
        )


class AcceptanceRuleView(APIView):
    parser_classes = [JSONParser]

    @extend_schema(responses=s.AcceptanceRuleSerializer)
    def get(self, request):
        return Response(services.current_rule_of(request.user.pk))

    @extend_schema(
        request=openapi.RULE_BODY,
        responses={200: s.AcceptanceRuleSerializer, 400: OpenApiResponse(description="E195")},
    )
    def put(self, request):
        rule = services.set_acceptance_rule(user=request.user, body=request.data)
        return Response(rule.as_json())
