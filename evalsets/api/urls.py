from django.urls import path
from rest_framework.routers import SimpleRouter

from evalsets.api import views

router = SimpleRouter(trailing_slash=True)
router.register("evalsets", views.EvalsetViewSet, basename="evalset")
router.register("proposals", views.ProposalViewSet, basename="proposal")

urlpatterns = [
    # API.md spells these without a trailing slash; they are the viewsets' extra actions.
    path(
        "evalsets/<str:hash>/runs",
        views.EvalsetViewSet.as_view({"get": "runs", "post": "runs"}),
        name="evalset-runs-bare",
    ),
    path(
        "proposals/<int:pk>/apply",
        views.ProposalViewSet.as_view({"post": "apply"}),
        name="proposal-apply-bare",
    ),
    path(
        "proposals/<int:pk>/outcomes",
        views.ProposalViewSet.as_view({"get": "outcomes"}),
        name="proposal-outcomes-bare",
    ),
    *router.urls,
]
