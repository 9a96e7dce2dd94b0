"""Needs attention in Chromium: the recorded failure and its detail beside each block, grouped by
cause, and Retry all blocked relaunching every blocked climber while the board stays live."""

import re

import pytest
from playwright.sync_api import expect

from loopweb.runs import services as run_services
from tests.ladders.builders import climbers, make_ladder, queued, versions
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

NOT_FOUND = "driver answered 404: no case named jump-9 on this host"


def test_needs_attention_shows_the_failure_detail_and_retry_all(open_page, shot, owner, driver):
    ladder = make_ladder(
        owner, versions(2, prefix="nf"), climbers(3, prefix="nf"), name="Unknown case", retryCount=0
    )
    page = open_page(owner)
    page.goto(f"/ladders/{ladder.pk}/")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")

    run_queued_tasks()
    for job in run_services.claim_jobs(driver=driver, limit=10):
        run_services.fail_job(
            job_id=job.pk, driver=driver, failure="infrastructure", detail=NOT_FOUND
        )
    run_queued_tasks()

    attention = page.locator("#attention")
    expect(page.locator("#ladder-status")).to_have_text("Needs attention")
    group = attention.locator('[data-cause="failing"]')
    expect(group).to_contain_text("3 climbers")
    expect(group).to_contain_text("no automatic retries")
    expect(group.locator(".failure-text")).to_have_text(
        f"Attempt 1 of 1 ended infrastructure: {NOT_FOUND}"
    )
    expect(attention.locator(".blocked")).to_have_count(3)
    expect(attention).not_to_contain_text("aider|nf1|acme")
    shot(page, "attention-failure-detail")

    page.get_by_role("button", name="Retry all 3 blocked").click()
    expect(page.locator(".messages")).to_contain_text(
        "Retried 3 blocked climbers: nf1 via aider (acme), nf2 via aider (acme) and "
        "nf3 via aider (acme)."
    )
    expect(page.locator("#attention")).to_have_count(0)
    expect(page.locator("#ladder-status")).to_have_text("Running")
    expect(page.locator("#climber-row-2 .climber-status")).to_have_text(
        re.compile("Running rung 1")
    )
    assert len(queued(ladder)) == 3
    shot(page, "attention-retried-all")
