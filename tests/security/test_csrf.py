"""CSRF is enforced on every session POST (and PUT, PATCH, DELETE): a browser's session cookie
alone never changes anything, on the console, the admin or the API. Token calls carry no
ambient credential and need no CSRF token."""

import pytest
from django.test import Client
from django.urls import reverse

from ladders.models import Dispatch
from tests.security.test_authorization_matrix import MATRIX, row_of
from tests.security.urls import UNSAFE, all_patterns, fill

pytestmark = pytest.mark.django_db

VALUES = {
    "pk": 1,
    "run": 1,
    "job_id": 1,
    "delivery_id": 1,
    "slug": "jump-1",
    "hash": "ab12",
    "object_id": "1",
    "id": "1",
}
VALUES |= {"content_type_id": "1", "url": "x/", "app_label": "ladders"}


def unsafe_requests():
    """Every (pattern, unsafe method) a signed-in owner may call, or any caller for the
    sign-in pages."""
    for pattern in all_patterns():
        row = row_of(pattern.route) or {}
        for method in UNSAFE:
            if (
                method in row
                and "+" in row[method]
                or (row is not MATRIX.get(pattern.route) and method == "POST")
            ):
                yield pattern, method


REQUESTS = [(p, m) for p, m in unsafe_requests() if not p.route.startswith("admin/")]
ADMIN_REQUESTS = [(p, m) for p, m in unsafe_requests() if p.route.startswith("admin/")]


def csrf_refused(response) -> bool:
    return response.status_code == 403 and b"CSRF" in response.content


@pytest.mark.parametrize(
    ("pattern", "method"), REQUESTS, ids=[f"{m} {p.route or '/'}" for p, m in REQUESTS]
)
def test_a_session_request_without_a_csrf_token_is_refused(owner, pattern, method):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    path = fill(pattern.route, VALUES)

    response = client.generic(method, path, data="{}", content_type="application/json")

    assert csrf_refused(response), (method, path, response.status_code, response.content[:200])


def test_no_admin_post_goes_through_without_a_csrf_token(owner):
    assert len(ADMIN_REQUESTS) > 50
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    passed = []
    for pattern, method in ADMIN_REQUESTS:
        path = fill(pattern.route, VALUES)
        response = client.generic(method, path, data="", content_type="text/plain")
        if not csrf_refused(response):
            passed.append(f"{method} {path}: {response.status_code}")
    assert not passed, passed


def test_a_visitor_cannot_sign_in_without_a_csrf_token(owner):
    client = Client(enforce_csrf_checks=True)
    response = client.post(reverse("console:login"), {"username": "olive", "password": "pw"})
    assert csrf_refused(response)
    assert "_auth_user_id" not in client.session


@pytest.fixture
def running_ladder(owner):
    from ladders import services
    from tests.ladders.builders import climbers, make_ladder, versions

    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    return ladder


def test_with_its_csrf_token_the_same_session_post_goes_through(owner, running_ladder):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    client.get(reverse("console:board", args=[running_ladder.pk]))
    token = client.cookies["csrftoken"].value
    url = reverse("console:stop", args=[running_ladder.pk])

    refused = client.post(url)
    assert csrf_refused(refused)
    assert Dispatch.objects.get(ladder=running_ladder).status == "running"

    # An HTMX post sends the token in its header, as the console's pages configure it.
    done = client.post(url, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert done.status_code in (200, 302), done.status_code
    assert Dispatch.objects.get(ladder=running_ladder).status == "stopped"


def test_the_api_over_a_session_needs_the_token_too(owner, running_ladder):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    client.get(reverse("console:board", args=[running_ladder.pk]))
    url = f"/api/ladders/{running_ladder.pk}/stop"

    refused = client.post(url, {"cancelRunning": True}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    assert Dispatch.objects.get(ladder=running_ladder).status == "running"

    done = client.post(
        url,
        {"cancelRunning": True},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )
    assert done.status_code == 200, done.content


def test_a_token_call_needs_no_csrf_token(owner_api, running_ladder):
    owner_api.handler.enforce_csrf_checks = True
    response = owner_api.post(f"/api/ladders/{running_ladder.pk}/stop", {}, format="json")
    assert response.status_code == 200, response.content
