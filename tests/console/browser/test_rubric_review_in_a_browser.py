"""A rubric review by keyboard only, in Chromium: [ and ] move between the form's rows, digits and
+ / - answer a number, digits pick a category's label, y / n answer a yes/no question, and the
aesthetic rating keeps 1-5; Enter submits and the review carries its values."""

import pytest
from playwright.sync_api import expect

from loopweb.runs.models import Review
from tests.ladders.builders import climbers, make_ladder, versions
from tests.support.rubrics import to_review
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


def test_a_rubric_review_by_keyboard_only(open_page, shot, owner, reviewer, driver):
    ladder = make_ladder(
        owner,
        versions(1, prefix="jam"),
        climbers(2, prefix="jam"),
        name="Jam",
        reviewers=[reviewer.pk],
    )
    to_review(ladder, driver, run_queued_tasks)
    page = open_page(reviewer)
    page.goto(f"/ladders/{ladder.pk}/queue/")
    left = page.locator("#runs-left")
    expect(left).to_have_text("2 runs left to review")
    expect(page.locator("#reserved")).to_contain_text("kept for you until")
    run = int(page.locator("article.run-card").get_attribute("data-run"))

    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_contain_text("Previous / next row of the review form")
    page.keyboard.press("Escape")

    page.keyboard.press("4")  # the aesthetic rating's row is the first
    expect(page.locator("#rating-4")).to_be_checked()
    page.keyboard.press("]")
    expect(page.locator("#criterion-polish")).to_have_class("criterion form-row active-row")
    page.keyboard.press("7")
    expect(page.locator("#value-polish")).to_have_value("7")
    page.keyboard.press("+")
    page.keyboard.press("+")
    page.keyboard.press("-")
    expect(page.locator("#value-polish")).to_have_value("8")
    expect(page.locator("#rating-4")).to_be_checked()  # digits on this row are the row's
    page.keyboard.press("]")
    page.keyboard.press("2")
    expect(page.locator("#value-category-2")).to_be_checked()
    page.keyboard.press("]")
    page.keyboard.press("y")
    expect(page.locator("#value-fun-yes")).to_be_checked()
    page.keyboard.press("n")
    expect(page.locator("#value-fun-no")).to_be_checked()
    page.keyboard.press("]")  # round to the rating's row: 1-5 rate again
    page.keyboard.press("5")
    expect(page.locator("#rating-5")).to_be_checked()
    shot(page, "rubric-review-by-keyboard")
    page.keyboard.press("Enter")

    expect(page.locator(".messages")).to_contain_text(f"Review of run {run} saved.")
    expect(left).to_have_text("1 run left to review")
    review = Review.objects.get(run_id=run)
    assert review.aesthetic_rating == 5
    assert review.values == {"polish": 8, "category": "Art", "fun": False}
