import gzip
import re

from django.http import HttpResponse
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.response import Response

from ladders import access, origins, progress, selectors, services, shared_progress
from ladders import queue as review_queue
from ladders.api import serializers as s
from ladders.models import Ladder
from ladders.statuses import NEEDS_ATTENTION, RUNNING
from loopweb.runs import budgeting, jsonbytes, waiting_marks
from loopweb.runs.json_fields import MAX_ID

ACCEPTS_GZIP = re.compile(r"\bgzip\b")
ProgressResponse = OpenApiResponse(
    progress.SCHEMA, description="The ladder's progress board (see API.md)."
)


def progress_response(
    request, board: shared_progress.Board, budgets: list | None = None
) -> HttpResponse:
    """Progress as encoded, and compressed, once for all its viewers (``ladders.shared_progress``):
    a large board is a few megabytes of JSON and a tenth of that gzipped. ``budgets``: the enabled
    budgets, when this request read them already."""
    waiting = _waiting_for(board, budgets=budgets)
    if waiting:
        return _tagged(_json(request, waiting), board.version)
    if _accepts_gzip(request):
        response = HttpResponse(board.gzipped, content_type="application/json")
        response.headers["Content-Encoding"] = "gzip"
    else:
        response = HttpResponse(board.encoded, content_type="application/json")
    return _tagged(response, board.version)


def _waiting_for(
    board: shared_progress.Board, delta: bytes | None = None, budgets: list | None = None
) -> bytes | None:
    """The board (or ``delta``, a part of it as encoded) with ``waitingFor`` on each slot whose
    next job waits on a provider budget at its cap, or None when none does (one query when no
    budget is enabled; nothing is decoded then). Read at each read; a version follows it through
    the marks a slot's cell gets when it begins or stops waiting
    (``loopweb.runs.waiting_marks``)."""
    figures = board.figures
    if not figures or figures["status"] not in (RUNNING, NEEDS_ATTENTION):
        return None
    prefix = origins.dispatch_prefix(board.ladder_id, figures["id"])
    jobs = budgeting.waiting_jobs(prefix, enabled=budgets)
    if not jobs:
        return None
    body = board.body if delta is None else jsonbytes.loads(delta.decode())
    waiting = {(origins.split(job.origin)[1], job.cell_key): job.waiting_for for job in jobs}
    patched = dict(body)
    patched["climbers"] = [
        {
            **climber,
            "slots": [
                {**slot, "waitingFor": waiting[key].as_json()}
                if (key := (slot["rung"], slot.get("cellKey"))) in waiting
                else slot
                for slot in climber["slots"]
            ],
        }
        for climber in body["climbers"]
    ]
    return jsonbytes.dumps(patched, str)


def _accepts_gzip(request) -> bool:
    return bool(ACCEPTS_GZIP.search(request.headers.get("Accept-Encoding", "")))


def _json(request, body: bytes) -> HttpResponse:
    """Encoded JSON, compressed when the client accepts it and it is worth it. Compressed for
    this request alone, so at the fastest level (as web servers compress what they serve): a
    400 KB delta in 1.5 ms to 23 KB, against 3.4 ms to 20 KB at level 5, which a whole board,
    compressed once for all its viewers, keeps."""
    if _accepts_gzip(request) and len(body) > 2048:
        response = HttpResponse(
            gzip.compress(body, compresslevel=1, mtime=0), content_type="application/json"
        )
        response.headers["Content-Encoding"] = "gzip"
        return response
    return HttpResponse(body, content_type="application/json")


def _tagged(response: HttpResponse, version: str) -> HttpResponse:
    response.headers["ETag"] = f'"{version}"'
    response.headers["Cache-Control"] = "private, no-cache"
    patch_vary_headers(response, ["Accept-Encoding"])
    return response


def _client_versions(request) -> list[str]:
    """The versions an ``If-None-Match`` header names (weak or strong)."""
    header = request.headers.get("If-None-Match", "")
    return [tag.strip().removeprefix("W/").strip('"') for tag in header.split(",") if tag.strip()]


class LadderViewSet(viewsets.GenericViewSet):
    serializer_class = s.LadderConfigSerializer
    lookup_value_regex = r"\d+"

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Ladder.objects.none()
        visible = selectors.ladders_for(self.request.user)
        if self.action == "progress":
            return visible  # polled by every viewer: the read needs the ladder row alone
        return visible.prefetch_related(
            "rungs", "group_links", "combination_links", "reviewers", "assignees"
        ).select_related("owner")

    def owned(self) -> Ladder:
        ladder = self.get_object()
        if not access.controls(self.request.user, ladder):
            raise PermissionDenied(access.NOT_CONTROLLED)
        return ladder

    def _config(self, ladder):
        ladder = self.get_queryset().get(pk=ladder.pk)
        rungs = list(ladder.rungs.all())
        return selectors.ladder_config_json(ladder, selectors.stale_versions(rungs))

    def list(self, request):
        page = self.paginate_queryset(self.get_queryset().order_by("name", "id"))
        stale = selectors.stale_versions([r for ladder in page for r in ladder.rungs.all()])
        return self.get_paginated_response([selectors.ladder_config_json(x, stale) for x in page])

    def create(self, request):
        if not access.creates_ladders(request.user):
            raise PermissionDenied(access.NOT_CREATED)
        body = self.get_serializer(data=request.data)
        body.is_valid(raise_exception=True)
        ladder = services.save_ladder(owner=request.user, data=body.validated_data)
        return Response(self._config(ladder), status=status.HTTP_201_CREATED)

    def retrieve(self, request, pk=None):
        return Response(self._config(self.get_object()))

    def update(self, request, pk=None):
        ladder = self.owned()
        body = self.get_serializer(
            data=request.data, context={**self.get_serializer_context(), "owner": ladder.owner}
        )
        body.is_valid(raise_exception=True)
        services.save_ladder(
            owner=ladder.owner, data=body.validated_data, ladder=ladder, by=request.user
        )
        return Response(self._config(ladder))

    def destroy(self, request, pk=None):
        services.delete_ladder(ladder=self.owned())
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        request=None,
        responses=inline_serializer(
            "LadderSummary",
            {
                "id": serializers.IntegerField(),
                "name": serializers.CharField(),
                "status": serializers.CharField(),
                "climbers": serializers.IntegerField(allow_null=True),
                "rungs": serializers.IntegerField(
                    help_text="The latest dispatch's rungs (its slot counts and runs are counted "
                    "over them); the configuration's before the first Run."
                ),
                "configuredRungs": serializers.IntegerField(
                    help_text="The configuration's rungs now (edits apply to the next Run)."
                ),
                "slotCounts": serializers.DictField(allow_null=True),
                "runs": serializers.DictField(allow_null=True),
            },
            many=True,
        ),
    )
    @action(detail=False, methods=["get"])
    def summary(self, request):
        mine = Ladder.objects.filter(owner=request.user).order_by("name", "id")
        page = self.paginate_queryset(mine)
        return self.get_paginated_response(selectors.ladder_summaries(page))

    @extend_schema(request=s.RungOrderSerializer, responses=s.LadderConfigSerializer)
    @action(detail=True, methods=["post"], url_path="rungs/order")
    def rung_order(self, request, pk=None):
        ladder = self.owned()
        body = s.RungOrderSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.reorder_rungs(ladder=ladder, order=body.validated_data["order"], by=request.user)
        return Response(self._config(ladder))

    @extend_schema(request=None, responses={200: ProgressResponse})
    @action(detail=True, methods=["post"])
    def run(self, request, pk=None):
        ladder = self.owned()
        services.start_dispatch(ladder=ladder, by=request.user)
        return progress_response(request, shared_progress.read(Ladder.objects.get(pk=ladder.pk)))

    @extend_schema(
        request=s.StopSerializer,
        responses=inline_serializer("Stopped", {"cancelled": serializers.IntegerField()}),
    )
    @action(detail=True, methods=["post"])
    def stop(self, request, pk=None):
        ladder = self.owned()
        body = s.StopSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        cancelled = services.stop_dispatch(
            ladder=ladder, cancel_running=body.validated_data["cancelRunning"], by=request.user
        )
        return Response({"cancelled": cancelled})

    @extend_schema(request=s.RetrySerializer, responses={200: ProgressResponse})
    @action(detail=True, methods=["post"], url_path="climbers/retry")
    def retry(self, request, pk=None):
        ladder = self.owned()
        body = s.RetrySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        services.retry_climber(
            ladder=ladder, combination_key=body.validated_data["climber"], by=request.user
        )
        return progress_response(request, shared_progress.read(Ladder.objects.get(pk=ladder.pk)))

    @extend_schema(
        request=s.DispatchJournalSerializer,
        responses={201: OpenApiResponse(description="The journaled evalset run.")},
    )
    @action(detail=True, methods=["post"])
    def journal(self, request, pk=None):
        ladder = self.owned()
        body = s.DispatchJournalSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        run = services.journal_dispatch(
            ladder=ladder, evalset_hash=body.validated_data["evalset"], journaled_by=request.user
        )
        return Response(
            {
                "id": run.pk,
                "evalset": run.evalset.hash,
                "summary": run.summary,
                "journaled_at": run.journaled_at,
            },
            status=status.HTTP_201_CREATED,
        )

    @extend_schema(
        request=None,
        parameters=[
            OpenApiParameter(
                "since",
                {"type": "string", "pattern": shared_progress.VERSION_PATTERN},
                description="A version (an ETag) this client holds: only the climbers changed "
                "since then are answered (all of them when that version cannot be followed).",
            ),
            OpenApiParameter(
                "If-None-Match",
                str,
                OpenApiParameter.HEADER,
                description="The ETag of the board the client holds: 304 while it is current.",
            ),
        ],
        responses={200: ProgressResponse, 304: OpenApiResponse(description="Not modified.")},
    )
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        if "since" in request.query_params and not shared_progress.readable(
            request.query_params["since"]
        ):
            raise ValidationError(
                {"since": ["Give a version this progress answered (its ETag) as it was written."]}
            )
        if request.headers.get("If-None-Match", "").strip() == "*":
            # Any version matches a board that exists (RFC 9110): a 304 once it is found.
            board = shared_progress.read(self.get_object())
            return _tagged(HttpResponse(status=304), board.version)
        # Polled by every viewer: a current version is answered 304 by one query, which also
        # tells whether this reader may see the ladder (else the read below answers 404).
        look = None  # what the client's version was checked with, for the read to go on from
        budgets = waiting_marks.note()  # slots that began or stopped waiting: their cells
        if 1 <= int(pk) <= MAX_ID:  # an id a ladder could have (the path takes any digits)
            for version in _client_versions(request):
                checked = shared_progress.check(request.user, int(pk), version)
                if checked.unchanged:
                    return _tagged(HttpResponse(status=304), checked.unchanged)
                look = checked.look or look
        if look is None:
            board = shared_progress.read(self.get_object())
        else:
            # The check's look found this reader may see the ladder: no need to fetch it first.
            try:
                board = shared_progress.read(int(pk), look)
            except Ladder.DoesNotExist:  # deleted since
                raise NotFound from None
        if "since" in request.query_params:
            delta = shared_progress.since(board, request.query_params["since"], look)
            waiting = _waiting_for(board, delta, budgets)
            return _tagged(_json(request, waiting or delta), board.version)
        return progress_response(request, board, budgets)

    @extend_schema(
        request=None,
        responses=inline_serializer(
            "QueueEntry",
            {
                **s.slot_run_fields(),
                "reviews": serializers.IntegerField(
                    help_text="The run's reviews by the ladder's owner and reviewers (it leaves "
                    "the reviewers' queue at the ladder's reviewsPerRun)."
                ),
                "reservedUntil": serializers.DateTimeField(
                    allow_null=True,
                    help_text="When the caller's reservation of the run ends (null: none).",
                ),
            },
            many=True,
        ),
    )
    @action(detail=True, methods=["get"])
    def queue(self, request, pk=None):
        entries = review_queue.queue_for(self.get_object(), request.user)
        page = self.paginate_queryset(entries)
        return self.get_paginated_response(page)

    @extend_schema(
        request=None,
        responses={
            201: s.ReservationSerializer,
            204: OpenApiResponse(description="Released (also when there was none)."),
            409: OpenApiResponse(description="The run has no review free for the caller."),
        },
    )
    def reservation(self, request, pk=None, run=None):
        """POST keeps the run of the queue for the caller for the ladder's reservationMinutes
        (ending their other reservation on the ladder); DELETE releases it."""
        ladder = self.get_object()
        if not 1 <= run <= MAX_ID:  # an id no run could have (the path takes any digits)
            raise NotFound
        if request.method == "DELETE":
            review_queue.release(ladder, request.user, run)
            return Response(status=status.HTTP_204_NO_CONTENT)
        kept = review_queue.reserve(ladder, request.user, run)
        return Response(s.ReservationSerializer(kept).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=s.QueueReviewSerializer,
        responses={
            201: s.QueueReviewSerializer,
            409: OpenApiResponse(description="The run has its number of reviews, or the rest "
                                 "are kept for other reviewers; or the caller reviewed it."),
        },
    )  # fmt: skip
    def queue_review(self, request, pk=None, run=None):
        """A review taken from the queue: the review contract plus ``values`` answering the
        ladder's rubric (400 naming ``values.<criterion>``)."""
        ladder = self.get_object()
        body = s.QueueReviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        saved = review_queue.review(ladder, request.user, run, body.validated_data)
        return Response(s.QueueReviewSerializer(saved).data, status=status.HTTP_201_CREATED)
