"""API "Conventions", auth: ``create_user``, ``POST /api/auth/token`` and hashed tokens."""

import datetime as dt
import hashlib
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from loopweb.runs.models import ApiToken
from tests.runs.helpers import assert_field_error

pytestmark = pytest.mark.django_db


def client_with(raw: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client


def create_user(*args) -> list[str]:
    out = StringIO()
    call_command("create_user", *args, stdout=out)
    return out.getvalue().strip().splitlines()


@pytest.mark.parametrize("role", ["owner", "reviewer", "driver"])
def test_create_user_prints_a_working_token_as_its_last_line(role):
    lines = create_user("alice", "--password", "s3cret", "--role", role)

    user = get_user_model().objects.get(username="alice")
    assert user.account.role == role
    assert user.check_password("s3cret")
    response = client_with(lines[-1]).get("/api/cases/")
    assert response.status_code == 200
    assert response.wsgi_request.user == user


def test_create_user_refuses_a_username_that_exists(owner):
    with pytest.raises(CommandError, match="already exists"):
        create_user("olive", "--password", "pw")


def test_create_user_with_staff_lets_them_use_the_admin():
    create_user("sam", "--password", "pw", "--staff")

    assert get_user_model().objects.get(username="sam").is_staff


def test_tokens_are_stored_as_digests_and_the_raw_key_is_nowhere_in_the_database():
    raw = create_user("alice", "--password", "pw")[-1]

    token = ApiToken.objects.get()
    assert token.digest == hashlib.sha256(raw.encode()).hexdigest()
    assert raw.startswith(token.prefix) and len(token.prefix) < len(raw)
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM runs_apitoken")
        stored = [str(value) for row in cursor.fetchall() for value in row]
    assert not any(raw in value for value in stored)


def test_posting_a_username_and_password_issues_a_new_token_each_time(owner, anon_api):
    first = anon_api.post("/api/auth/token", {"username": "olive", "password": "pw"}, format="json")
    second = anon_api.post(
        "/api/auth/token", {"username": "olive", "password": "pw"}, format="json"
    )

    assert first.status_code == 200, first.content
    assert set(first.json()) == {"token"}
    assert first.json()["token"] != second.json()["token"]
    for body in (first.json(), second.json()):
        assert client_with(body["token"]).get("/api/jobs/").status_code == 200
    assert ApiToken.objects.filter(user=owner).count() == 2


@pytest.mark.parametrize(
    "credentials",
    [{"username": "olive", "password": "wrong"}, {"username": "nobody", "password": "pw"}],
)
def test_wrong_credentials_get_no_token(owner, anon_api, credentials):
    response = anon_api.post("/api/auth/token", credentials, format="json")

    assert response.status_code == 401
    assert "token" not in response.json()


@pytest.mark.parametrize("missing", ["username", "password"])
def test_a_token_request_names_what_is_missing(anon_api, missing):
    body = {"username": "olive", "password": "pw"}
    del body[missing]

    assert_field_error(anon_api.post("/api/auth/token", body, format="json"), missing)


def test_an_unknown_token_is_refused(owner):
    assert client_with("not-a-token").get("/api/cases/").status_code == 401


def test_a_malformed_authorization_header_is_refused(anon_api):
    anon_api.credentials(HTTP_AUTHORIZATION="Token two parts")

    assert anon_api.get("/api/cases/").status_code == 401


def test_an_expired_token_is_refused(owner):
    token, raw = ApiToken.objects.issue(owner)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - dt.timedelta(seconds=1))

    assert client_with(raw).get("/api/cases/").status_code == 401


def test_a_deactivated_users_token_is_refused(owner):
    _, raw = ApiToken.objects.issue(owner)
    owner.is_active = False
    owner.save()

    assert client_with(raw).get("/api/cases/").status_code == 401


def test_an_unauthenticated_answer_asks_for_a_token(anon_api):
    response = anon_api.get("/api/cases/")

    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def _values(instance) -> dict | None:
    if instance is None:
        return None
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


def _as_loaded(token):
    return _values(token), _values(token.user), _values(getattr(token.user, "account", None))


@pytest.mark.parametrize("with_account", [True, False])
def test_a_token_is_found_with_its_user_and_account_in_one_statement(
    owner, django_assert_num_queries, with_account
):
    from loopweb.runs.auth import token_by_digest
    from loopweb.runs.models.accounts import token_digest

    token, raw = ApiToken.objects.issue(owner, name="ci")
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() + dt.timedelta(days=1))
    if not with_account:
        owner.account.delete()
    by_orm = ApiToken.objects.select_related("user", "user__account").get(pk=token.pk)

    with django_assert_num_queries(1):
        found = token_by_digest(token_digest(raw))
        loaded = _as_loaded(found)  # the user and account come with it: no query of their own

    assert loaded == _as_loaded(by_orm)
    assert found.expires_at.tzinfo is not None
    assert found.user.account.role == "owner" if with_account else loaded[2] is None
    assert token_by_digest(token_digest("not-a-token")) is None
