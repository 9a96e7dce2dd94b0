"""The board refreshes itself by what changed: a push swaps the one row of the climber whose cell
it landed in and the figures, in place; a change the page's version cannot follow swaps the
whole board; nothing changed answers 204. A refresh that changed the board tells the page so
(``HX-Trigger: board-changed``), and the standing below it refreshes then, so the two never show
different standings."""

import json

import psycopg
import pytest
from django.db import connection
from django.urls import reverse

from ladders import services
from tests.ladders.builders import PERFECT, claim_all, climbers, make_ladder, push, versions

pytestmark = pytest.mark.django_db(transaction=True)


def held_version(html: str) -> str:
    return html.split('"v": "')[1].split('"')[0]


@pytest.fixture
def big(owner):
    ladder = make_ladder(owner, versions(10), climbers(30), name="wide")
    services.start_dispatch(ladder=ladder)
    return ladder


@pytest.fixture(params=["alone", "beside a long transaction"])
def elsewhere(request):
    """Optionally a transaction left open on another connection, in every snapshot taken while it
    runs."""
    if request.param == "alone" or connection.vendor != "postgresql":
        yield
        return
    db = connection.settings_dict
    with psycopg.connect(
        dbname=db["NAME"], user=db["USER"], host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432
    ) as other:
        other.execute("SELECT pg_current_xact_id()")
        yield
        other.rollback()


def test_a_refresh_after_one_push_swaps_that_climbers_row_and_the_figures(
    owner_client, elsewhere, big, driver
):
    page = owner_client.get(reverse("console:board", args=[big.pk])).content.decode()
    assert page.count('<tr id="climber-row-') == 30
    jobs = claim_all(driver)

    push(driver, jobs[7], record=PERFECT)
    refresh = owner_client.get(
        reverse("console:board-refresh", args=[big.pk]), {"v": held_version(page)}
    )

    html = refresh.content.decode()
    assert refresh.status_code == 200
    assert html.count("<tr id=") == 1
    assert '<tr id="climber-row-7" data-climber="aider|m8|acme" hx-swap-oob="true">' in html
    assert 'id="slot-7-0" class="slot slot-passed' in html
    assert '<div id="board-progress" hx-swap-oob="true">' in html.replace('class="progress" ', "")
    assert "1 of 300 runs done" in html
    assert f'"v": "{held_version(html)}"' in html and held_version(html) != held_version(page)
    assert len(refresh.content) < 50_000 < len(page)
    assert "board-changed" in json.loads(refresh.headers["HX-Trigger"])


def test_a_change_the_version_cannot_follow_swaps_the_whole_board(owner_client, owner, big):
    page = owner_client.get(reverse("console:board", args=[big.pk])).content.decode()
    services.stop_dispatch(ladder=big)
    refresh = owner_client.get(
        reverse("console:board-refresh", args=[big.pk]), {"v": held_version(page)}
    )
    html = refresh.content.decode()
    assert html.lstrip().startswith('<section id="board"')
    assert 'hx-swap-oob="true"' in html.split(">", 1)[0]
    assert html.count('<tr id="climber-row-') == 30
    assert "Stopped" in html
    assert "board-changed" in json.loads(refresh.headers["HX-Trigger"])


def test_an_unchanged_board_answers_204(owner_client, big):
    page = owner_client.get(reverse("console:board", args=[big.pk])).content.decode()
    refresh = owner_client.get(
        reverse("console:board-refresh", args=[big.pk]), {"v": held_version(page)}
    )
    assert refresh.status_code == 204
    assert "HX-Trigger" not in refresh.headers


def test_a_refresh_is_sent_compressed_to_a_browser_that_accepts_it(owner_client, big, driver):
    """A changed board's refresh is gzipped for a browser that accepts it. BREACH finds no
    secret to read in it: Django masks the CSRF token its forms carry anew in every response,
    nothing of the request is echoed in it, and Django's gzip pads each response with a random
    length besides."""
    import gzip

    page = owner_client.get(reverse("console:board", args=[big.pk])).content.decode()
    jobs = claim_all(driver)
    push(driver, jobs[7], record=PERFECT)
    refresh = owner_client.get(
        reverse("console:board-refresh", args=[big.pk]),
        {"v": held_version(page)},
        HTTP_ACCEPT_ENCODING="gzip",
    )
    assert refresh.status_code == 200
    assert refresh.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in refresh.headers["Vary"]
    html = gzip.decompress(refresh.content).decode()
    assert '<tr id="climber-row-7"' in html
    assert len(refresh.content) * 3 < len(html)
