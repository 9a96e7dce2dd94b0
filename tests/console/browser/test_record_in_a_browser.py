"""A history record in Chromium: its frozen grid's slots open the runs each counted beside the
grid, as the live board's slots open theirs; a run's link leads to its page, Escape closes the
panel and gives the focus back to the slot, and the address names the open slot."""

import re

import pytest
from playwright.sync_api import expect

from ladders import services
from loopweb.history.models import DispatchRecord
from tests.history.helpers import PAID, PAID_BROKEN
from tests.ladders.builders import climbers, make_ladder, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


def test_a_record_slot_opens_the_runs_it_counted_and_each_leads_to_its_run_page(
    open_page, shot, owner, driver
):
    ladder = make_ladder(owner, versions(2, prefix="jump"), climbers(2), name="Platformer climb")
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_queued_tasks, lambda j: PAID_BROKEN if j.combination.model == "m1" else PAID)
    record = DispatchRecord.objects.get(ladder=ladder)
    [counted] = record.standing.climbers[1]["runs"][1]  # m2 on rung 2
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/history/")
    page.locator("#records a.record-link").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Record #")

    page.locator("#slot-1-1").click()

    panel = page.locator("#slot-panel")
    expect(panel).to_be_visible()
    expect(panel.locator("#slot-panel-title")).to_be_focused()
    expect(panel.locator("#slot-panel-title")).to_contain_text("m2")
    expect(panel.locator(".slot-run")).to_have_count(1)
    expect(panel.locator(f'.slot-run[data-run="{counted}"] a.run-link')).to_have_text(
        f"Run {counted}"
    )
    expect(page).to_have_url(re.compile(r"\?slot=1(/|%2F)"))
    shot(page, "record-slot-panel")

    # Escape closes it and gives the focus back to the slot; Enter opens another.
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(page.locator("#slot-1-1")).to_be_focused()
    page.locator("#slot-0-0").focus()
    page.keyboard.press("Enter")
    expect(panel.locator(".panel-inner")).to_have_attribute("data-slot-status", "failed")
    expect(panel.locator(".slot-run")).to_have_count(1)

    panel.locator("a.run-link").click()
    expect(page).to_have_url(re.compile(r"/runs/\d+/"))
    expect(page.get_by_role("heading", level=1)).to_contain_text("Run")
