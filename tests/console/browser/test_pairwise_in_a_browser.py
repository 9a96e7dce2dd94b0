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
