"""A rung slot's runs in Chromium: click a slot, its runs open in a side panel while the board
keeps refreshing beneath it; a run opens its page, whose breadcrumbs lead back to the slot."""

import pytest
from playwright.sync_api import expect

from ladders import services
from tests.ladders.builders import PERFECT, climbers, make_ladder, push, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


def test_slot_panel_then_run_page_then_back(open_page, shot, owner, driver):
    ladder = make_ladder(owner, versions(2, prefix="sp"), climbers(2, prefix="sp"), name="Panel")
    services.start_dispatch(ladder=ladder)
    work(driver, run_queued_tasks, PERFECT, rounds=1)
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/")
    expect(page.locator("#slot-0-0")).to_have_attribute("data-status", "passed")

    page.locator("#slot-0-0").click()
    panel = page.locator("#slot-panel")
    expect(panel).to_be_visible()
    expect(panel.get_by_role("heading", level=2)).to_contain_text("sp1 via aider (acme)")
    expect(panel.locator(".slot-run")).to_have_count(1)
    expect(panel).to_contain_text("flawless")
    expect(panel).to_contain_text("Jobs this dispatch launched")

    # The board stays live beneath the open panel.
    page.evaluate("window.sameDocument = true")
    work(driver, run_queued_tasks, PERFECT)
    expect(page.locator("#ladder-status")).to_have_text("Finished")
    expect(panel).to_be_visible()
    expect(panel.locator(".slot-run")).to_have_count(1)
    shot(page, "slot-panel")

    # Escape closes it and gives the focus back to the slot; Enter opens another.
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(page.locator("#slot-0-0")).to_be_focused()
    page.locator("#slot-1-1").focus()
    page.keyboard.press("Enter")
    expect(panel.get_by_role("heading", level=2)).to_contain_text("sp2 via aider (acme)")
    assert page.evaluate("window.sameDocument") is True

    run_link = panel.locator("a.run-link").first
    run_id = run_link.inner_text().removeprefix("Run ")
    run_link.click()
    expect(page.get_by_role("heading", name=f"Run {run_id}")).to_be_visible()
    expect(page.locator("#signals-heading")).to_be_visible()
    expect(page.get_by_role("heading", name="Attempts")).to_be_visible()
    expect(page.get_by_role("heading", name="Your review")).to_be_visible()
    shot(page, "run-page")

    page.locator("#crumb-slot").click()
    expect(page.locator("#slot-panel")).to_be_visible()
    expect(page.locator("#slot-panel h2")).to_contain_text("sp2 via aider (acme)")
    expect(page.locator("#ladder-name")).to_have_text("Panel")


def test_the_open_slot_panel_refreshes_with_the_board(open_page, owner, driver):
    """The panel is part of the live board: a run landing in its slot's cell while it is open
    shows in it at the board's next refresh, without reopening it."""
    from loopweb.runs import services as run_services

    ladder = make_ladder(owner, versions(1, prefix="lp"), climbers(1, prefix="lp"), runsPerCell=2)
    services.start_dispatch(ladder=ladder)
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/")
    page.locator("#slot-0-0").click()
    panel = page.locator("#slot-panel")
    expect(panel).to_contain_text("No run of this slot's cell yet.")

    [job, _] = run_services.claim_jobs(driver=driver, limit=2)
    push(driver, job)

    expect(panel.locator(".slot-run")).to_have_count(1)
    expect(panel).to_be_visible()
