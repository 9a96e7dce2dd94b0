from django.urls import path

from loopweb.webhooks import views

ids = "<int:pk>"

urlpatterns = [
    path(
        "webhooks/",
        views.WebhookViewSet.as_view({"get": "list", "post": "create"}),
        name="webhook-list",
    ),
    path(
        f"webhooks/{ids}/",
        views.WebhookViewSet.as_view({"get": "retrieve", "put": "update", "delete": "destroy"}),
        name="webhook-detail",
    ),
    path(
        f"webhooks/{ids}/deliveries",
        views.WebhookViewSet.as_view({"get": "deliveries"}),
        name="webhook-deliveries",
    ),
    path(
        f"webhooks/{ids}/ping", views.WebhookViewSet.as_view({"post": "ping"}), name="webhook-ping"
    ),
    path(
        f"webhooks/{ids}/deliveries/<int:delivery_id>/redeliver",
        views.WebhookViewSet.as_view({"post": "redeliver"}),
        name="webhook-redeliver",
    ),
]
