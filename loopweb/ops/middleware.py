"""Answers while the database is away, and the request metrics."""

import logging
import time

from django.conf import settings
from django.core.signals import got_request_exception
from django.http import HttpResponse, JsonResponse

from loopweb import telemetry
from loopweb.database_lost import database_lost
from loopweb.driver.outage import Outage
from loopweb.ops.database import summary

log = logging.getLogger("loopweb.ops")

_FLAG = "_loopweb_database_lost"


#: One line when this process first answers 503 for a lost database, one when a request next
#: goes through: not a line per request.
outage = Outage("database", event="database", meanwhile="answering 503 until it is back", log=log)


def unavailable(request) -> HttpResponse:
    """503 with Retry-After: JSON under /api/ (the API's error shape), a short page elsewhere."""
    retry_after = settings.LOOPWEB_RETRY_AFTER
    message = f"The database is unreachable; try again in {retry_after} seconds."
    if request.path.startswith("/api/") or "json" in request.headers.get("Accept", ""):
        response = JsonResponse({"detail": message, "code": "database_unavailable"}, status=503)
    else:
        response = HttpResponse(
            f"<!doctype html><title>Loopweb is unavailable</title><h1>Back shortly</h1>"
            f"<p>{message}</p>",
            status=503,
        )
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    response._has_been_logged = True  # one line per outage (above), not one per request
    return response


def _remember_lost_database(sender, request=None, **kwargs):
    """An exception raised outside a view (in a middleware) never reaches process_exception:
    Django turns it into a 500 first. Mark the request so the outermost middleware can tell."""
    import sys

    exc = sys.exc_info()[1]
    if request is not None and database_lost(exc):
        setattr(request, _FLAG, exc)


got_request_exception.connect(_remember_lost_database, dispatch_uid="loopweb-database-lost")


class DatabaseUnavailableMiddleware:
    """Outermost: a request that found the database unreachable answers 503 with Retry-After,
    never a 500. Its transaction, if any, was rolled back with the connection."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        lost = getattr(request, _FLAG, None)
        if lost is not None:
            if response.status_code >= 500:
                response = unavailable(request)
            outage.lost(summary(lost))
            telemetry.DATABASE_UNAVAILABLE.inc()
        elif response.status_code < 500:
            outage.back()
        return response

    def process_exception(self, request, exception):
        if database_lost(exception):
            setattr(request, _FLAG, exception)
            return unavailable(request)
        return None


class RequestMetricsMiddleware:
    """Requests counted and timed by route (the URL pattern's name), so pushes, claims and
    progress reads per second and their latency can be watched."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        route = (match.view_name if match else None) or "unrouted"
        telemetry.HTTP_REQUESTS.labels(route, request.method, str(response.status_code)).inc()
        telemetry.HTTP_SECONDS.labels(route).observe(time.perf_counter() - started)
        if route == "driver-claim" and response.status_code == 200:
            telemetry.JOBS_CLAIMED.inc(len(getattr(response, "data", None) or ()))
        return response
