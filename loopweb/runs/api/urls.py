from django.urls import path
from rest_framework.routers import SimpleRouter

from loopweb.runs.api import budgets, overrides, views

router = SimpleRouter(trailing_slash=True)
router.register("cases", views.CaseViewSet, basename="case")
router.register("models", views.ModelEntryViewSet, basename="model-entry")
router.register("gg-configurations", views.GGConfigurationViewSet, basename="gg-configuration")
router.register("combinations", views.CombinationViewSet, basename="combination")
router.register("groups", views.GroupViewSet, basename="group")
router.register("jobs", views.JobViewSet, basename="job")
router.register("runs", views.RunViewSet, basename="run")
router.register("budgets", budgets.BudgetViewSet, basename="budget")

urlpatterns = [
    path("auth/token", views.obtain_token, name="auth-token"),
    path("driver/claim", views.driver_claim, name="driver-claim"),
    path("driver/jobs/<int:job_id>/status", views.driver_status, name="driver-status"),
    path("driver/jobs/<int:job_id>/fail", views.driver_fail, name="driver-fail"),
    path("driver/jobs/<int:job_id>/release", budgets.driver_release, name="driver-release"),
    path(
        "runs/<int:pk>/reviews", views.RunViewSet.as_view({"post": "reviews"}), name="run-reviews"
    ),
    path(
        "runs/<int:pk>/overrides",
        overrides.RunOverridesView.as_view(),
        name="run-overrides",
    ),
    path("jobs/<int:pk>/cancel", views.JobViewSet.as_view({"post": "cancel"}), name="job-cancel"),
    *router.urls,
]
