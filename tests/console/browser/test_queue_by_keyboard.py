"""The review queue by keyboard only, in Chromium: ? lists the shortcuts, j/k move, s skips,
1-5 rate, w writes, Ctrl+Enter and Enter submit; "my reviews" corrects one."""

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


def shown_run(page) -> int:
    return int(page.locator("article.run-card").get_attribute("data-run"))


def test_the_review_queue_by_keyboard_only(open_page, shot, owner, reviewer, driver):
    ladder = make_ladder(
        owner,
        versions(2, prefix="kb"),
        climbers(2, prefix="kb"),
        name="Keys",
        reviewers=[reviewer.pk],
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_queued_tasks, PERFECT)
    page = open_page(reviewer)
    page.goto(f"/ladders/{ladder.pk}/queue/")
    left = page.locator("#runs-left")
    expect(left).to_have_text("4 runs left to review")
    expect(page.locator(".run-card .meta")).to_contain_text("Hardest rung first")

    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    shot(page, "queue-shortcuts")
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()

    first = shown_run(page)
    page.keyboard.press("j")
    expect(page.locator("article.run-card")).not_to_have_attribute("data-run", str(first))
    second = shown_run(page)
    page.keyboard.press("k")
    expect(page.locator("article.run-card")).to_have_attribute("data-run", str(first))
    page.keyboard.press("s")
    expect(page.locator("article.run-card")).to_have_attribute("data-run", str(second))

    page.keyboard.press("4")
    expect(page.locator("#rating-4")).to_be_checked()
    page.keyboard.press("w")
    expect(page.locator("#writeup")).to_be_focused()
    page.keyboard.type("Clean jumps; 1 typed in the writeup stays text.")
    page.keyboard.press("Control+Enter")
    expect(page.locator(".messages")).to_contain_text(f"Review of run {second} saved.")
    expect(left).to_have_text("3 runs left to review")
    review = Review.objects.get(run_id=second)
    assert (review.aesthetic_rating, review.writeup) == (
        4,
        "Clean jumps; 1 typed in the writeup stays text.",
    )

    page.keyboard.press("2")
    page.keyboard.press("Enter")
    expect(left).to_have_text("2 runs left to review")
    shot(page, "queue-by-keyboard")

    # My reviews: correct the first one, still by keyboard.
    page.keyboard.press("Tab")  # the focus leaves the page's body for the skip link
    page.goto(f"/ladders/{ladder.pk}/queue/?view=mine&run={second}")
    expect(page.get_by_role("heading", name="Correct your review")).to_be_visible()
    expect(page.locator("#rating-4")).to_be_checked()
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_contain_text(f"Your review of run {second} was corrected.")
    assert Review.objects.get(run_id=second).aesthetic_rating == 5
