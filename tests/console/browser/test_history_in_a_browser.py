"""The history in Chromium: Run, finish, edit, Run again, open the history, compare the two
dispatches and see the height chart change. Screenshots are kept under var/screenshots/."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.history.helpers import PAID, PAID_BROKEN
from tests.ladders.builders import PERFECT, claim_all, climbers, make_ladder, push, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

SCREENSHOTS = Path(__file__).resolve().parents[3] / "var" / "screenshots"


def shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"history-{name}.png"), full_page=True)


def is_board(message) -> bool:
    """Whether a request (or a response) is the board's refresh."""
    return message.url.split("?")[0].endswith("/board")


def note_request(request, standing_asked: list, order: list) -> None:
    if "/standing" in request.url:
        standing_asked.append(request.url)
        order.append("standing")
    elif is_board(request):
        order.append("board")


def bar(page, chart: str, model: str):
    return page.locator(f'#{chart} g.bar[data-climber="aider|{model}|acme"]')


def test_run_edit_run_again_then_compare_and_see_the_chart_change(open_page, owner, driver):
    ladder = make_ladder(owner, versions(2, prefix="jump"), climbers(2), name="Platformer climb")
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/")
    expect(page.locator("#standing")).to_contain_text("the chart appears once the ladder has run")

    # First Run: m1 fails rung 1, m2 climbs both.
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")
    work(driver, run_queued_tasks, lambda j: PAID_BROKEN if j.combination.model == "m1" else PAID)
    expect(page.locator("#ladder-status")).to_have_text("Finished")
    # The standing refreshes itself until the dispatch has ended.
    expect(bar(page, "board-height-chart", "m1")).to_have_attribute("data-reached", "0")
    expect(bar(page, "board-height-chart", "m2")).to_have_attribute("data-reached", "2")
    expect(page.locator("#dispatch-cost")).to_contain_text("$0.0027")  # 700 + 2 × 1000 µ$
    expect(page.locator("#activity")).to_contain_text("olive pressed Run")
    shot(page, "1-board-first-run")

    # Edit: two runs per rung, so rung 1 gets another chance; Run again.
    page.locator("#edit-link").click()
    page.get_by_label("Runs per rung").fill("2")
    page.get_by_role("button", name="Save ladder").click()
    expect(page).to_have_url(re.compile(rf"/ladders/{ladder.pk}/$"))
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")
    work(driver, run_queued_tasks, PAID)
    expect(page.locator("#ladder-status")).to_have_text("Finished")
    expect(bar(page, "board-height-chart", "m1")).to_have_attribute("data-reached", "2")
    expect(page.locator("#activity")).to_contain_text("olive edited the configuration")
    shot(page, "2-board-second-run")

    # The history: two records, the heights across them, each record's chart.
    page.get_by_role("link", name="History", exact=True).first.click()
    expect(page.get_by_role("heading", name="History", exact=True)).to_be_visible()
    expect(page.locator("#records tbody tr")).to_have_count(2)
    expect(page.locator("#height-lines")).to_be_visible()
    expect(bar(page, "record-height-chart", "m1")).to_have_attribute("data-reached", "2")
    shot(page, "3-history")
    older = page.locator("#records tbody tr").nth(1).get_attribute("data-record")
    page.locator(f'#records tr[data-record="{older}"] th a.chart-link').click()
    expect(page.locator("#record-chart-title")).to_contain_text(f"Record #{older}")
    expect(bar(page, "record-height-chart", "m1")).to_have_attribute("data-reached", "0")
    # The record's own page: its frozen grid, as the board draws one.
    page.locator(f'#records tr[data-record="{older}"] th a.record-link').click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(f"Record #{older}")
    expect(page.locator("#grid tbody tr")).to_have_count(2)
    shot(page, "3b-record")
    page.go_back()
    page.locator("#lines-table").locator("..").locator("summary").click()
    heights = page.locator('#lines-table tr[data-climber="aider|m1|acme"] td')
    expect(heights).to_have_text(["0", "2"])

    # Compare the two: m1 went up, rung 1 flipped, m2 stayed.
    page.locator("#compare-submit").click()
    expect(page.get_by_role("heading", name="Compare")).to_be_visible()
    expect(page.locator('#compare-table tr[data-climber="aider|m1|acme"]')).to_have_attribute(
        "data-change", "up"
    )
    expect(page.locator('#compare-table tr[data-climber="aider|m2|acme"]')).to_have_attribute(
        "data-change", "same"
    )
    expect(page.locator("#change-counts")).to_contain_text(
        "1 up · 0 down · 1 same · 0 new · 0 gone before asking whether chance could explain them"
    )
    expect(page.locator("#flipped")).to_contain_text("on rung 1: failed → passed")
    shot(page, "4-compare")

    # Sorting the board's chart by cost, without scripts.
    page.goto(f"/ladders/{ladder.pk}/?sort=cost#standing")
    expect(page.locator('#standing a[data-sort="cost"]')).to_have_attribute("aria-current", "true")


def test_the_standing_follows_the_board_and_asks_nothing_while_it_is_unchanged(
    open_page, owner, driver
):
    ladder = make_ladder(owner, versions(2, prefix="jump"), climbers(2), name="Platformer climb")
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")
    expect(bar(page, "board-height-chart", "m2")).to_have_attribute("data-reached", "0")
    standing_asked, order = [], []
    page.on("request", lambda r: note_request(r, standing_asked, order))
    page.on("response", lambda r: order.append(f"board {r.status}") if is_board(r) else None)

    # Running, and nothing changes: the board's polls answer 204 and the standing asks nothing
    # (it used to ask on a timer of its own, every five board polls: 1.25 s here).
    for _ in range(6):  # six polls of the board, each answered 204
        with page.expect_response(is_board, timeout=30_000):
            pass
    assert standing_asked == []

    # m2 passes rung 1: the grid and the chart show it together. The chart asks because the
    # grid's refresh carried a change (its board-changed), not on a timer: its first request
    # comes right after the board's reply that changed the grid (a 200, not a 204), before
    # the board asks again. (Told by the order of the browser's own events, not by a time
    # limit, which a slow machine would break.)
    jobs = claim_all(driver)
    push(driver, next(j for j in jobs if j.combination.model == "m2"), record=PERFECT)
    run_queued_tasks()
    expect(page.locator("#slot-1-0")).to_have_class(re.compile(r"\bslot-passed\b"))
    expect(bar(page, "board-height-chart", "m2")).to_have_attribute("data-reached", "1")
    assert len(standing_asked) >= 1
    first = order.index("standing")
    assert order[first - 2 : first] == ["board", "board 200"], order
