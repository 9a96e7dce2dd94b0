"""A blind pairwise session in Chromium: a reviewer judges every pair of a rung by keyboard
(a, b, t), sees no climber named, and reads the ranking the judgements give."""

import pytest
from playwright.sync_api import expect

from ladders import services
from loopweb.reviewing.models import PairwiseJudgement
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


def test_a_pairwise_session_by_keyboard(open_page, shot, owner, reviewer, driver):
    combos = climbers(3, prefix="pw")
    ladder = make_ladder(
        owner, versions(1, prefix="pair"), combos, name="Pairs", reviewers=[reviewer.pk]
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_queued_tasks, PERFECT)
    page = open_page(reviewer)
    page.goto(f"/ladders/{ladder.pk}/")
    page.locator("#pairwise-link").click()
    expect(page.get_by_role("heading", name="Pairwise review")).to_be_visible()
    session = page.locator("#pairwise-session")
    expect(session).to_have_attribute("data-remaining", "3")
    expect(page.locator("#side-a h2")).to_have_text("A")
    expect(page.locator("#side-b h2")).to_have_text("B")
    for combo in combos:
        expect(page.locator("main")).not_to_contain_text(combo.model)
    shot(page, "pairwise-session")

    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()

    shown = []
    for key, remaining in (("a", "2"), ("t", "1")):
        shown.append((page.locator("#side-a").get_attribute("data-run"), key))
        page.keyboard.press(key)
        expect(session).to_have_attribute("data-remaining", remaining)
    page.keyboard.press("b")
    expect(page.locator("#no-pair")).to_contain_text("No pair left for you on this rung")
    expect(page.locator(".messages")).to_contain_text("Recorded: B.")

    judged = list(PairwiseJudgement.objects.order_by("id"))
    assert [j.choice for j in judged] == ["left", "tie", "right"]
    assert [str(j.left_id) for j in judged[:2]] == [run for run, _ in shown]
    assert {j.reviewer_id for j in judged} == {reviewer.pk}

    page.locator("#no-pair a").click()
    expect(page.get_by_role("heading", name="Pairwise results")).to_be_visible()
    ranking = page.locator("table.ranking").first
    expect(ranking.locator("tbody tr")).to_have_count(3)
    expect(page.locator("#rung-overall")).to_contain_text("3 judgements")
    shot(page, "pairwise-results")


def test_agreement_and_disagreements_read_in_a_browser(open_page, shot, owner, reviewer, driver):
    from loopweb.runs.models import Review

    ladder = make_ladder(
        owner,
        versions(1, prefix="agr"),
        climbers(3, prefix="agr"),
        name="Agree",
        reviewers=[reviewer.pk],
    )
    services.start_dispatch(ladder=ladder)
    runs = work(driver, run_queued_tasks, PERFECT)
    for i, run in enumerate(runs):
        Review.objects.create(run=run, reviewer=owner, aesthetic_rating=4, verdict="accept")
        Review.objects.create(
            run=run,
            reviewer=reviewer,
            aesthetic_rating=2 if i == 0 else 4,
            verdict="reject" if i == 0 else "accept",
        )
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/agreement/")
    expect(page.locator("#pairs")).to_contain_text("olive and rita")
    page.locator("#threshold").fill("2")
    page.locator("#save-threshold").click()
    expect(page.locator(".messages")).to_contain_text("review.backlog will be sent when 2")
    shot(page, "reviewing-agreement")
    page.locator("#tab-disagreements").click()
    expect(page.locator("#disagreements tbody tr")).to_have_count(1)
    expect(page.locator("#disagreements")).to_contain_text("verdict and rating")
    shot(page, "reviewing-disagreements")


@pytest.mark.parametrize("width", [1440, 390], ids=["desktop", "phone"])
def test_no_reviewing_page_has_an_axe_violation(open_page, owner, reviewer, driver, width):
    from loopweb.runs.models import Review
    from tests.console.browser.test_accessibility import audited, violations

    ladder = make_ladder(
        owner,
        versions(1, prefix="axe"),
        climbers(2, prefix="axe"),
        name="Axe",
        reviewers=[reviewer.pk],
    )
    services.start_dispatch(ladder=ladder)
    runs = work(driver, run_queued_tasks, PERFECT)
    for run in runs:
        Review.objects.create(run=run, reviewer=owner, aesthetic_rating=5, verdict="accept")
        Review.objects.create(run=run, reviewer=reviewer, aesthetic_rating=1, verdict="reject")
    page = audited(open_page, reviewer, {"width": width, "height": 900})
    page.goto(f"/ladders/{ladder.pk}/pairwise/")
    found = violations(page, "pairwise session")
    page.keyboard.press("a")
    expect(page.locator("#no-pair")).to_be_visible()
    found += violations(page, "pairwise session, none left")
    owner_page = audited(open_page, owner, {"width": width, "height": 900})
    for path in ("pairwise/results/", "agreement/", "disagreements/"):
        response = owner_page.goto(f"/ladders/{ladder.pk}/{path}")
        assert response.status == 200, path
        found += violations(owner_page, path)
    assert found == [], "\n".join(found)
