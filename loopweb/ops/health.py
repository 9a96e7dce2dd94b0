"""Liveness, readiness and metrics for load balancers, deploys and Prometheus."""

from __future__ import annotations

import hmac

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from loopweb.ops import metrics
from loopweb.ops.database import summary
from loopweb.ops.recovery import live_workers

_migrated = False  # once every migration is applied, this process need not ask again


@require_GET
@never_cache
def healthz(request):
    """The process is alive and serving. Touches nothing else, the database included."""
    return JsonResponse({"status": "ok"})


@require_GET
@never_cache
def readyz(request):
    """Ready to serve: the database answers, every migration is applied, a task worker was heard
    from within LOOPWEB_WORKER_DEAD_AFTER seconds. 503 names what is missing."""
    checks = {"database": "ok", "migrations": "ok", "workers": "ok"}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as exc:
        checks = {"database": f"unreachable ({summary(exc)})"}
    else:
        try:
            pending = _pending_migrations()
            if pending:
                checks["migrations"] = f"{pending} not applied"
            alive = len(live_workers())
            checks["workers"] = f"{alive} alive" if alive else "none heard from recently"
        except DatabaseError as exc:
            checks["database"] = f"failing ({summary(exc)})"
    ready = all(value == "ok" or value.endswith(" alive") for value in checks.values())
    response = JsonResponse({"status": "ready" if ready else "unready", "checks": checks})
    if not ready:
        response.status_code = 503
        response["Retry-After"] = str(settings.LOOPWEB_RETRY_AFTER)
    return response


def _pending_migrations() -> int:
    global _migrated
    if _migrated:
        return 0
    executor = MigrationExecutor(connection)
    pending = len(executor.migration_plan(executor.loader.graph.leaf_nodes()))
    _migrated = pending == 0
    return pending


@require_GET
@never_cache
def metrics_view(request):
    """Prometheus text. In production only a request bearing LOOPWEB_METRICS_TOKEN
    (``Authorization: Bearer <token>``) or a signed-in staff member may read it; with DEBUG on,
    anyone on the machine may."""
    if not _may_read_metrics(request):
        response = JsonResponse(
            {"detail": "Metrics need the metrics token (Authorization: Bearer …) or staff."},
            status=401,
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(metrics.exposition(), content_type="text/plain; version=0.0.4")


def _may_read_metrics(request) -> bool:
    token = settings.LOOPWEB_METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer "):
        return hmac.compare_digest(header[len("Bearer ") :].strip().encode(), token.encode())
    if getattr(request, "user", None) is not None and request.user.is_authenticated:
        return request.user.is_staff
    return settings.DEBUG and not token
