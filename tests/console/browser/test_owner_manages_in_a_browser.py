"""A non-staff owner in Chromium: adds a combination, makes a coverage group of it, sets an
acceptance rule (refused first with E195), builds a ladder on the group, runs it, and reads the
run under the new rule — without the admin."""

import re

import pytest
from playwright.sync_api import expect

from loopweb.runs.models import ModelEntry
from tests.ladders.builders import PERFECT, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


def test_a_non_staff_owner_makes_a_group_and_a_rule_and_runs_a_ladder_with_them(
    open_page, shot, owner, driver
):
    assert not owner.is_staff
    versions(1, prefix="own")
    # The model catalog lists the model as launchable (as the deployment's catalog would).
    ModelEntry.objects.create(name="gpt-own", provider="acme", launchable=True)
    page = open_page(owner)
    page.goto("/")
    page.get_by_role("link", name="Groups", exact=True).click()
    page.get_by_role("link", name="Combinations").click()
    page.get_by_label("Harness").fill("aider")
    page.get_by_label("Model", exact=True).fill("gpt-own")
    page.get_by_label("Provider", exact=True).fill("acme")
    page.get_by_role("button", name="Add combination").click()
    expect(page.locator(".messages")).to_contain_text("Combination gpt-own via aider (acme) added")

    page.get_by_role("link", name="Coverage groups").click()
    page.get_by_label("Name").fill("own models")
    page.get_by_label("gpt-own via aider (acme)").check()
    page.get_by_role("button", name="Create group").click()
    expect(page.get_by_role("heading", name="own models")).to_be_visible()
    expect(page.locator("#members")).to_contain_text("gpt-own via aider (acme)")
    shot(page, "owner-group")

    page.get_by_role("link", name="Acceptance rule").click()
    page.get_by_label("Name", exact=True).fill("builds")
    page.get_by_label("Description").fill("no verdict needed; no revert within a week")
    page.get_by_label("Required verdicts").fill("runtime_s")
    page.get_by_role("button", name="Save rule").click()
    expect(page.locator("#requires-error")).to_contain_text("E195")
    page.get_by_label("Required verdicts").fill("")
    page.get_by_label("Window (days)").fill("7")
    page.get_by_role("button", name="Save rule").click()
    expect(page.locator(".messages")).to_contain_text("Acceptance rule builds saved.")
    shot(page, "owner-rule")

    page.get_by_role("link", name="Ladders", exact=True).first.click()
    page.get_by_role("link", name="Create ladder").click()
    page.get_by_label("Name", exact=True).fill("Own climb")
    page.get_by_label("Case", exact=True).select_option("own-1")
    expect(page.get_by_label("Version", exact=True)).to_have_value("1")
    page.get_by_role("button", name="Add rung").click()
    expect(page.locator("#editor-status")).to_contain_text("(own-1@1)")
    page.get_by_label("own models").check()
    page.get_by_role("button", name="Save ladder").click()
    expect(page).to_have_url(re.compile(r"/ladders/\d+/$"))

    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")
    work(driver, run_queued_tasks, PERFECT)
    expect(page.locator("#ladder-status")).to_have_text("Finished")
    page.locator("#slot-0-0").click()
    expect(page.locator("#slot-panel [data-acceptance]")).to_have_text("success")
    expect(page.locator("#slot-panel")).to_contain_text("under builds")
    shot(page, "owner-ladder-run")
