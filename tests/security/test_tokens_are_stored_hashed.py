"""API tokens are stored as SHA-256 digests: the raw key is shown once and is nowhere in the
database afterwards, and what the database does hold (the digest, the prefix) opens nothing."""

import hashlib
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from loopweb.runs.models import ApiToken

pytestmark = pytest.mark.django_db


def calls_with(raw: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    return client.get("/api/ladders/").status_code


def database_text() -> str:
    """Every row of every table, as text."""
    chunks = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")  # noqa: S608
            chunks.extend(repr(row) for row in cursor.fetchall())
    return "\n".join(chunks)


def issued_tokens(owner) -> list[str]:
    out = StringIO()
    call_command("create_user", "dana", "--password", "pw", "--role", "driver", stdout=out)
    from_command = out.getvalue().strip().splitlines()[-1]
    response = APIClient().post(
        "/api/auth/token", {"username": owner.username, "password": "pw"}, format="json"
    )
    return [from_command, response.json()["token"]]


def test_no_raw_token_is_anywhere_in_the_database(owner):
    raws = issued_tokens(owner)

    text = database_text()
    for raw in raws:
        assert calls_with(raw) == 200
        assert raw not in text
        digest = hashlib.sha256(raw.encode()).hexdigest()
        assert ApiToken.objects.filter(digest=digest).count() == 1


def test_what_the_database_holds_opens_nothing(owner):
    for raw in issued_tokens(owner):
        token = ApiToken.objects.get(digest=hashlib.sha256(raw.encode()).hexdigest())
        assert calls_with(token.digest) == 401
        assert calls_with(token.prefix) == 401


def test_a_deleted_token_or_a_deactivated_user_opens_nothing(owner):
    raw = issued_tokens(owner)[1]
    owner.is_active = False
    owner.save()
    assert calls_with(raw) == 401
    owner.is_active = True
    owner.save()
    assert calls_with(raw) == 200
    ApiToken.objects.filter(user=owner).delete()
    assert calls_with(raw) == 401


def test_a_token_in_the_query_string_is_not_accepted(owner):
    raw = issued_tokens(owner)[1]
    assert APIClient().get("/api/ladders/", {"token": raw}).status_code == 401
