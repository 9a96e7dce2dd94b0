from django.contrib.auth import authenticate
from django.db.models import Count, Prefetch
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action, api_view, permission_classes
from rest_framework.exceptions import AuthenticationFailed, NotFound, PermissionDenied
from rest_framework.generics import get_object_or_404
from rest_framework.permissions import SAFE_METHODS, AllowAny
from rest_framework.response import Response

from loopweb.runs import claim, services
from loopweb.runs.access import (
    can_repush,
    is_driver,
    reviewable_runs,
    visible_jobs,
    visible_runs,
)
from loopweb.runs.api import serializers as s
from loopweb.runs.api.filters import JobFilter, RunFilter
from loopweb.runs.api.permissions import CanPush, CanReview, CatalogWrite, IsDriver, IsOwner
from loopweb.runs.catalog import check_may_change, delete_gg_configuration, ingest_version
from loopweb.runs.cells import CasePin
from loopweb.runs.inputs import CombinationSerializer, GroupSerializer, ReviewSerializer
from loopweb.runs.models import (
    ApiToken,
    Case,
    ChecklistOverride,
    Combination,
    CoverageGroup,
    GGConfiguration,
    Job,
    ModelEntry,
    Run,
)


@extend_schema(
    request=s.TokenRequestSerializer,
    responses={
        200: inline_serializer("Token", {"token": serializers.CharField()}),
        400: OpenApiResponse(description="A field is missing or too long."),
        401: OpenApiResponse(description="Unknown username or wrong password."),
        429: OpenApiResponse(
            description="Too many sign-in attempts from this address or for this user; "
            "Retry-After says when to try again."
        ),
    },
)
@api_view(["POST"])
@permission_classes([AllowAny])
def obtain_token(request):
    body = s.TokenRequestSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    user = authenticate(
        request, username=body.validated_data["username"], password=body.validated_data["password"]
    )
    if user is None:
        raise AuthenticationFailed("Unknown username or wrong password.")
    _, raw = ApiToken.objects.issue(user, name="api")
    return Response({"token": raw})


ERROR = {"$ref": "#/components/schemas/Error"}
NOT_CREATOR = OpenApiResponse(
    ERROR, description="Only the entry's creator or staff may change or delete it."
)
IN_USE = OpenApiResponse(
    ERROR, description="Something uses the entry; `detail` names what (e.g. a combination)."
)


class RecordsCreator:
    """A catalog viewset: what it creates records the caller as its creator."""

    def perform_create(self, serializer):
        serializer.save(created_by=self.request.user)


class CreatorChanges(RecordsCreator):
    """A catalog viewset whose entries only their creator or staff change or delete
    (``loopweb.runs.catalog.may_change``): anyone else is refused before the body is read."""

    def get_object(self):
        entry = super().get_object()
        if self.request.method not in SAFE_METHODS:
            check_may_change(self.request.user, entry)
        return entry


class CaseViewSet(
    RecordsCreator,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    queryset = Case.objects.all()
    serializer_class = s.CaseSerializer
    permission_classes = [CatalogWrite]
    lookup_field = "slug"
    lookup_value_regex = "[-a-zA-Z0-9_]+"  # a slug: anything else names no case

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "with_versions": self.action == "retrieve"}

    def get_queryset(self):
        if self.action == "retrieve":
            return Case.objects.prefetch_related("versions")
        return Case.objects.all()

    @extend_schema(methods=["GET"], responses=s.CaseVersionSerializer(many=True))
    @extend_schema(
        methods=["POST"],
        request=s.CaseVersionSerializer,
        responses={
            201: s.CaseVersionSerializer,
            403: OpenApiResponse(
                ERROR,
                description="The version exists and the caller did not ingest it: only its "
                "creator or staff may re-ingest it.",
            ),
        },
    )
    @action(detail=True, methods=["get", "post"], serializer_class=s.CaseVersionSerializer)
    def versions(self, request, slug=None):
        case = self.get_object()
        if request.method == "GET":
            page = self.paginate_queryset(case.versions.all())
            return self.get_paginated_response(s.CaseVersionSerializer(page, many=True).data)
        body = s.CaseVersionSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        version = ingest_version(case=case, by=request.user, **body.validated_data)
        return Response(s.CaseVersionSerializer(version).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    partial_update=extend_schema(responses={200: s.ModelEntrySerializer, 403: NOT_CREATOR})
)
class ModelEntryViewSet(
    CreatorChanges,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    mixins.UpdateModelMixin,
    viewsets.GenericViewSet,
):
    queryset = ModelEntry.objects.all()
    serializer_class = s.ModelEntrySerializer
    permission_classes = [CatalogWrite]
    http_method_names = ["get", "post", "patch", "head", "options"]


@extend_schema_view(
    update=extend_schema(responses={200: s.GGConfigurationSerializer, 403: NOT_CREATOR}),
    destroy=extend_schema(responses={204: None, 403: NOT_CREATOR, 409: IN_USE}),
)
class GGConfigurationViewSet(CreatorChanges, viewsets.ModelViewSet):
    queryset = GGConfiguration.objects.all()
    serializer_class = s.GGConfigurationSerializer
    permission_classes = [CatalogWrite]
    http_method_names = ["get", "post", "put", "delete", "head", "options"]

    def perform_destroy(self, instance):
        delete_gg_configuration(configuration=instance, by=self.request.user)


class CombinationViewSet(
    RecordsCreator,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.CreateModelMixin,
    viewsets.GenericViewSet,
):
    queryset = Combination.objects.all()
    serializer_class = CombinationSerializer
    permission_classes = [CatalogWrite]

    def get_serializer_context(self):
        names = dict(GGConfiguration.objects.values_list("id", "name"))
        return {**super().get_serializer_context(), "configuration_names": names}


class GroupViewSet(viewsets.ModelViewSet):
    serializer_class = GroupSerializer
    permission_classes = [IsOwner]
    http_method_names = ["get", "post", "put", "delete", "head", "options"]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return CoverageGroup.objects.none()
        return CoverageGroup.objects.filter(owner=self.request.user).prefetch_related("memberships")


class JobViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = s.JobSerializer
    filterset_class = JobFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Job.objects.none()
        return visible_jobs(self.request.user).select_related("combination", "run", "retry_of")

    def get_serializer(self, *args, **kwargs):
        if args and "context" not in kwargs:
            jobs = [args[0]] if isinstance(args[0], Job) else list(args[0])
            kwargs["context"] = {**self.get_serializer_context(), **s.job_context(jobs)}
        return super().get_serializer(*args, **kwargs)

    @extend_schema(request=s.HandLaunchSerializer, responses={201: s.JobSerializer})
    def create(self, request):
        IsOwner().has_permission(request, self) or self.permission_denied(request)
        body = s.HandLaunchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        job = services.launch_by_hand(
            owner=request.user,
            pin=body.pin(),
            combination=body.validated_data["combination"],
            retry_count=body.validated_data["retryCount"],
        )
        return Response(self.get_serializer(job).data, status=status.HTTP_201_CREATED)

    # Routed in urls.py as POST jobs/{id}/cancel (no trailing slash, as the contract spells it).
    @extend_schema(request=None, responses=s.JobSerializer)
    def cancel(self, request, pk=None):
        job = services.cancel_job(job=self.get_object())
        return Response(self.get_serializer(job).data)


@extend_schema(request=s.ClaimSerializer, responses=s.JobSerializer(many=True))
@api_view(["POST"])
@permission_classes([IsDriver])
def driver_claim(request):
    body = s.ClaimSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    jobs = claim.for_showing(
        services.claim_jobs(driver=request.user, limit=body.validated_data["max"])
    )
    return Response(s.JobSerializer(jobs, many=True, context=s.job_context(jobs)).data)


@extend_schema(
    request=s.StatusSerializer,
    responses=inline_serializer(
        "StatusReply", {"status": serializers.CharField(), "cancel": serializers.BooleanField()}
    ),
)
@api_view(["POST"])
@permission_classes([IsDriver])
def driver_status(request, job_id: int):
    body = s.StatusSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    # A job that is not the caller's (or none) raises Job.DoesNotExist: the API's 404.
    job, cancel = services.report_status(
        job_id=job_id, driver=request.user, status=body.validated_data["status"]
    )
    return Response({"status": job.status, "cancel": cancel})


@extend_schema(request=s.FailSerializer, responses=s.JobSerializer)
@api_view(["POST"])
@permission_classes([IsDriver])
def driver_fail(request, job_id: int):
    body = s.FailSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    job = services.fail_job(
        job_id=job_id,
        driver=request.user,
        failure=body.validated_data["failure"],
        detail=body.validated_data["detail"],
    )
    return Response(s.JobSerializer(job).data)


class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = s.RunSerializer
    filterset_class = RunFilter

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return Run.objects.none()
        # Explicit order: Meta.ordering does not apply to a GROUP BY query.
        return (
            visible_runs(self.request.user)
            .annotate(review_count=Count("reviews"))
            .prefetch_related(
                Prefetch(
                    "overrides",
                    ChecklistOverride.objects.select_related("reviewer"),
                    to_attr="override_rows",
                )
            )
            .order_by("-finished_at", "-id")
        )

    def get_permissions(self):
        if self.action == "reviews":
            return [CanReview()]
        return super().get_permissions()

    # 200: a second push for a job that already has its run re-pushes it.
    @extend_schema(
        request=s.RunPushSerializer, responses={201: s.RunSerializer, 200: s.RunSerializer}
    )
    def create(self, request):
        CanPush().has_permission(request, self) or self.permission_denied(request)
        body = s.RunPushSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        pin = None
        if d.get("job") is None:
            pin = CasePin(d["case"], d["version"], d["variant"], d.get("engine"))
        elif (
            not is_driver(request.user)
            and not request.user.is_staff
            and not visible_jobs(request.user).filter(pk=d["job"]).exists()
        ):
            raise NotFound()
        run, created = services.push_run(
            pushed_by=request.user,
            job_id=d.get("job"),
            pin=pin,
            combination=d.get("combination"),
            outcome=d["outcome"],
            record=d["record"],
            finished_at=d["finishedAt"],
            commit=d["commit"],
            merge_artifact=d["mergeArtifact"],
            payload=body.payload(),
        )
        if created:
            # Stored a moment ago: no one has reviewed or overridden it yet.
            run.review_count, run.override_rows = 0, []
        return Response(
            s.RunSerializer(run).data,
            status=status.HTTP_201_CREATED if created else status.HTTP_200_OK,
        )

    @extend_schema(request=s.RunRepushSerializer, responses=s.RunSerializer)
    def update(self, request, pk=None):
        CanPush().has_permission(request, self) or self.permission_denied(request)
        run = self.get_object()
        if not can_repush(request.user, run):
            raise PermissionDenied("Only a driver, staff or the run's owner may re-push it.")
        body = s.RunRepushSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        run = services.repush_run(
            run=run,
            outcome=d["outcome"],
            record=d["record"],
            finished_at=d["finishedAt"],
            commit=d["commit"],
            merge_artifact=d["mergeArtifact"],
            payload=body.payload(),
        )
        return Response(s.RunSerializer(run).data)

    # Routed in urls.py as POST runs/{id}/reviews (no trailing slash, as the contract spells it).
    @extend_schema(request=ReviewSerializer, responses={201: ReviewSerializer})
    def reviews(self, request, pk=None):
        run = get_object_or_404(reviewable_runs(request.user), pk=pk)
        body = ReviewSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        d = body.validated_data
        review = services.review_run(
            run=run,
            reviewer=request.user,
            aesthetic_rating=d["aesthetic_rating"],
            writeup=d.get("writeup", ""),
            verdict=d.get("verdict") or "",
        )
        return Response(ReviewSerializer(review).data, status=status.HTTP_201_CREATED)
