"""The console's navigation shows what the signed-in role can do (SPEC §1): owners and staff
manage groups, their acceptance rule, proposals and webhooks; reviewers read ladders shared with
them and work their queues; drivers are machine accounts that read the evalsets and budgets their
claims meet; staff also have the admin. No page offers a reviewer a link to a page that would
refuse them."""

import re

import pytest
from django.urls import reverse

from loopweb.runs.models import Role
from tests.console.helpers import Browser
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

EVERYONE = ["Ladders", "Evalsets", "Budgets", "API docs"]
OWNERS = ["Ladders", "Groups", "Acceptance rule", "Evalsets", "Proposals", "Webhooks", "Budgets",
          "API docs"]  # fmt: skip


def nav_links(response) -> list[str]:
    """The main navigation's link texts, in order."""
    html = response.content.decode()
    found = re.search(r'<ul class="navlinks">(.*?)</ul>', html, re.S)
    assert found, "no main navigation"
    return [
        re.sub(r"<[^>]+>", "", text).strip()
        for text in re.findall(r"<a\b[^>]*>(.*?)</a>", found.group(1), re.S)
    ]


def hrefs(response) -> set[str]:
    return set(re.findall(r'href="([^"]+)"', response.content.decode()))


@pytest.fixture
def staff_user(db):
    user = UserFactory(username="stella", role=Role.OWNER)
    user.is_staff = True
    user.save()
    return user


def test_an_owner_sees_what_owners_manage_and_no_admin(owner_client):
    assert nav_links(owner_client.get("/")) == OWNERS


def test_a_reviewer_sees_only_what_a_reviewer_can_use(reviewer_client):
    assert nav_links(reviewer_client.get("/")) == EVERYONE


def test_a_driver_signed_in_sees_only_what_a_driver_reads(driver):
    assert nav_links(Browser(driver).get("/")) == EVERYONE


def test_staff_also_see_the_admin(staff_user):
    assert nav_links(Browser(staff_user).get("/")) == [*OWNERS, "Admin"]


def test_the_current_page_is_marked_in_the_navigation(owner_client):
    html = owner_client.get(reverse("console:groups")).content.decode()
    assert re.search(r'<a href="/groups/" aria-current="page">Groups</a>', html)


@pytest.mark.parametrize(
    "where", ["ladders", "board", "queue", "budgets", "evalsets"], ids=lambda w: w
)
def test_no_page_offers_a_reviewer_a_link_it_would_refuse(reviewer_client, ladder, where):
    url = {
        "ladders": "/",
        "board": reverse("console:board", args=[ladder.pk]),
        "queue": reverse("console:queue", args=[ladder.pk]),
        "budgets": reverse("console:budgets"),
        "evalsets": reverse("evalsets:evalsets"),
    }[where]
    response = reviewer_client.get(url)
    assert response.status_code == 200
    refused = {
        reverse("console:groups"),
        reverse("console:combinations"),
        reverse("console:ladder-new"),
        reverse("console:ladder-edit", args=[ladder.pk]),
        reverse("console:acceptance-rule"),
        reverse("webhooks_console:list"),
        reverse("evalsets:proposals"),
    }
    assert hrefs(response) & refused == set()


def test_an_owner_is_offered_the_editor_on_the_ladders_page_and_the_board(owner_client, ladder):
    assert reverse("console:ladder-new") in hrefs(owner_client.get("/"))
    board = owner_client.get(reverse("console:board", args=[ladder.pk]))
    assert reverse("console:ladder-edit", args=[ladder.pk]) in hrefs(board)


def test_nobody_signed_out_sees_the_navigation(client):
    html = client.get(reverse("console:login")).content.decode()
    assert 'class="navlinks"' not in html
