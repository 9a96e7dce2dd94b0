"""The board and the ladders list on a phone (390 × 844): the grid scrolls sideways inside its
card with the climber column held in place; the page itself never gets wider than the screen."""

import pytest
from playwright.sync_api import expect

from ladders import services
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

PHONE = {"width": 390, "height": 844}


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def test_the_board_scrolls_inside_its_card_on_a_phone(open_page, shot, owner, driver):
    ladder = make_ladder(
        owner, versions(8, prefix="platformer"), climbers(5, prefix="phone"), name="Phone climb"
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_queued_tasks, PERFECT, rounds=2)
    page = open_page(owner)
    page.set_viewport_size(PHONE)
    page.goto(f"/ladders/{ladder.pk}/")
    expect(page.locator("#slot-0-0")).to_have_attribute("data-status", "passed")

    assert page_width(page) <= PHONE["width"]
    wrap = page.locator(".grid-scroll")
    assert wrap.evaluate("el => el.scrollWidth > el.clientWidth")  # the grid scrolls sideways
    climber = page.locator("#climber-row-0 th.climber")
    left = wrap.bounding_box()["x"]
    wrap.evaluate("el => { el.scrollLeft = el.scrollWidth; }")
    page.wait_for_function("() => document.querySelector('.grid-scroll').scrollLeft > 0")
    assert climber.bounding_box()["x"] == pytest.approx(left, abs=1)  # held in place
    last, shown = page.locator("#slot-0-7").bounding_box(), wrap.bounding_box()
    assert shown["x"] < last["x"] and last["x"] + last["width"] <= shown["x"] + shown["width"]
    page.locator("#slot-0-7").scroll_into_view_if_needed()
    shot(page, "phone-board")

    page.goto("/")
    row = page.locator(f'tr[data-ladder="{ladder.pk}"]')
    expect(row).to_contain_text("Phone climb")
    assert page_width(page) <= PHONE["width"]
    shot(page, "phone-ladders")
