"""The console says how sure a change is: the compare page shows significant changes plainly,
inconclusive ones as such (with the p-values on demand) and the configuration differences that
could explain a change; a slot's tooltip and panel show its pass rate with a 95 % interval; the
compare page and the ladder editor say how many runs per rung would tell a change from chance."""

import itertools

from ladders import services
from tests.console.helpers import Browser, text_of
from tests.history.helpers import PAID, PAID_BROKEN
from tests.history.test_significance import failing_then_passing
from tests.ladders.builders import climbers, make_ladder, versions, work


def test_a_slot_shows_its_pass_rate_with_an_interval(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1), climbers(1), runsPerCell=3)
    services.start_dispatch(ladder=ladder, by=owner)
    results = itertools.cycle([PAID, PAID, PAID_BROKEN])
    work(driver, run_tasks, lambda job: next(results))
    browser = Browser(owner)
    board = browser.get(f"/ladders/{ladder.pk}/")
    assert "2 of 3 passed (21–94 %)" in board.content.decode()
    rung = ladder.rungs.get().rung_id
    panel = browser.get(f"/ladders/{ladder.pk}/slots/0/{rung}/")
    assert panel.status_code == 200
    assert "2 of 3 passed (21–94 %)" in text_of(panel)


def test_a_significant_change_reads_plainly(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=5)
    page = Browser(owner).get(f"/ladders/{ladder.pk}/compare/?a={a}&b={b}")
    assert page.status_code == 200
    html, text = page.content.decode(), text_of(page)
    assert 'data-climber="aider|m1|acme" data-change="up" data-verdict="up"' in html
    assert "1 up · 0 down · 0 same · 0 inconclusive · 0 new · 0 gone" in text
    # The p-values, on demand.
    assert "<details" in html and "p = 0.0079" in text
    # What differs between the two configurations, and that it could explain the change.
    assert "Rung 1: step-1@1 → step-1@2" in text
    assert "could explain" in text
    assert "49 runs per rung" in text


def test_an_inconclusive_change_says_so(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=1)
    page = Browser(owner).get(f"/ladders/{ladder.pk}/compare/?a={a}&b={b}")
    html, text = page.content.decode(), text_of(page)
    assert 'data-change="up" data-verdict="inconclusive"' in html
    assert "0 up · 0 down · 0 same · 1 inconclusive · 0 new · 0 gone" in text
    assert "inconclusive" in text and "p = 1" in text
    assert "1 run per rung" in text


def test_a_bad_alpha_is_said_on_the_compare_page(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=1)
    page = Browser(owner).get(f"/ladders/{ladder.pk}/compare/?a={a}&b={b}&alpha=2")
    assert page.status_code == 400
    assert "alpha: Must be a number between 0 and 0.5" in text_of(page)


def test_the_ladder_editor_says_how_many_runs_tell_a_change(owner):
    ladder = make_ladder(owner, versions(1), climbers(1))
    page = Browser(owner).get(f"/ladders/{ladder.pk}/edit/")
    assert page.status_code == 200
    text = text_of(page)
    assert "about 49 runs per rung" in text and "30 points" in text
