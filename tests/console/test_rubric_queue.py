"""The console's review settings page (rubric, assignment, reservations) and the queue's form
following the rubric (docs/reviewing.md)."""

import pytest
from django.urls import reverse

from ladders.models import ReviewReservation
from loopweb.runs.models import Review
from tests.console.helpers import text_of
from tests.ladders.builders import climbers, make_ladder, versions
from tests.support.rubrics import to_review


def settings_url(ladder) -> str:
    return reverse("console:review-settings", args=[ladder.pk])


def queue_url(ladder) -> str:
    return reverse("console:queue", args=[ladder.pk]) + "?order=ladder"


@pytest.fixture
def jam(ladder, driver, run_tasks):
    return to_review(ladder, driver, run_tasks)


def row(n, **fields):
    found = {f"c{n}-{name}": value for name, value in fields.items() if name != "required"}
    if fields.get("required"):
        found[f"c{n}-required"] = "on"
    return found


def test_the_owner_defines_a_rubric_and_assignment_on_the_review_settings_page(
    owner_client, ladder, reviewer
):
    page = owner_client.get(settings_url(ladder))
    assert page.status_code == 200
    assert "Rubric" in text_of(page) and "rita" in text_of(page)
    saved = owner_client.submit(
        settings_url(ladder),
        {
            "rows": "3",
            **row(0, id="polish", label="Polish", kind="number", min="1", max="10", step="1",
                  description="How finished it feels.", required=True),
            **row(1, id="category", label="", kind="category", labels="Gameplay, Art, Audio",
                  description="The jam category it fits best."),
            **row(2, id="", label="", kind="number"),
            "reviews-per-run": "2",
            "reservation-minutes": "30",
            "assigned": ["rita"],
        },
        follow=True,
    )  # fmt: skip
    assert "Review settings saved." in text_of(saved)
    ladder.refresh_from_db()
    assert [(c["id"], c["kind"]) for c in ladder.rubric] == [
        ("polish", "number"),
        ("category", "category"),
    ]
    assert ladder.rubric[1]["labels"] == ["Gameplay", "Art", "Audio"]
    assert (ladder.reviews_per_run, ladder.reservation_minutes) == (2, 30)
    assert [u.username for u in ladder.assignees.all()] == ["rita"]


def test_a_criterion_that_cannot_be_answered_is_shown_beside_its_row(owner_client, ladder):
    page = owner_client.submit(
        settings_url(ladder),
        {
            "rows": "2",
            **row(0, id="fun", label="Fun", kind="boolean"),
            **row(1, id="polish", label="Polish", kind="number", min="5", max="1", step="1"),
            "reviews-per-run": "0",
            "reservation-minutes": "15",
        },
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="c1-max-error"' in html and "greater than the min" in text_of(page)
    assert 'id="reviews-per-run-error"' in html
    ladder.refresh_from_db()
    assert ladder.rubric == []


def test_the_ladders_editor_links_to_its_review_settings(owner_client, ladder):
    page = owner_client.get(reverse("console:ladder-edit", args=[ladder.pk]))
    assert f'href="{settings_url(ladder)}"' in page.content.decode()


def test_a_reviewer_cannot_change_the_review_settings(reviewer_client, ladder):
    assert reviewer_client.get(settings_url(ladder)).status_code == 403


def test_the_queues_form_follows_the_rubric(reviewer_client, jam):
    page = reviewer_client.get(queue_url(jam))
    html, text = page.content.decode(), text_of(page)
    assert 'name="value-polish"' in html and 'min="1"' in html and 'max="10"' in html
    assert "How finished it feels." in text
    assert 'id="value-category-2"' in html and "Art" in text
    assert 'id="value-fun-yes"' in html
    assert "Previous / next row of the review form" in text  # the shortcuts list
    assert 'src="/static/rubric.js"' in html or "rubric.js" in html


def test_a_review_from_the_console_carries_its_values(reviewer_client, reviewer, jam):
    first = jam_first(reviewer_client, jam)
    page = reviewer_client.submit(
        queue_url(jam),
        {
            "run": first,
            "aesthetic-rating": "4",
            "writeup": "Neat.",
            "value-polish": "7",
            "value-category": "Art",
            "value-fun": "true",
        },
        follow=True,
    )
    assert f"Review of run {first} saved." in text_of(page)
    review = Review.objects.get(run_id=first, reviewer=reviewer)
    assert review.values == {"polish": 7, "category": "Art", "fun": True}


def test_a_value_the_rubric_refuses_is_shown_beside_its_criterion(reviewer_client, jam):
    first = jam_first(reviewer_client, jam)
    page = reviewer_client.submit(
        queue_url(jam), {"run": first, "aesthetic-rating": "4", "value-polish": "12"}
    )
    assert page.status_code == 200
    assert 'id="value-polish-error"' in page.content.decode()
    assert "Give a number from 1 to 10." in text_of(page)
    assert not Review.objects.filter(run_id=first).exists()


def jam_first(client, ladder) -> int:
    html = client.get(queue_url(ladder)).content.decode()
    return int(html.split('data-run="')[1].split('"')[0])


def test_opening_a_run_reserves_it_for_the_reviewer(reviewer_client, reviewer, jam):
    first = jam_first(reviewer_client, jam)
    kept = ReviewReservation.objects.get(reviewer=reviewer)
    assert kept.run_id == first
    page = reviewer_client.get(queue_url(jam))
    assert "kept for you until" in text_of(page)


@pytest.mark.parametrize("n_climbers", [2, 30])
def test_the_queue_page_runs_a_bounded_number_of_queries(
    owner, reviewer, driver, run_tasks, browser, django_assert_max_num_queries, n_climbers
):
    ladder = make_ladder(owner, versions(2), climbers(n_climbers), reviewers=[reviewer.pk])
    to_review(ladder, driver, run_tasks, rounds=2, reviews_per_run=2)
    client = browser(reviewer)
    client.get(queue_url(ladder))  # sessions and the like, once
    with django_assert_max_num_queries(32):  # 28 measured, whatever the climbers
        page = client.get(queue_url(ladder))
    assert page.status_code == 200
