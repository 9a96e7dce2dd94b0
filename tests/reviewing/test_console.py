"""The console's reviewing pages: a blind pairwise session, results, agreement, disagreements
and the backlog alert."""

import re

import pytest
from django.test import Client

from loopweb.reviewing.models import PairwiseJudgement, ReviewSettings
from tests.reviewing.world import climbed, entries, review, rung_ids

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def shown_pair(html: str) -> tuple[int, int]:
    left = re.search(r'name="left" value="(\d+)"', html)
    right = re.search(r'name="right" value="(\d+)"', html)
    return int(left.group(1)), int(right.group(1))


def test_a_session_shows_two_runs_as_a_and_b_and_names_no_climber(
    owner, reviewer, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    client = signed_in(reviewer)
    page = client.get(f"/ladders/{ladder.pk}/pairwise/")
    html = page.content.decode()
    assert page.status_code == 200
    assert 'id="side-a"' in html and 'id="side-b"' in html
    from ladders.models import Dispatch
    from loopweb.console.queries import climber_labels

    keys = sorted({e["climber"] for e in entries(ladder)})
    for name in (*keys, *climber_labels(Dispatch.objects.get(ladder=ladder), keys)):
        assert name not in html
    left, right = shown_pair(html)
    [rung] = rung_ids(ladder)
    answer = client.post(
        f"/ladders/{ladder.pk}/pairwise/",
        {"rung": rung, "left": left, "right": right, "choice": "tie"},
    )
    assert answer.status_code == 302 and answer["Location"].endswith(f"?rung={rung}")
    [judged] = PairwiseJudgement.objects.all()
    assert (judged.left_id, judged.right_id, judged.choice) == (left, right, "tie")
    after = client.get(answer["Location"]).content.decode()
    assert "No pair left for you on this rung" in after
    assert "Recorded: a tie." in after


def test_a_judgement_the_session_cannot_read_records_nothing(owner, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    [rung] = rung_ids(ladder)
    a, b = (e["run"] for e in entries(ladder))
    client = signed_in(owner)
    for body in (
        {"rung": rung, "left": a, "right": b, "choice": "both"},
        {"rung": rung, "left": "x", "right": b, "choice": "left"},
        {"rung": rung, "left": a, "right": a, "choice": "left"},
    ):
        assert client.post(f"/ladders/{ladder.pk}/pairwise/", body).status_code == 302
    assert PairwiseJudgement.objects.count() == 0


def test_results_rank_the_climbers_with_their_intervals(owner, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=2)
    [rung] = rung_ids(ladder)
    client = signed_in(owner)
    by = {}
    for e in entries(ladder):
        by.setdefault(e["climber"], []).append(e["run"])
    (winner, wins), (_, losses) = sorted(by.items())
    for x in wins:
        for y in losses:
            client.post(
                f"/ladders/{ladder.pk}/pairwise/",
                {"rung": rung, "left": y, "right": x, "choice": "right"},
            )
    assert PairwiseJudgement.objects.count() == 4
    html = client.get(f"/ladders/{ladder.pk}/pairwise/results/").content.decode()
    assert "4 judgements" in html
    assert html.index(f'data-climber="{winner}"') < html.index(
        'data-climber="', html.index(f'data-climber="{winner}"') + 1
    )
    assert "4–0–0" in html and "0–4–0" in html
    assert '<svg class="interval"' in html


def test_agreement_and_disagreements_pages(owner, reviewer, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    a, b = (e["run"] for e in entries(ladder))
    review(a, owner, 5, "accept")
    review(a, reviewer, 2, "reject")
    review(b, owner, 4, "accept")
    review(b, reviewer, 4, "accept")
    client = signed_in(reviewer)
    html = client.get(f"/ladders/{ladder.pk}/agreement/").content.decode()
    assert "olive and rita" in html
    assert 'data-alpha="verdict"' in html
    assert 'id="backlog-form"' not in html  # only the owner sets the alert
    split = client.get(f"/ladders/{ladder.pk}/disagreements/").content.decode()
    assert f'data-run="{a}"' in split and f'data-run="{b}"' not in split
    assert "verdict and rating" in split


def test_the_owner_sets_the_backlog_alert_and_a_reviewer_may_not(
    owner, reviewer, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    owner_client = signed_in(owner)
    assert (
        'id="backlog-form"' in owner_client.get(f"/ladders/{ladder.pk}/agreement/").content.decode()
    )
    saved = owner_client.post(f"/ladders/{ladder.pk}/backlog/", {"threshold": "2"}, follow=True)
    assert "as many wait now" in saved.content.decode()
    row = ReviewSettings.objects.get(ladder=ladder)
    assert (row.backlog_threshold, row.backlog_over) == (2, True)
    bad = owner_client.post(f"/ladders/{ladder.pk}/backlog/", {"threshold": "0"}, follow=True)
    assert "whole number of runs" in bad.content.decode()
    assert ReviewSettings.objects.get(ladder=ladder).backlog_threshold == 2
    owner_client.post(f"/ladders/{ladder.pk}/backlog/", {"threshold": ""})
    assert ReviewSettings.objects.get(ladder=ladder).backlog_threshold is None
    refused = signed_in(reviewer).post(f"/ladders/{ladder.pk}/backlog/", {"threshold": "1"})
    assert refused.status_code == 403


def test_the_board_links_to_the_pairwise_session(owner, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    html = signed_in(owner).get(f"/ladders/{ladder.pk}/").content.decode()
    assert f'href="/ladders/{ladder.pk}/pairwise/"' in html
