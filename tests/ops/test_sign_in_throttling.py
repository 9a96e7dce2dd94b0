"""Brute force against POST /api/auth/token and the sign-in form is cut off per username and
per address, with a clear 429 and Retry-After."""

import re

import pytest
from django.test import Client
from rest_framework.test import APIClient

from loopweb.ops.models import SignInCount
from loopweb.ops.throttle import counter_key
from tests.factories import UserFactory
from tests.support.threads import succeeded, together

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def limits(settings):
    settings.LOOPWEB_SIGNIN_USER_LIMIT = (3, 900)
    settings.LOOPWEB_SIGNIN_ADDRESS_LIMIT = (6, 300)


@pytest.fixture
def alice(db):
    user = UserFactory(username="alice", role="owner")
    user.set_password("right-password")
    user.save()
    return user


def token(client, username, password, address="10.0.0.1"):
    return client.post(
        "/api/auth/token",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
    )


def test_a_username_is_locked_after_repeated_failures_even_with_the_right_password(alice):
    api = APIClient()
    for i in range(3):
        assert token(api, "alice", "guess", address=f"10.0.0.{i}").status_code == 401
    refused = token(api, "alice", "right-password", address="10.9.9.9")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    body = refused.json()
    assert body["code"] == "throttled"
    assert "Too many sign-in attempts for this user" in body["detail"]
    # Another user is not affected.
    UserFactory(username="bob", role="owner").set_password("x")
    assert token(api, "bob", "nope", address="10.9.9.9").status_code == 401


def test_an_address_is_cut_off_after_too_many_attempts_whatever_the_username(alice):
    api = APIClient()
    for i in range(6):
        assert token(api, f"user{i}", "guess").status_code == 401
    refused = token(api, "alice", "right-password")
    assert refused.status_code == 429
    assert "from this address" in refused.json()["detail"]
    assert token(api, "alice", "right-password", address="10.0.0.2").status_code == 200


def test_the_sign_in_form_answers_429_with_the_reason(alice):
    client = Client()
    for _ in range(3):
        response = client.post("/login/", {"username": "alice", "password": "guess"})
        assert response.status_code == 200  # the form again, with its error
    response = client.post("/login/", {"username": "alice", "password": "right-password"})
    assert response.status_code == 429
    assert response["Retry-After"]
    assert b"Too many sign-in attempts for this user" in response.content
    assert "_auth_user_id" not in client.session


def test_the_address_behind_proxies_is_the_one_the_outermost_proxy_saw(settings, alice):
    settings.LOOPWEB_PROXY_COUNT = 1
    api = APIClient()
    for i in range(6):
        api.post(
            "/api/auth/token",
            {"username": f"u{i}", "password": "x"},
            format="json",
            HTTP_X_FORWARDED_FOR="6.6.6.6",
            REMOTE_ADDR="10.0.0.254",  # the proxy
        )
    blocked = api.post(
        "/api/auth/token",
        {"username": "alice", "password": "right-password"},
        format="json",
        HTTP_X_FORWARDED_FOR="6.6.6.6",
        REMOTE_ADDR="10.0.0.254",
    )
    assert blocked.status_code == 429
    other = api.post(
        "/api/auth/token",
        {"username": "alice", "password": "right-password"},
        format="json",
        HTTP_X_FORWARDED_FOR="7.7.7.7",
        REMOTE_ADDR="10.0.0.254",
    )
    assert other.status_code == 200


@pytest.mark.django_db(transaction=True)
def test_concurrent_failures_are_all_counted(alice, settings):
    settings.LOOPWEB_SIGNIN_USER_LIMIT = (100, 900)
    settings.LOOPWEB_SIGNIN_ADDRESS_LIMIT = (100, 300)

    def guess(i):
        for _ in range(3):
            token(APIClient(), "alice", f"guess{i}", address=f"10.1.0.{i}")

    succeeded(together(8, guess))
    assert SignInCount.objects.get(key=counter_key("user", "alice")).count == 24


def test_any_username_a_client_sends_is_counted_without_storing_it(alice):
    client = Client()
    for name in ("ali\\u0000ce", "\\ud800", "x" * 100_000):  # as JSON escapes
        body = '{"username": "%s", "password": "guess"}' % name  # noqa: UP031
        answer = client.post("/api/auth/token", body, content_type="application/json")
        assert answer.status_code in (400, 401), answer.content
    keys = list(SignInCount.objects.values_list("key", flat=True))
    assert keys and all(re.fullmatch(r"(user|addr):[0-9a-f]{40}", k) for k in keys), keys


LOOK_ALIKES = ["ｖｉｃｔｉｍ２", "VICTIM2", "Victim2", "victim2"]


@pytest.fixture
def victim(db):
    user = UserFactory(username="victim2", role="owner")
    user.set_password("right-password")
    user.save()
    return user


@pytest.mark.parametrize("path", ["/login/", "/admin/login/"])
def test_a_look_alike_name_counts_against_the_name_it_signs_in_as(victim, path):
    """Django reads ``ｖｉｃｔｉｍ２`` (full-width) as ``victim2`` before it checks the password:
    the limit counts the name the same way, so no spelling of it guesses on."""
    client = Client()
    for i in range(3):
        spelling = LOOK_ALIKES[i % len(LOOK_ALIKES)]
        client.post(path, {"username": spelling, "password": "guess"}, REMOTE_ADDR=f"10.1.0.{i}")
    for spelling in LOOK_ALIKES:
        refused = client.post(
            path, {"username": spelling, "password": "right-password"}, REMOTE_ADDR="10.2.0.1"
        )
        assert refused.status_code == 429, spelling
    assert "_auth_user_id" not in client.session


def test_the_token_endpoint_counts_a_look_alike_name_as_the_same_user(victim):
    api = APIClient()
    for i in range(3):
        token(api, "ｖｉｃｔｉｍ２", "guess", address=f"10.3.0.{i}")
    assert token(api, "victim2", "right-password", address="10.4.0.1").status_code == 429
