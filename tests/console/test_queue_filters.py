"""The review queue for heavy use: orders, filters, "my reviews" and correcting one's own review,
and the disagreement between the validator and the reviewer."""

from types import SimpleNamespace

import pytest
from django.urls import reverse

from ladders import services
from ladders.selectors import review_queue
from loopweb.console.review_queue import Choice, arrange, disagrees
from loopweb.runs.models import Review, Run
from loopweb.runs.services import review_run
from signals_app.models import Signal
from tests.console.helpers import text_of
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work

SCUFFED = {**PERFECT, "checklist": {"start": True}}


def review(rating, verdict=""):
    return SimpleNamespace(aesthetic_rating=rating, verdict=verdict)


@pytest.mark.parametrize(
    ("rating", "given", "expected"),
    [
        ("flawless", review(5, "reject"), True),
        ("great", review(1), True),
        ("flawless", review(4), False),
        ("broken", review(2, "accept"), True),
        ("scuffed", review(5), True),
        ("scuffed", review(1), False),
        ("passable", review(1, "reject"), False),  # the middle of the scale disagrees with nobody
        (None, review(5), False),
        ("great", None, False),
    ],
)
def test_validator_and_reviewer_disagree_when_they_read_the_run_oppositely(rating, given, expected):
    assert disagrees(rating, given) is expected


def entry(run, rung, climber="c", rating="flawless", at=0):
    return {
        "run": run,
        "rung": rung,
        "climber": climber,
        "validatorRating": rating,
        "finishedAt": at,
    }


def test_orders_keep_ladder_order_among_equals():
    entries = [
        entry(1, "a", rating="great", at=3),
        entry(2, "a", "d", None, 1),
        entry(3, "b", rating="broken", at=2),
    ]
    numbers = {"a": 1, "b": 2}
    ids = lambda order: [e["run"] for e in arrange(entries, Choice(order=order), numbers=numbers)]  # noqa: E731
    assert ids("ladder") == [1, 2, 3]
    assert ids("hardest") == [3, 1, 2]
    assert ids("rating") == [2, 3, 1]  # unrated, broken, great
    assert ids("newest") == [1, 3, 2]


def test_filters_combine():
    entries = [entry(1, "a", "x"), entry(2, "a", "y", "broken"), entry(3, "b", "x", None)]
    kept = arrange(entries, Choice(order="ladder", rung="a", climber="x"), numbers={})
    assert [e["run"] for e in kept] == [1]
    unrated = arrange(entries, Choice(order="ladder", rating="unrated"), numbers={})
    assert [e["run"] for e in unrated] == [3]
    failing = arrange(
        entries,
        Choice(order="ladder", outcome="failure"),
        numbers={},
        acceptance={1: "success", 2: "failure", 3: "unknown"},
    )
    assert [e["run"] for e in failing] == [2]


@pytest.fixture
def climbed(owner, reviewer, driver, run_tasks):
    ladder = make_ladder(
        owner,
        versions(3, prefix="qf"),
        climbers(2, prefix="qf"),
        name="queue",
        reviewers=[reviewer.pk],
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    return ladder


def queue_url(ladder, **query) -> str:
    url = reverse("console:queue", args=[ladder.pk])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def test_the_default_order_shows_the_hardest_rung_first(owner_client, climbed):
    last_rung = climbed.dispatch.snapshot["rungs"][-1]["id"]
    hardest = [e for e in review_queue(climbed) if e["rung"] == last_rung][0]
    page = owner_client.get(queue_url(climbed))
    assert f'data-run="{hardest["run"]}"' in page.content.decode()
    assert "Hardest rung first" in text_of(page)


def test_a_filter_by_rung_keeps_its_runs_only(owner_client, climbed):
    first_rung = climbed.dispatch.snapshot["rungs"][0]["id"]
    page = owner_client.get(queue_url(climbed, rung=first_rung))
    assert "2 runs left to review" in text_of(page)


def test_a_review_keeps_the_readers_choice(reviewer_client, climbed):
    first_rung = climbed.dispatch.snapshot["rungs"][0]["id"]
    run = [e for e in review_queue(climbed) if e["rung"] == first_rung][0]["run"]
    response = reviewer_client.submit(
        queue_url(climbed),
        {"run": run, "aesthetic-rating": "3", "rung": first_rung, "order": "ladder"},
    )
    assert response.status_code == 302
    assert f"rung={first_rung}" in response["Location"] and "order=ladder" in response["Location"]


def test_my_reviews_list_mine_and_a_review_is_corrected(reviewer_client, reviewer, climbed):
    [first, *_] = review_queue(climbed)
    run = first["run"]
    review_run(
        run=Run.objects.get(pk=run),
        reviewer=reviewer,
        aesthetic_rating=2,
        writeup="meh",
        verdict="accept",
    )
    mine = reviewer_client.get(queue_url(climbed, view="mine"))
    text = text_of(mine)
    assert "1 review of yours" in text and "Correct your review" in text
    assert 'value="2" checked' in mine.content.decode()

    corrected = reviewer_client.submit(
        queue_url(climbed),
        {
            "view": "mine",
            "run": run,
            "aesthetic-rating": "5",
            "writeup": "better on a second look",
            "verdict": "reject",
        },
        follow=True,
    )
    assert f"Your review of run {run} was corrected." in text_of(corrected)
    stored = Review.objects.get(run_id=run, reviewer=reviewer)
    assert (stored.aesthetic_rating, stored.writeup, stored.verdict) == (
        5,
        "better on a second look",
        "reject",
    )
    referees = Signal.objects.filter(run_id=run, name="referee").order_by("id")
    assert [s.value for s in referees] == ["accept", "reject"]  # the latest verdict is read


def test_disagreement_filter_in_my_reviews(reviewer_client, reviewer, climbed):
    a, b = [Run.objects.get(pk=e["run"]) for e in review_queue(climbed)[:2]]
    review_run(run=a, reviewer=reviewer, aesthetic_rating=1, writeup="", verdict="reject")
    review_run(run=b, reviewer=reviewer, aesthetic_rating=5, writeup="", verdict="accept")
    page = reviewer_client.get(queue_url(climbed, view="mine", disagree=1))
    assert "1 review of yours" in text_of(page)
    assert f'data-run="{a.pk}"' in page.content.decode()


def test_correcting_a_review_one_has_not_written_is_refused(owner_client, climbed):
    run = review_queue(climbed)[0]["run"]
    response = owner_client.submit(
        queue_url(climbed), {"view": "mine", "run": run, "aesthetic-rating": "3"}, follow=True
    )
    assert f"Run {run} is not among your reviews of this ladder." in text_of(response)
    assert not Review.objects.exists()


def test_the_board_shows_review_coverage(owner_client, reviewer, climbed):
    run = Run.objects.get(pk=review_queue(climbed)[0]["run"])
    board = reverse("console:board", args=[climbed.pk])
    assert "Reviewed 0 of 6 completed runs · 6 to review" in text_of(owner_client.get(board))
    review_run(run=run, reviewer=reviewer, aesthetic_rating=3, writeup="")
    assert "Reviewed 1 of 6 completed runs · 5 to review" in text_of(owner_client.get(board))
