from django.urls import path

from ladders.api.views import LadderViewSet

collection = LadderViewSet.as_view({"get": "list", "post": "create"})
detail = LadderViewSet.as_view({"get": "retrieve", "put": "update", "delete": "destroy"})

urlpatterns = [
    path("ladders/", collection, name="ladder-list"),
    path("ladders/summary", LadderViewSet.as_view({"get": "summary"}), name="ladder-summary"),
    path("ladders/<int:pk>/", detail, name="ladder-detail"),
    path(
        "ladders/<int:pk>/rungs/order",
        LadderViewSet.as_view({"post": "rung_order"}),
        name="ladder-rung-order",
    ),
    path("ladders/<int:pk>/run", LadderViewSet.as_view({"post": "run"}), name="ladder-run"),
    path("ladders/<int:pk>/stop", LadderViewSet.as_view({"post": "stop"}), name="ladder-stop"),
    path(
        "ladders/<int:pk>/climbers/retry",
        LadderViewSet.as_view({"post": "retry"}),
        name="ladder-retry",
    ),
    path(
        "ladders/<int:pk>/progress",
        LadderViewSet.as_view({"get": "progress"}),
        name="ladder-progress",
    ),
    path(
        "ladders/<int:pk>/journal",
        LadderViewSet.as_view({"post": "journal"}),
        name="ladder-journal",
    ),
    path("ladders/<int:pk>/queue", LadderViewSet.as_view({"get": "queue"}), name="ladder-queue"),
    path(
        "ladders/<int:pk>/queue/<int:run>/reservation",
        LadderViewSet.as_view({"post": "reservation", "delete": "reservation"}),
        name="ladder-queue-reservation",
    ),
    path(
        "ladders/<int:pk>/queue/<int:run>/reviews",
        LadderViewSet.as_view({"post": "queue_review"}),
        name="ladder-queue-review",
    ),
]
