"""GET /api/ladders/{id}/history, /history/{recordId}, /compare, and progress as CSV.

JSON by default; CSV with ``?format=csv`` or ``Accept: text/csv`` (errors stay JSON)."""

from django.http import Http404
from django.shortcuts import get_object_or_404
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.generics import GenericAPIView
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from ladders.api.views import LadderViewSet
from ladders.models import Ladder
from ladders.selectors import ladders_for
from loopweb.history import exports, records, schema, selectors
from loopweb.runs.api.renderers import JSONRenderer

FORMAT = OpenApiParameter(
    "format", str, enum=["json", "csv"], description="csv: the same content as CSV."
)
CSV = OpenApiResponse(OpenApiTypes.STR, description="The same content as CSV (docs/exports.md).")


def json_or_csv(serializer) -> dict:
    return {(200, "application/json"): serializer, (200, "text/csv"): CSV}


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data.encode()


def wants_csv(request) -> bool:
    return request.GET.get("format") == "csv" or "text/csv" in request.headers.get("Accept", "")


class FormatFirst(DefaultContentNegotiation):
    """An explicit ``?format=`` names the representation, whatever the Accept header says (a
    client that always sends ``Accept: application/json`` still gets the CSV it asked for)."""

    def select_renderer(self, request, renderers, format_suffix=None):
        wanted = format_suffix or request.query_params.get(self.settings.URL_FORMAT_OVERRIDE)
        for renderer in renderers if wanted else ():
            if renderer.format == wanted:
                return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)


class Exported(APIView):
    """A read answered as JSON or CSV."""

    renderer_classes = [JSONRenderer, CSVRenderer]
    content_negotiation_class = FormatFirst

    def ladder(self):
        return get_object_or_404(ladders_for(self.request.user), pk=self.kwargs["pk"])

    def as_csv(self) -> bool:
        return getattr(self.request.accepted_renderer, "format", "") == "csv"

    def csv(self, text: str, name: str) -> Response:
        return Response(text, headers={"Content-Disposition": f'attachment; filename="{name}"'})

    def finalize_response(self, request, response, *args, **kwargs):
        if isinstance(response, Response) and not isinstance(response.data, str):
            # An error (or any JSON body) is JSON, whatever the format asked for.
            request.accepted_renderer = JSONRenderer()
            request.accepted_media_type = JSONRenderer.media_type
        return super().finalize_response(request, response, *args, **kwargs)


class HistoryView(GenericAPIView):
    queryset = Ladder.objects.none()  # the path's id is a ladder's (for the schema)

    @extend_schema(
        operation_id="ladders_history_list",
        responses=schema.RecordSummarySerializer(many=True),
    )
    def get(self, request, pk: int):
        ladder = get_object_or_404(ladders_for(request.user), pk=pk)
        page = self.paginate_queryset(selectors.records_of(ladder))
        return self.get_paginated_response([records.summary_json(r) for r in page])


class RecordView(Exported):
    @extend_schema(
        operation_id="ladders_history_record",
        parameters=[FORMAT],
        responses=json_or_csv(schema.RecordSerializer),
    )
    def get(self, request, pk: int, record_id: int):
        ladder = self.ladder()
        record = selectors.record_of(ladder, record_id)
        if record is None:
            raise Http404
        if self.as_csv():
            name = f"ladder-{ladder.pk}-record-{record.pk}.csv"
            return self.csv(exports.standing_csv(record), name)
        return Response(records.detail_json(record))


#: A side of a compare as the schema states it: a record id (digits) or ``current``.
SIDE_PATTERN = r"^([1-9][0-9]{0,17}|current)$"


class CompareView(Exported):
    @extend_schema(
        operation_id="ladders_compare",
        parameters=[
            *(
                OpenApiParameter(
                    side,
                    {"type": "string", "pattern": SIDE_PATTERN},
                    required=True,
                    description="A record id of this ladder, or current.",
                )
                for side in ("a", "b")
            ),
            OpenApiParameter(
                "alpha",
                {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
                description="The significance level of the verdicts, 0 < alpha < 0.5 "
                "(default 0.05; docs/statistics.md).",
            ),
            OpenApiParameter(
                "change",
                {"type": "integer", "minimum": 1, "maximum": 100},
                description="The change in a rung's pass rate the power hint plans for, in "
                "percentage points, 1-100 (default 30).",
            ),
            FORMAT,
        ],
        responses=json_or_csv(schema.CompareSerializer),
    )
    def get(self, request, pk: int):
        ladder = self.ladder()
        result = selectors.compared(
            ladder,
            request.GET.get("a"),
            request.GET.get("b"),
            request.GET.get("alpha"),
            request.GET.get("change"),
        )
        if self.as_csv():
            name = f"ladder-{ladder.pk}-compare-{result['a']['id']}-{result['b']['id']}.csv"
            return self.csv(exports.compare_csv(result), name)
        return Response(result)


class ProgressExport(Exported):
    def get(self, request, pk: int):
        ladder = self.ladder()
        standing = selectors.current(ladder)
        return self.csv(exports.standing_csv(standing), f"ladder-{ladder.pk}-progress.csv")


_progress_json = LadderViewSet.as_view({"get": "progress"})
_progress_csv = ProgressExport.as_view()


@csrf_exempt
def progress(request, pk: int):
    """GET /api/ladders/{id}/progress: the ladders app's board as JSON, or the standing as CSV
    (one row per rung slot, with what each slot's runs cost) for ``?format=csv`` or ``Accept:
    text/csv``."""
    if wants_csv(request):
        return _progress_csv(request, pk=pk)
    return _progress_json(request, pk=pk)
