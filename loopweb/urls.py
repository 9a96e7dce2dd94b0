from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from loopweb.ops import health

handler400 = "loopweb.runs.api.errors.bad_request"
handler403 = "loopweb.runs.api.errors.permission_denied"
handler404 = "loopweb.runs.api.errors.not_found"
handler500 = "loopweb.runs.api.errors.server_error"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", health.metrics_view, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="api-docs"),
    path("api/", include("loopweb.history.urls")),
    path("api/", include("loopweb.reviewing.urls")),
    path("api/", include("ladders.api.urls")),
    path("api/", include("signals_app.api.urls")),
    path("api/", include("evalsets.api.urls")),
    path("api/", include("loopweb.runs.api.urls")),
    path("api/", include("loopweb.webhooks.urls")),
    path("", include("evalsets.pages.urls")),
    path("", include("loopweb.webhooks.console_urls")),
    path("", include("loopweb.history.console_urls")),
    path("", include("loopweb.reviewing.console_urls")),
    path("", include("loopweb.console.urls")),
]
