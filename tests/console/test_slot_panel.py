"""A rung slot's runs and jobs (the board's side panel) and the run page in the console."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from ladders import services
from loopweb.runs import services as run_services
from loopweb.runs.cells import CasePin
from tests.console.helpers import text_of
from tests.ladders.builders import BROKEN, PERFECT, climbers, make_ladder, versions, work


def page_of(response) -> str:
    return response.content.decode()


def slot_url(ladder, index=0, rung=None) -> str:
    rung = rung or ladder.rungs.order_by("position")[0].rung_id
    return reverse("console:slot", args=[ladder.pk, index, rung])


def test_the_panel_lists_the_slots_runs_counted_first_then_beyond_the_target(
    owner_client, owner, driver, run_tasks
):
    combo = climbers(1, prefix="sp")[0]
    [version] = versions(1, prefix="sp")
    ladder = make_ladder(owner, [version], [combo], retryCount=0)
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    # A later run of the same cell, launched outside Loopweb: beyond the slot's target of one.
    later, _ = run_services.push_run(
        pushed_by=owner,
        pin=CasePin(version.case.slug, "1", "default", None),
        combination=combo,
        outcome="completed",
        record=BROKEN,
        finished_at=timezone.now(),
    )
    response = owner_client.get(slot_url(ladder), HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    runs = [
        int(n)
        for n in re.findall(r'class="slot-run place-\w+" data-run="(\d+)"', page_of(response))
    ]
    assert runs[-1] == later.pk  # counted first, then beyond the target
    assert f'class="slot-run place-beyond" data-run="{later.pk}"' in page_of(response)
    page = response.content.decode()
    assert "<html" not in page  # the panel alone, for the board's own request
    text = text_of(response)
    assert "sp1 via aider (acme) on" in text
    assert "passed" in text
    assert "counted" in text and "flawless" in text
    assert "Checklist:" in text
    assert "Acceptance" in text and "not reviewed" in text
    assert "Jobs this dispatch launched" in text and "1 of 1" in text
    assert "/runs/" in page and f"ladder={ladder.pk}" in page


def test_the_slot_has_a_page_of_its_own_without_htmx(owner_client, ladder, run_tasks):
    services.start_dispatch(ladder=ladder)
    response = owner_client.get(slot_url(ladder))
    assert response.status_code == 200
    assert '<main id="main"' in response.content.decode()
    assert "No run of this slot's cell yet." in text_of(response)


def test_the_board_opens_the_panel_its_address_names(owner_client, ladder, driver, run_tasks):
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=1)
    rung = ladder.rungs.order_by("position")[0].rung_id
    page = owner_client.get(reverse("console:board", args=[ladder.pk]), {"slot": f"1/{rung}"})
    html = page.content.decode()
    assert 'id="slot-panel"' in html and f'data-slot="1/{rung}"' in html
    closed = owner_client.get(reverse("console:board", args=[ladder.pk]), {"slot": "9/nope"})
    assert "data-slot=" not in closed.content.decode()


def test_an_unknown_slot_is_a_404(owner_client, ladder):
    assert owner_client.get(slot_url(ladder)).status_code == 404  # not run yet
    services.start_dispatch(ladder=ladder)
    assert owner_client.get(slot_url(ladder, index=7)).status_code == 404
    assert owner_client.get(slot_url(ladder, rung="r_nope")).status_code == 404


def test_outsiders_get_404_and_reviewers_read_the_panel(outsider_client, reviewer_client, ladder):
    services.start_dispatch(ladder=ladder)
    assert outsider_client.get(slot_url(ladder)).status_code == 404
    assert reviewer_client.get(slot_url(ladder)).status_code == 200


@pytest.mark.parametrize("runs", [1, 12])
def test_the_panel_costs_a_bounded_number_of_queries(
    owner, owner_client, driver, run_tasks, django_assert_max_num_queries, runs
):
    ladder = make_ladder(
        owner, versions(1, prefix=f"pq{runs}"), climbers(1, prefix=f"pq{runs}"), runsPerCell=runs
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    # The board's own reads (about 17, see test_query_budget) plus the panel's: case title,
    # checklist, runs, signals, reviews, the owner's rule, the jobs.
    with django_assert_max_num_queries(26):
        response = owner_client.get(slot_url(ladder), HTTP_HX_REQUEST="true")
    assert response.content.decode().count('class="slot-run ') == runs


def test_the_run_page_has_breadcrumbs_back_to_the_slot(owner_client, ladder, driver, run_tasks):
    services.start_dispatch(ladder=ladder)
    [run, *_] = work(driver, run_tasks, PERFECT, rounds=1)
    rung = ladder.rungs.order_by("position")[0].rung_id
    response = owner_client.get(
        reverse("console:run-page", args=[run.pk]), {"ladder": ladder.pk, "slot": f"0/{rung}"}
    )
    page = response.content.decode()
    assert 'id="crumb-ladder"' in page and ladder.name in page
    assert f"?slot=0%2F{rung}" in page
    text = text_of(response)
    assert "Attempt 1 of 2: job" in text
    assert "Checklist:" in text and "Acceptance" in text and "Signals" in text
    assert "Your review" in text


def test_a_reviewer_reviews_from_the_run_page(reviewer_client, ladder, driver, run_tasks):
    services.start_dispatch(ladder=ladder)
    [run, *_] = work(driver, run_tasks, PERFECT, rounds=1)
    url = reverse("console:run-review", args=[run.pk])
    response = reviewer_client.submit(
        url, {"aesthetic-rating": "4", "writeup": "tidy", "verdict": "accept"}, follow=True
    )
    text = text_of(response)
    assert f"Review of run {run.pk} saved." in text
    assert "rated 4/5 · accept" in text
    assert "Your review" not in text
    assert run.reviews.get().aesthetic_rating == 4


def test_a_review_without_a_rating_is_refused_with_the_field(
    reviewer_client, ladder, driver, run_tasks
):
    services.start_dispatch(ladder=ladder)
    [run, *_] = work(driver, run_tasks, PERFECT, rounds=1)
    response = reviewer_client.submit(
        reverse("console:run-review", args=[run.pk]), {"writeup": "x"}, follow=True
    )
    assert "Choose an aesthetic rating from 1 to 5." in text_of(response)
    assert not run.reviews.exists()
