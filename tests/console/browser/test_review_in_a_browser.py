"""The console in Chromium: a reviewer signs in, works the review queue, signs out; and every
page works by keyboard with a label on every control."""

import re

import pytest
from playwright.sync_api import expect

from ladders import services
from loopweb.runs.models import Review
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

RECORD = {
    **PERFECT,
    "checklist": {**PERFECT["checklist"], "music": False},
    "metrics": {"runtime_s": 42.0, "input_tokens": 18250, "output_tokens": 3100},
    "artifacts": [{"name": "gameplay.mp4", "url": "https://artifacts.example.com/run.mp4"}],
}

UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea, button')]
    .filter(el => el.type !== 'hidden' && !el.closest('[aria-hidden="true"]'))
    .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label')
                  && !el.getAttribute('aria-labelledby')
                  && !(el.tagName === 'BUTTON' && el.textContent.trim()))
    .map(el => el.outerHTML.slice(0, 120))"""


def test_a_reviewer_signs_in_reviews_a_run_and_the_queue_count_drops(
    open_page, shot, owner, reviewer, driver
):
    ladder = make_ladder(
        owner,
        versions(2, prefix="hop"),
        climbers(2, prefix="rv"),
        name="Hop climb",
        reviewers=[reviewer.pk],
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_queued_tasks, RECORD)

    page = open_page()
    page.goto("/")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.get_by_label("Username").fill("rita")
    page.get_by_label("Password").fill("pw")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_text("Signed in as rita")).to_be_visible()
    expect(page.get_by_role("heading", name="Shared with you")).to_be_visible()
    page.get_by_role("link", name="Hop climb").click()
    expect(page.locator("#ladder-status")).to_have_text("Finished")
    expect(page.locator("#run-button")).to_have_count(0)  # reviewers do not run ladders
    page.get_by_role("link", name="Review queue").click()

    left = page.locator("#runs-left")
    expect(left).to_have_text("4 runs left to review")
    card = page.locator(".run-card")
    expect(card).to_contain_text("Rung 2 · hop-2@1")  # the hardest rung first
    expect(card).to_contain_text("rv1 via aider (acme)")
    expect(card).to_contain_text("4 of 5 passed")
    expect(card.get_by_role("link", name=re.compile("gameplay.mp4"))).to_have_attribute(
        "href", "https://artifacts.example.com/run.mp4"
    )
    first = int(card.get_attribute("data-run"))
    shot(page, "08-review-queue")

    page.get_by_label("Writeup").fill("Clean jumps; the music never starts.")
    # By keyboard: arrow keys move along the 1-5 scale, Space picks.
    page.locator("#rating-3").focus()
    page.keyboard.press("ArrowRight")
    expect(page.locator("#rating-4")).to_be_checked()
    page.get_by_label("Accept").check()
    page.get_by_role("button", name="Submit and go to the next run").click()

    expect(left).to_have_text("3 runs left to review")
    expect(page.locator(".messages")).to_contain_text(f"Review of run {first} saved.")
    assert int(card.get_attribute("data-run")) != first
    review = Review.objects.get(run_id=first)
    assert (review.aesthetic_rating, review.verdict) == (4, "accept")
    shot(page, "09-review-next")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.locator(".messages")).to_contain_text("You have signed out.")
    shot(page, "10-signed-out")


def test_every_page_works_by_keyboard_with_a_label_on_every_control(
    open_page, shot, owner, reviewer, driver
):
    ladder = make_ladder(
        owner,
        versions(2, prefix="kb"),
        climbers(2, prefix="kb"),
        name="Keyboard climb",
        reviewers=[reviewer.pk],
    )
    page = open_page(owner)
    for path in ("/", "/ladders/new/", f"/ladders/{ladder.pk}/", f"/ladders/{ladder.pk}/edit/"):
        page.goto(path)
        assert page.evaluate(UNLABELLED) == [], path

    # Tab from the top of the board to Run, and press it.
    page.goto(f"/ladders/{ladder.pk}/")
    for _ in range(20):  # the header's links, then the page's actions, then Run
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.id") == "run-button":
            break
    assert page.evaluate("document.activeElement.id") == "run-button"
    page.keyboard.press("Enter")
    expect(page.locator("#ladder-status")).to_have_text("Running")
    work(driver, run_queued_tasks, PERFECT, rounds=1)
    expect(page.locator("#runs-done")).to_have_text("2 of 4 runs done")
    expect(page.locator("#runs-under_way")).to_have_text("2 under way")  # rung 2, launched

    # A slot's tally shows on focus, and keeps its focus while the board refreshes itself.
    page.locator("#slot-0-1").focus()
    tip = page.locator("#slot-0-1-tip")
    expect(tip).to_be_visible()
    expect(tip).to_contain_text("Under way1")
    assert page.evaluate(UNLABELLED) == []
    shot(page, "11-board-keyboard-focus")
    work(driver, run_queued_tasks, PERFECT)
    expect(page.locator("#ladder-status")).to_have_text("Finished")
    expect(page.locator("#slot-0-1")).to_be_focused()

    page.goto(f"/ladders/{ladder.pk}/queue/")
    assert page.evaluate(UNLABELLED) == []
    page.goto(f"/ladders/{ladder.pk}/stop/cancel-running")
    assert page.evaluate(UNLABELLED) == []

    # The editor by keyboard: pick a case, add it as a rung, save with Enter.
    page.goto(f"/ladders/{ladder.pk}/edit/")
    page.get_by_label("Case", exact=True).focus()
    page.keyboard.press("ArrowDown")  # a native select changes on arrow keys
    expect(page.get_by_label("Version", exact=True)).to_have_value("1")
    page.get_by_role("button", name="Add rung").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#rung-row-2")).to_be_visible()
    expect(page.get_by_label("Case", exact=True)).to_be_focused()
    page.get_by_label("Name", exact=True).focus()
    page.keyboard.press("Enter")  # Enter in a text field saves
    expect(page).to_have_url(re.compile(rf"/ladders/{ladder.pk}/$"))
    assert ladder.rungs.count() == 3
