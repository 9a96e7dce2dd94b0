"""Provider budgets over REST (API.md, "Provider budgets"): staff write them, everyone signed in
reads them; drivers release rate-limited jobs."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.response import Response

from loopweb.runs import budgeting, services
from loopweb.runs.api import fields as f
from loopweb.runs.api.permissions import IsDriver
from loopweb.runs.api.serializers import JobSerializer
from loopweb.runs.budget_inputs import BudgetSerializer
from loopweb.runs.models import ProviderBudget

ERROR = {"$ref": "#/components/schemas/Error"}


class StaffWrite(BasePermission):
    """Everyone signed in reads the budgets; only staff write them."""

    def has_permission(self, request, view):
        if not request.user.is_authenticated:
            return False
        return request.method in SAFE_METHODS or request.user.is_staff


class BudgetViewSet(viewsets.ModelViewSet):
    serializer_class = BudgetSerializer
    permission_classes = [StaffWrite]
    queryset = ProviderBudget.objects.all()

    def get_serializer(self, *args, **kwargs):
        if args and "context" not in kwargs:
            shown = [args[0]] if isinstance(args[0], ProviderBudget) else list(args[0])
            kwargs["context"] = {
                **self.get_serializer_context(),
                "figures": budgeting.figures(shown),
            }
        return super().get_serializer(*args, **kwargs)

    def create(self, request, *args, **kwargs):
        body = BudgetSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        budget = budgeting.save_budget(budget=None, values=body.validated_data)
        return Response(self.get_serializer(budget).data, status=status.HTTP_201_CREATED)

    def update(self, request, *args, **kwargs):
        budget = self.get_object()
        body = BudgetSerializer(budget, data=request.data, partial=kwargs.get("partial", False))
        body.is_valid(raise_exception=True)
        budget = budgeting.save_budget(budget=budget, values=body.validated_data)
        return Response(self.get_serializer(budget).data)

    def perform_destroy(self, instance):
        budgeting.delete_budget(budget=instance)


class ReleaseSerializer(serializers.Serializer):
    reason = f.ChoiceField(choices=services.RELEASE_REASONS)
    retryAfter = f.FloatField(  # noqa: N815 - the contract's field name
        min_value=0,
        max_value=3600,
        required=False,
        allow_null=True,
        default=None,
        help_text="Seconds the provider asked to wait (its Retry-After); 60 when absent.",
    )


@extend_schema(
    request=ReleaseSerializer,
    responses={
        200: JobSerializer,
        404: OpenApiResponse(ERROR, description="No such job."),
        409: OpenApiResponse(
            ERROR,
            description="The job is not the caller's to release: queued, ended, or leased to "
            "another driver.",
        ),
    },
)
@api_view(["POST"])
@permission_classes([IsDriver])
def driver_release(request, job_id: int):
    """Hand back a claimed job the provider refused before the model did anything: it is queued
    again as it was (same attempt, no retry used) and its budgets back off."""
    body = ReleaseSerializer(data=request.data)
    body.is_valid(raise_exception=True)
    # A job that is not the caller's to release (or none) raises Job.DoesNotExist: the API's 404.
    job = services.release_job(
        job_id=job_id,
        driver=request.user,
        reason=body.validated_data["reason"],
        retry_after=body.validated_data["retryAfter"],
    )
    return Response(JobSerializer(job).data)
