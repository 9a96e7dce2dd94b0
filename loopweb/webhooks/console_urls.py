from django.urls import path

from loopweb.webhooks import console

app_name = "webhooks_console"

urlpatterns = [
    path("settings/webhooks/", console.webhook_list, name="list"),
    path("settings/webhooks/<int:pk>/", console.webhook_detail, name="detail"),
    path("settings/webhooks/<int:pk>/log", console.webhook_log, name="log"),
    path("settings/webhooks/<int:pk>/ping", console.webhook_ping, name="ping"),
    path("settings/webhooks/<int:pk>/rotate", console.webhook_rotate, name="rotate"),
    path("settings/webhooks/<int:pk>/delete", console.webhook_delete, name="delete"),
    path(
        "settings/webhooks/<int:pk>/deliveries/<int:delivery_id>/redeliver",
        console.webhook_redeliver,
        name="redeliver",
    ),
]
