"""The console: the board's standing (a height chart, the cost, the activity), the history page
(heights across records, each record's chart) and the compare page, all readable without
scripts."""

import gzip
import re

from ladders import services
from ladders.models import Ladder
from tests.console.helpers import Browser, text_of
from tests.history.helpers import PAID, PAID_BROKEN
from tests.ladders.builders import climbers, config, make_ladder, rung, versions, work


def bars(html: str) -> list[tuple[str, int]]:
    """(climber key, reached) of each bar of a chart, in the order drawn."""
    return [
        (key, int(reached))
        for key, reached in re.findall(
            r'<g class="bar" data-climber="([^"]+)" data-reached="(\d+)"', html
        )
    ]


def two_dispatches(owner, driver, run_tasks):
    steps = versions(2)
    m1, m2 = climbers(2)
    ladder = make_ladder(owner, steps, [m1, m2], name="platformer")
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, lambda job: PAID_BROKEN if job.combination.model == "m1" else PAID)
    data = config(
        name="platformer",
        rungs=[rung(v) for v in steps],
        combinations=[m1.pk, m2.pk],
        runsPerCell=2,
    )
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk), by=owner)
    services.start_dispatch(ladder=ladder, by=owner)
    return ladder


def test_the_board_shows_the_standing_as_a_chart_with_its_cost_and_activity(
    owner, driver, run_tasks
):
    ladder = two_dispatches(owner, driver, run_tasks)
    client = Browser(owner)
    board = client.get(f"/ladders/{ladder.pk}/").content.decode()
    # The board loads its standing section beside it, by the section's own request.
    assert f'hx-get="/ladders/{ladder.pk}/standing" hx-trigger="load"' in board
    page = client.get(f"/ladders/{ladder.pk}/standing")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="board-height-chart"' in html and 'role="img"' in html
    assert 'hx-trigger="board-changed from:body"' in html  # running: it follows the board
    text = text_of(page)
    assert "Cost so far:" in text
    assert "olive pressed Run" in text and "olive edited the configuration" in text
    work(driver, run_tasks, PAID)
    board = client.get(f"/ladders/{ladder.pk}/?sort=cost").content.decode()
    assert f'hx-get="/ladders/{ladder.pk}/standing?sort=cost"' in board  # the sort carried
    page = client.get(f"/ladders/{ladder.pk}/standing?sort=cost")
    html = page.content.decode()
    assert 'hx-trigger="every' not in html  # ended
    # This dispatch paid for what it launched: m1 three runs (its first dispatch's broken run
    # is reused), m2 two (its first dispatch's runs are reused).
    assert bars(html) == [("aider|m1|acme", 2), ("aider|m2|acme", 2)]
    assert "Cost:" in text_of(page)
    by_height = client.get(f"/ladders/{ladder.pk}/standing?sort=order").content.decode()
    assert [k for k, _ in bars(by_height)] == ["aider|m1|acme", "aider|m2|acme"]


def test_the_history_page_charts_heights_across_records_and_each_record(owner, driver, run_tasks):
    ladder = two_dispatches(owner, driver, run_tasks)
    work(driver, run_tasks, PAID)
    client = Browser(owner)
    page = client.get(f"/ladders/{ladder.pk}/history/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="height-lines"' in html and 'id="record-height-chart"' in html
    table = re.search(
        r'<table class="table compact-table" id="lines-table">(.*?)</table>', html, re.S
    )
    text = re.sub(r"<[^>]+>", " ", table.group(1))
    # m1 failed rung 1 in the first record and passed both rungs in the second.
    assert re.search(r"m1 via aider \(acme\)\s+0\s+2", text)
    assert len(re.findall(r'<tr data-record="', html)) == 2


def test_the_compare_page_shows_who_went_up_and_what_flipped(owner, driver, run_tasks):
    ladder = two_dispatches(owner, driver, run_tasks)
    work(driver, run_tasks, PAID)
    page = Browser(owner).get(f"/ladders/{ladder.pk}/compare/")
    assert page.status_code == 200
    html = page.content.decode()
    assert 'data-climber="aider|m1|acme" data-change="up"' in html
    assert 'data-climber="aider|m2|acme" data-change="same"' in html
    assert "1 up · 0 down · 1 same · 0 new · 0 gone" in text_of(page)
    assert "on rung 1: failed → passed" in text_of(page)


def test_a_bad_compare_is_said_on_the_page(owner, driver, run_tasks):
    ladder = two_dispatches(owner, driver, run_tasks)
    page = Browser(owner).get(f"/ladders/{ladder.pk}/compare/?a=nope&b=current")
    assert page.status_code == 400
    assert "a: Give a record id of this ladder or 'current'." in text_of(page)


def test_reviewers_read_the_history_and_outsiders_see_nothing(
    owner, reviewer, outsider, driver, run_tasks
):
    ladder = two_dispatches(owner, driver, run_tasks)
    ladder.reviewers.add(reviewer)
    for url in ("history/", "compare/", "standing"):
        assert Browser(reviewer).get(f"/ladders/{ladder.pk}/{url}").status_code == 200
        assert Browser(outsider).get(f"/ladders/{ladder.pk}/{url}").status_code == 404


def test_a_ladder_never_run_has_an_empty_history(owner):
    ladder = make_ladder(owner, versions(1), climbers(1))
    client = Browser(owner)
    assert "No records yet." in text_of(client.get(f"/ladders/{ladder.pk}/history/"))
    assert "the chart appears once the ladder has run" in text_of(
        client.get(f"/ladders/{ladder.pk}/standing")
    )
    assert client.get(f"/ladders/{ladder.pk}/compare/").status_code == 200


def test_a_running_standing_refreshes_when_the_board_changes_and_not_on_a_timer(
    owner, driver, run_tasks
):
    # The board's refresh tells the page when it changed (test_board_refresh); the standing
    # asks for itself then, so the chart and the grid show one standing.
    ladder = two_dispatches(owner, driver, run_tasks)
    page = Browser(owner).get(f"/ladders/{ladder.pk}/standing").content.decode()
    section = page.split(">", 1)[0]
    assert 'hx-trigger="board-changed from:body"' in section
    assert "every" not in section
    # Asked at every change of a busy board, it is sent compressed (a 200-climber standing is
    # 118 KB of HTML, 11 KB gzipped).
    zipped = Browser(owner).get(f"/ladders/{ladder.pk}/standing", HTTP_ACCEPT_ENCODING="gzip")
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content).decode() == page


def test_the_standing_answers_204_while_nothing_it_shows_changed(owner, driver, run_tasks):
    ladder = two_dispatches(owner, driver, run_tasks)
    client = Browser(owner)
    page = client.get(f"/ladders/{ladder.pk}/standing").content.decode()
    held = re.search(r'hx-get="[^"]*[?&]v=([0-9a-f]+)"', page.replace("&amp;", "&")).group(1)
    assert client.get(f"/ladders/{ladder.pk}/standing?v={held}").status_code == 204
    work(driver, run_tasks, PAID, rounds=1)
    changed = client.get(f"/ladders/{ladder.pk}/standing?v={held}")
    assert changed.status_code == 200 and f"v={held}" not in changed.content.decode()
