"""The console in Chromium: create a ladder in the editor, Run it, watch a scripted driver's
runs land on the board without a reload, Retry a blocked climber, Stop and cancel running."""

import re

import pytest
from playwright.sync_api import expect

from ladders.models import Dispatch, Ladder
from loopweb.runs import services as run_services
from tests.factories import CombinationFactory, CoverageGroupFactory
from tests.ladders.builders import PERFECT, climbers, make_ladder, queued, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]


def board_of(ladder) -> str:
    return f"/ladders/{ladder.pk}/"


def polls(page, count: int) -> None:
    """Wait until the board has asked for ``count`` more refreshes (however long the machine
    takes), each one answered."""
    for _ in range(count):
        with page.expect_response(lambda r: r.url.split("?")[0].endswith("/board"), timeout=30_000):
            pass


def test_an_owner_creates_a_ladder_runs_it_and_the_board_follows_the_driver(
    open_page, shot, owner, driver
):
    versions(2, prefix="jump")
    CombinationFactory(model="gpt-x")
    CoverageGroupFactory(
        owner=owner, name="frontier", combinations=[CombinationFactory(model="gpt-y")]
    )
    page = open_page(owner)
    page.goto("/")
    page.get_by_role("link", name="Create ladder").click()
    expect(page.get_by_role("heading", name="Create a ladder")).to_be_visible()

    # Saving without a name shows the error beside the field.
    page.get_by_role("button", name="Save ladder").click()
    expect(page.locator("#name-error")).to_contain_text("may not be blank")

    page.get_by_label("Name", exact=True).fill("Platformer climb")
    for slug in ("jump-1", "jump-2"):
        page.get_by_label("Case", exact=True).select_option(slug)
        expect(page.get_by_label("Version", exact=True)).to_have_value("1")
        page.get_by_role("button", name="Add rung").click()
        expect(page.locator("#editor-status")).to_contain_text(f"({slug}@1)")
    page.get_by_label("frontier").check()
    page.get_by_label("gpt-x via aider (acme)").check()
    page.get_by_label("Runs per rung").fill("1")
    shot(page, "01-editor")
    page.get_by_role("button", name="Save ladder").click()

    expect(page).to_have_url(re.compile(r"/ladders/\d+/$"))
    status = page.locator("#ladder-status")
    expect(status).to_have_text("Not run yet")
    ladder = Ladder.objects.get(name="Platformer climb")
    assert ladder.rungs.count() == 2

    page.get_by_role("button", name="Run", exact=True).click()
    expect(status).to_have_text("Running")
    expect(page.locator(".messages")).to_contain_text("Run started")
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_disabled()
    expect(page.locator("#runs-under_way")).to_have_text("2 under way")
    page.evaluate("window.sameDocument = true")

    # The scripted driver completes rung 1 for both climbers; the board follows by itself.
    work(driver, run_queued_tasks, PERFECT, rounds=1)
    expect(page.locator("#slot-0-0")).to_have_attribute("data-status", "passed")
    expect(page.locator("#slot-1-0")).to_have_attribute("data-status", "passed")
    expect(page.locator("#runs-done")).to_have_text("2 of 4 runs done")
    expect(page.locator("#runs-under_way")).to_have_text("2 under way")  # rung 2, launched
    expect(page.locator("#slot-0-1")).to_have_attribute("data-status", "running")
    page.locator("#slot-0-1").hover()
    expect(page.locator("#slot-0-1-tip")).to_be_visible()
    expect(page.locator("#slot-0-1-tip")).to_contain_text("Passing / required")
    shot(page, "02-board-running")

    work(driver, run_queued_tasks, PERFECT)
    expect(status).to_have_text("Finished")
    expect(page.locator(".messages")).to_have_count(0)  # "Run started" described a running board
    expect(page.locator("#runs-done")).to_have_text("4 of 4 runs done")
    expect(page.locator("#board-poll")).not_to_have_attribute("hx-trigger", re.compile(".*"))
    expect(page.get_by_role("button", name="Run", exact=True)).to_be_enabled()
    assert page.evaluate("window.sameDocument") is True  # updated without a reload
    shot(page, "03-board-finished")

    page.get_by_role("link", name="Ladders", exact=True).first.click()
    row = page.locator(f'tr[data-ladder="{ladder.pk}"]')
    expect(row).to_contain_text("Finished")
    expect(row).to_contain_text("4/4")
    shot(page, "00-ladders")


def test_a_blocked_climber_raises_needs_attention_and_retry_relaunches_it(
    open_page, shot, owner, driver
):
    ladder = make_ladder(
        owner, versions(2, prefix="flaky"), climbers(2, prefix="fl"), name="Flaky infra"
    )
    page = open_page(owner)
    page.goto(board_of(ladder))
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")

    # Climber 1 passes rung 1; climber 2's launches end on infrastructure, retries used up.
    def outcome(job):
        return "infrastructure" if job.combination.model == "fl2" else PERFECT

    work(driver, run_queued_tasks, outcome, rounds=3)
    work(driver, run_queued_tasks, PERFECT)
    attention = page.locator("#attention")
    expect(page.locator("#ladder-status")).to_have_text("Needs attention")
    expect(attention).to_contain_text("Needs attention")
    expect(attention).to_contain_text("Blocked at rung 1: failing")
    expect(attention).to_contain_text("Fix: fix the cause, then Retry.")
    expect(attention).to_contain_text("Attempt 2 of 2 ended infrastructure")
    shot(page, "04-needs-attention")

    attention.get_by_role("button", name=re.compile("^Retry")).click()
    expect(page.locator(".messages")).to_contain_text("Retried fl2 via aider (acme)")
    expect(page.locator("#attention")).to_have_count(0)
    expect(page.locator("#ladder-status")).to_have_text("Running")
    expect(page.locator('tr[data-climber="aider|fl2|acme"] .climber-status')).to_have_text(
        "Running rung 1"
    )
    assert len(queued(ladder)) == 1
    shot(page, "05-retried")


def test_stop_and_cancel_running_asks_first_and_reports_the_count(open_page, shot, owner, driver):
    ladder = make_ladder(owner, versions(1, prefix="busy"), climbers(3, prefix="bz"), name="Busy")
    page = open_page(owner)
    page.goto(board_of(ladder))
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#runs-under_way")).to_have_text("3 under way")
    for job in run_services.claim_jobs(driver=driver, limit=2):
        run_services.report_status(job_id=job.pk, driver=driver, status="running")
    expect(page.locator("#stop-help")).to_contain_text(
        "lets the 2 started jobs (dispatched, starting or running) finish"
    )

    page.get_by_role("link", name="Stop and cancel running…").click()
    expect(page.get_by_role("heading", name="Stop and cancel running?")).to_be_visible()
    expect(page.locator("#under-way-count")).to_have_text("2 jobs")
    expect(page.locator("#confirm-what")).to_contain_text("partly or wholly paid for")
    assert Dispatch.objects.get(ladder=ladder).status == "running"
    shot(page, "06-stop-confirm")

    page.get_by_role("button", name="Stop and cancel 2 running jobs").click()
    expect(page.locator(".messages")).to_contain_text("Dispatch stopped: 3 jobs cancelled")
    expect(page.locator("#ladder-status")).to_have_text("Stopped")
    expect(page.locator("#slot-0-0")).to_have_attribute("data-status", "skipped")
    expect(page.locator('tr[data-climber="aider|bz1|acme"] .climber-status')).to_have_text(
        "Stopped at rung 1"
    )
    shot(page, "07-stopped")


def test_a_running_board_logs_no_error_in_the_browsers_console(open_page, owner):
    # Not even the site icon's: the page names its own, so the browser asks no /favicon.ico.
    ladder = make_ladder(owner, versions(2), climbers(2))
    page = open_page(owner)
    errors = []
    page.on("console", lambda m: errors.append((m.text, m.location)) if m.type == "error" else None)
    page.goto(board_of(ladder))
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")
    expect(page.locator("#board-height-chart")).to_be_visible()
    polls(page, 4)
    assert errors == []
