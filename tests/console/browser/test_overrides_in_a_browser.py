"""Checklist overrides in Chromium: the run's owner overrides an item on the run page; the
section swaps in place under the Content-Security-Policy with the new stored rating beside the
unchanged validator rating, and a refused override names its field."""

import pytest
from playwright.sync_api import expect

from loopweb.runs.models import Run
from tests.console.browser.test_no_policy_violations import Watch
from tests.factories import CaseVersionFactory, CombinationFactory
from tests.runs.helpers import finish, hand_job

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

GREAT = {  # every item but pause
    "checklist": {"starts": True, "jump": True, "score": True, "music": True, "pause": False},
    "toolchain": {"build": "ok", "loaded": True},
}


def test_the_owner_overrides_an_item_and_the_stored_rating_moves_in_place(
    open_page, shot, owner, driver
):
    run = finish(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()), record=GREAT)
    page = open_page(owner)
    watch = Watch(page)
    page.goto(f"/runs/{run.pk}/")

    section = page.locator("#overrides")
    expect(section.locator('[data-rating="validator"]')).to_have_text("great")
    expect(section.locator('[data-rating="stored"]')).to_have_text("great")

    page.get_by_role("button", name="Override").click()  # nothing chosen
    expect(page.locator("#override-errors")).to_contain_text("item: Choose the checklist item")

    page.get_by_label("Checklist item", exact=True).select_option("pause")
    page.get_by_label("Passed", exact=True).check()
    page.get_by_label("Note", exact=True).fill("Pauses on P and on losing focus.")
    page.get_by_role("button", name="Override").click()

    expect(section.locator('[data-rating="stored"]')).to_have_text("flawless")
    expect(section.locator('[data-rating="validator"]')).to_have_text("great")
    expect(page.locator(f"#stored-rating-{run.pk}")).to_have_text("flawless")  # the run's card
    row = section.locator('tr[data-item="pause"]')
    expect(row).to_contain_text("passed by olive: Pauses on P and on losing focus.")
    expect(page.get_by_role("status").filter(has_text="Override saved")).to_be_visible()
    shot(page, "run-checklist-overrides")
    watch.assert_none("run page")

    run = Run.objects.get(pk=run.pk)
    assert (run.validator_rating, run.stored_rating) == ("great", "flawless")
