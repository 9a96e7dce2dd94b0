"""While the database is unreachable every request answers 503 with Retry-After (JSON under
/api/), never a 500; a statement that fails on a working connection is still a server error."""

import contextlib
import json

import psycopg
import pytest
from django.db import InternalError, OperationalError, connection
from django.test import Client, override_settings

from loopweb.database_lost import database_lost

pytestmark = pytest.mark.django_db


@contextlib.contextmanager
def database(error: Exception):
    """Every statement of this thread fails as the driver raises ``error``."""

    def fail(execute, sql, params, many, context):
        raise OperationalError(str(error)) from error

    with connection.execute_wrapper(fail):
        yield


REFUSED = psycopg.OperationalError(
    'connection to server at "127.0.0.1", port 5432 failed: Connection refused'
)
SHUTTING_DOWN = psycopg.errors.AdminShutdown("terminating connection due to administrator command")


@pytest.mark.parametrize("error", [REFUSED, SHUTTING_DOWN], ids=["refused", "shut down"])
def test_the_api_answers_503_with_retry_after_and_a_json_body(owner_api, error, settings):
    settings.LOOPWEB_RETRY_AFTER = 7
    with database(error):
        response = owner_api.get("/api/ladders/")
    assert response.status_code == 503
    assert response["Retry-After"] == "7"
    body = json.loads(response.content)
    assert body["code"] == "database_unavailable"
    assert "try again in 7 seconds" in body["detail"]


def test_a_push_answers_503_not_500(driver_api):
    with database(REFUSED):
        response = driver_api.post("/api/runs/", {"job": 1, "outcome": "completed"}, format="json")
    assert response.status_code == 503
    assert response["Retry-After"]


def test_a_console_page_answers_503_too(owner):
    client = Client()
    client.force_login(owner)
    with database(REFUSED):
        response = client.get("/")
    assert response.status_code == 503
    assert response["Retry-After"]
    assert b"unreachable" in response.content


class FailingMiddleware:
    """A middleware that reaches the database after the view: Django turns its error into a
    500 before any process_exception could see it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        raise OperationalError("server closed the connection") from psycopg.OperationalError(
            "server closed the connection unexpectedly"
        )
        return response  # pragma: no cover


def test_a_lost_database_outside_the_view_answers_503_too(settings, owner_api):
    settings.MIDDLEWARE = [
        *settings.MIDDLEWARE,
        "tests.ops.test_a_lost_database_on_the_web.FailingMiddleware",
    ]
    client = Client(raise_request_exception=False)
    response = client.get("/api/ladders/")
    assert response.status_code == 503
    assert response["Retry-After"]


@override_settings(DEBUG=False)
def test_a_deadlock_is_not_an_outage(owner_api):
    client = owner_api
    client.raise_request_exception = False
    with database(psycopg.errors.DeadlockDetected("deadlock detected")):
        response = client.get("/api/ladders/")
    assert response.status_code == 500


def test_what_counts_as_a_lost_database():
    def wrapped(error):
        try:
            raise OperationalError(str(error)) from error
        except OperationalError as exc:
            return exc

    assert database_lost(wrapped(REFUSED))
    assert database_lost(wrapped(SHUTTING_DOWN))
    assert database_lost(wrapped(psycopg.errors.CannotConnectNow("the database is starting up")))
    assert not database_lost(wrapped(psycopg.errors.DeadlockDetected("deadlock detected")))
    assert not database_lost(wrapped(psycopg.errors.QueryCanceled("statement timeout")))
    assert not database_lost(OperationalError("database is locked"))  # SQLite
    assert not database_lost(ValueError("no"))


def test_a_command_cut_off_mid_answer_is_a_lost_database():
    # A connection cut while it commits through PgBouncer: the driver reads two answers to one
    # COMMIT (the server's FATAL, then the pooler's) and raises InternalError with no SQLSTATE.
    cut = psycopg.InternalError("received 2 results from command 'COMMIT'")
    try:
        raise InternalError(str(cut)) from cut
    except InternalError as exc:
        assert database_lost(exc)
    # An internal error the server reports (SQLSTATE XX000) is a failing statement.
    assert not database_lost(psycopg.errors.InternalError_("could not open relation"))
