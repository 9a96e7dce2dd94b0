"""403, 404 and 500 are the console's own pages: its stylesheet, its top bar and a way back.
A reviewer opening Groups or the editor gets the styled 403 with the reason and their own
navigation; a 404 says nothing about what exists; the 500 page renders with no database and no
request context (whatever failed may be either). Under /api/ every error stays the API's JSON."""

import re

import pytest
from django.test import Client, RequestFactory
from django.urls import path, reverse

from loopweb import urls as site_urls
from loopweb.runs.api import errors
from tests.console.test_role_aware_navigation import EVERYONE, OWNERS, nav_links


def crash(request):
    raise RuntimeError("the database went away")


urlpatterns = [path("crash/", crash), *site_urls.urlpatterns]
handler403 = site_urls.handler403
handler404 = site_urls.handler404
handler500 = site_urls.handler500


def assert_console_page(response, heading: str) -> str:
    html = response.content.decode()
    assert response["Content-Type"].startswith("text/html")
    assert "/static/console.css" in html
    assert '<header class="topbar">' in html
    assert re.search(r'<a class="brand" href="/">', html)
    assert re.search(rf"<h1[^>]*>{heading}</h1>", html), html
    return html


@pytest.mark.django_db
@pytest.mark.parametrize("where", ["groups", "editor", "new ladder", "combination"])
def test_a_reviewer_refused_a_page_gets_the_styled_403_with_its_navigation(
    reviewer_client, ladder, where
):
    if where == "combination":
        response = reviewer_client.submit(reverse("console:combinations"), {"model": "m"})
    else:
        url = {
            "groups": reverse("console:groups"),
            "editor": reverse("console:ladder-edit", args=[ladder.pk]),
            "new ladder": reverse("console:ladder-new"),
        }[where]
        response = reviewer_client.get(url)
    assert response.status_code == 403
    html = assert_console_page(response, "Not allowed")
    assert nav_links(response) == EVERYONE
    assert "Only" in html  # the reason the view gave, e.g. "Only owners create ladders."
    assert 'href="/"' in html


@pytest.mark.django_db
def test_the_403_names_the_reason(reviewer_client):
    html = reviewer_client.get(reverse("console:groups")).content.decode()
    assert "Only owners manage combinations and groups." in html


@pytest.mark.django_db
def test_an_outsider_gets_the_styled_404_that_names_nothing(outsider_client, ladder):
    response = outsider_client.get(reverse("console:board", args=[ladder.pk]))
    assert response.status_code == 404
    html = assert_console_page(response, "Page not found")
    assert nav_links(response) == OWNERS
    assert "platformer" not in html and "No such ladder" not in html


@pytest.mark.django_db
def test_an_unknown_address_gets_the_styled_404(owner_client):
    response = owner_client.get("/no-such-page/")
    assert response.status_code == 404
    assert_console_page(response, "Page not found")


@pytest.mark.django_db
def test_signed_out_the_404_offers_the_sign_in_page(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    html = assert_console_page(response, "Page not found")
    assert 'class="navlinks"' not in html
    assert f'href="{reverse("console:login")}"' in html


def test_the_500_page_needs_no_database_and_no_request_context():
    # No django_db mark: any query here raises.
    response = errors.server_error(RequestFactory().get("/ladders/1/"))
    assert response.status_code == 500
    html = assert_console_page(response, "Something went wrong")
    assert 'class="navlinks"' not in html  # who is signed in is not known here


@pytest.mark.django_db
@pytest.mark.urls(__name__)
def test_a_crash_answers_the_styled_500(owner):
    client = Client(raise_request_exception=False)
    client.force_login(owner)
    response = client.get("/crash/")
    assert response.status_code == 500
    assert_console_page(response, "Something went wrong")
    assert "the database went away" not in response.content.decode()


@pytest.mark.django_db
def test_api_errors_stay_json(reviewer_api, owner_api):
    missing = owner_api.get("/api/no-such-endpoint/")
    assert missing.status_code == 404 and missing.json() == {"detail": "Not found."}
    assert "<html" not in missing.content.decode()
