"""The review queue: one run at a time (here in ladder order); a submitted review moves to the
next."""

import pytest
from django.urls import reverse

from ladders import services
from ladders.selectors import review_queue
from loopweb.runs.models import Review
from tests.console.helpers import text_of
from tests.ladders.builders import PERFECT, work

RECORD = {
    **PERFECT,
    "metrics": {"runtime_s": 61.5, "input_tokens": 12000, "usd_micros": 250000},
    "artifacts": [
        {"name": "build log", "url": "https://example.com/log.txt"},
        {"name": "sneaky", "url": "javascript:alert(1)"},
    ],
}


@pytest.fixture
def finished(ladder, driver, run_tasks):
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, RECORD)
    return ladder


def queue_url(ladder) -> str:
    """The queue in ladder order (hardest rung first is the default, see test_queue_filters)."""
    return reverse("console:queue", args=[ladder.pk]) + "?order=ladder"


def test_the_queue_shows_one_run_at_a_time_in_ladder_order(owner_client, finished):
    first = review_queue(finished)[0]
    page = owner_client.get(queue_url(finished))
    html, text = page.content.decode(), text_of(page)
    assert "4 runs left to review" in text
    assert f'data-run="{first["run"]}"' in html and html.count("data-run=") == 1
    assert "Rung 1 · step-1@1" in text
    assert "m1 via aider (acme)" in text
    assert "flawless" in text
    assert "5 of 5 passed" in text and "The player can jump" in text
    assert "Runtime 61.5 s" in text and "Cost $0.2500" in text
    assert 'href="https://example.com/log.txt"' in html
    assert "javascript:" not in html  # only http(s) addresses become links
    assert "sneaky (no web address)" in text


def test_a_reviewer_submits_a_review_and_the_count_drops(reviewer_client, reviewer, finished):
    first, second = [e["run"] for e in review_queue(finished)[:2]]
    page = reviewer_client.submit(
        queue_url(finished),
        {"run": first, "aesthetic-rating": "4", "writeup": "Tidy jumps.", "verdict": "accept"},
        follow=True,
    )
    text = text_of(page)
    assert f"Review of run {first} saved." in text
    assert "3 runs left to review" in text
    assert f'data-run="{second}"' in page.content.decode()
    review = Review.objects.get(run_id=first)
    assert (review.reviewer, review.aesthetic_rating, review.writeup, review.verdict) == (
        reviewer,
        4,
        "Tidy jumps.",
        "accept",
    )


def test_a_review_without_a_rating_is_refused_beside_the_rating(owner_client, finished):
    first = review_queue(finished)[0]["run"]
    page = owner_client.submit(queue_url(finished), {"run": first, "writeup": "hmm"})
    html = page.content.decode()
    assert page.status_code == 200
    error = html.split('id="rating-error"')[1].split("</ul>")[0]
    assert "Choose an aesthetic rating from 1 to 5." in error
    assert ">hmm</textarea>" in html  # what was typed is kept
    assert not Review.objects.exists()
    assert "4 runs left to review" in text_of(page)


def test_reviews_are_csrf_protected_forms(owner_client, finished):
    first = review_queue(finished)[0]["run"]
    response = owner_client.post(queue_url(finished), {"run": first, "aesthetic-rating": "3"})
    assert response.status_code == 403
    assert not Review.objects.exists()


def test_skip_shows_the_next_run_in_ladder_order(owner_client, finished):
    first, second = [e["run"] for e in review_queue(finished)[:2]]
    page = owner_client.get(queue_url(finished), {"after": first})
    assert f'data-run="{second}"' in page.content.decode()


def test_a_run_reviewed_meanwhile_is_not_reviewed_twice(owner_client, reviewer_client, finished):
    first = review_queue(finished)[0]["run"]
    data = {"run": first, "aesthetic-rating": "5"}
    reviewer_client.submit(queue_url(finished), data)
    page = owner_client.submit(queue_url(finished), data, follow=True)
    assert f"Run {first} is no longer waiting for review." in text_of(page)
    assert Review.objects.filter(run_id=first).count() == 1


def test_an_empty_queue_says_so(owner_client, ladder):
    text = text_of(owner_client.get(queue_url(ladder)))
    assert "0 runs left to review" in text and "Nothing left to review." in text
