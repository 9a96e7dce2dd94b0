"""Needs attention diagnoses: each blocked climber's reason in words with the recorded failure
and detail of the job that used up its retries, blocks grouped by cause, Retry all blocked."""

import pytest
from django.urls import reverse

from ladders import services
from loopweb.runs import services as run_services
from loopweb.runs.models import ModelEntry
from tests.console.helpers import text_of
from tests.factories import CombinationFactory
from tests.ladders.builders import PERFECT, climbers, make_ladder, queued, versions, work

NOT_FOUND = "driver answered 404: no case named jump-9 on this host"


def board_url(ladder) -> str:
    return reverse("console:board", args=[ladder.pk])


def fail_everything(driver, run_tasks, detail=NOT_FOUND, rounds=5):
    """Act as a driver whose every launch ends with no run, saying why."""
    run_tasks()
    for _ in range(rounds):
        jobs = run_services.claim_jobs(driver=driver, limit=100)
        if not jobs:
            return
        for job in jobs:
            run_services.fail_job(
                job_id=job.pk, driver=driver, failure="infrastructure", detail=detail
            )
        run_tasks()


def test_a_failing_block_shows_the_recorded_failure_and_its_detail(
    owner_client, owner, driver, run_tasks
):
    ladder = make_ladder(owner, versions(1, prefix="nf"), climbers(1, prefix="nf"), retryCount=2)
    services.start_dispatch(ladder=ladder)
    fail_everything(driver, run_tasks)

    text = text_of(owner_client.get(board_url(ladder)))
    assert "Needs attention" in text
    assert "A launch used up its 2 automatic retries with no run" in text
    assert "Attempt 3 of 3 ended infrastructure: " + NOT_FOUND in text
    assert "nf1 via aider (acme)" in text
    assert "aider|nf1|acme" not in text  # labels, not keys


def test_with_no_automatic_retries_the_block_says_so(owner_client, owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1, prefix="nr"), climbers(1, prefix="nr"), retryCount=0)
    services.start_dispatch(ladder=ladder)
    fail_everything(driver, run_tasks)

    text = text_of(owner_client.get(board_url(ladder)))
    assert "A launch failed with no run, and the dispatch allows no automatic retries" in text
    assert "Attempt 1 of 1 ended infrastructure" in text
    assert "used up its retries" not in text


def test_blocks_are_grouped_by_cause(owner_client, owner, driver, run_tasks):
    ghost = CombinationFactory(model="ghost", catalog=False)
    ModelEntry.objects.create(name="ghost", provider="acme", launchable=False)
    ladder = make_ladder(
        owner, versions(1, prefix="gc"), [*climbers(2, prefix="gc"), ghost], retryCount=0
    )
    services.start_dispatch(ladder=ladder)
    fail_everything(driver, run_tasks)

    page = owner_client.get(board_url(ladder)).content.decode()
    assert page.count('class="cause-group"') == 2
    failing = page[page.index('data-cause="failing"') :]
    failing = failing[: failing.index("</section>")]
    assert "gc1 via aider (acme)" in failing and "gc2 via aider (acme)" in failing
    assert failing.count(NOT_FOUND) == 1  # the shared detail is said once, for the group
    assert "ghost via aider (acme)" in page[page.index('data-cause="unlaunchable"') :]


def test_retry_all_blocked_relaunches_every_retryable_climber(
    owner_client, owner, driver, run_tasks
):
    ladder = make_ladder(owner, versions(2, prefix="ra"), climbers(3, prefix="ra"), retryCount=0)
    services.start_dispatch(ladder=ladder)
    fail_everything(driver, run_tasks)
    assert not queued(ladder)
    page = owner_client.get(board_url(ladder)).content.decode()
    assert 'id="retry-all"' in page

    response = owner_client.submit(reverse("console:retry-all", args=[ladder.pk]), follow=True)

    text = text_of(response)
    assert "Retried 3 blocked climbers: ra1 via aider (acme), ra2 via aider (acme) and ra3" in text
    assert "Needs attention" not in text
    assert len(queued(ladder)) == 3


def test_retry_all_with_nothing_blocked_says_so(owner_client, owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1, prefix="rn"), climbers(1, prefix="rn"))
    services.start_dispatch(ladder=ladder)
    response = owner_client.submit(reverse("console:retry-all", args=[ladder.pk]), follow=True)
    assert "No climber is blocked as failing or unlaunchable" in text_of(response)
    assert len(queued(ladder)) == 1


def test_retry_names_the_climber_by_its_label(owner_client, owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1, prefix="rl"), climbers(1, prefix="rl"), retryCount=0)
    services.start_dispatch(ladder=ladder)
    fail_everything(driver, run_tasks)
    response = owner_client.submit(
        reverse("console:retry", args=[ladder.pk]), {"climber": "aider|rl1|acme"}, follow=True
    )
    assert "Retried rl1 via aider (acme): its rung is launched again." in text_of(response)


def test_reviewers_and_outsiders_may_not_retry_all(reviewer_client, outsider_client, ladder):
    url = reverse("console:retry-all", args=[ladder.pk])
    assert reviewer_client.submit(url).status_code == 403
    assert outsider_client.submit(url).status_code == 404


@pytest.mark.parametrize("n", [2, 20])
def test_a_board_with_blocked_climbers_costs_a_bounded_number_of_queries(
    owner_client, owner, driver, run_tasks, django_assert_max_num_queries, n
):
    ladder = make_ladder(owner, versions(3, prefix=f"q{n}"), climbers(n, prefix=f"q{n}x"))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=1)
    fail_everything(driver, run_tasks)
    # The board, with one query for the blocking failures beside the refresh's (see
    # test_query_budget): the same for 2 and for 20 blocked climbers.
    with django_assert_max_num_queries(22):
        response = owner_client.get(reverse("console:board-refresh", args=[ladder.pk]))
    assert response.content.decode().count('class="blocked"') == n
