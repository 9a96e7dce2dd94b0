"""The console pages: the caller's proposals, and one proposal's outcome timeline."""

import pytest
from django.test import Client

from tests.evalsets.helpers import apply, journal, make_evalset, propose, t, verify

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def measured(owner):
    """A proposal with a held result at the first run and a regression at the second."""
    evalset = make_evalset()
    journal(evalset, t(0), passed=35)
    journal(evalset, t(1), passed=238)
    journal(evalset, t(2), passed=130)
    proposal = propose(
        owner,
        evalset,
        created_at=t(100),
        title="Trim the planner prompt",
        min_effect={"count": 5},
        checkpoints=[{"after_runs": 1}, {"after_runs": 2}, {"after_grains": 50}],
    )
    apply(proposal, t(110))
    journal(evalset, t(120), passed=128)
    verify(proposal)
    journal(evalset, t(130), passed=100)
    verify(proposal)
    return proposal


def test_pages_need_a_signed_in_user(client, measured):
    for url in ("/proposals/", f"/proposals/{measured.pk}/"):
        response = client.get(url)
        assert response.status_code == 302
        assert "/login/" in response["Location"]


def test_the_list_shows_the_callers_proposals_with_their_latest_verdict(owner, measured):
    evalset = measured.evalset
    propose(owner, evalset, created_at=t(101), title="Unapplied idea", authored_by="human")
    page = signed_in(owner).get("/proposals/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Trim the planner prompt" in html
    assert 'class="verdict regressed"' in html
    assert "Unapplied idea" in html
    assert "skipped: authored_by_human" in html


def test_the_list_shows_nobody_elses_proposals(outsider, measured):
    html = signed_in(outsider).get("/proposals/").content.decode()
    assert "Trim the planner prompt" not in html


def test_the_timeline_charts_baseline_against_current_and_shows_the_revert_draft(owner, measured):
    page = signed_in(owner).get(f"/proposals/{measured.pk}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "<polyline" in html
    assert html.count('<circle cx="') == 4  # baseline and current at two checkpoints
    assert "Revert draft" in html and "high severity" in html
    assert "after_runs: 1" in html and "after_runs: 2" in html
    assert "after_grains: 50" in html and "not due yet" in html


def test_the_timeline_shows_an_advisory_flag(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10, usd_micros=100)
    proposal = propose(
        owner,
        evalset,
        created_at=t(100),
        checkpoints=[{"after_runs": 1}],
        cost={"field": "usd", "max_increase_ratio": 1.5},
    )
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10, usd_micros=1000)
    verify(proposal)
    html = signed_in(owner).get(f"/proposals/{proposal.pk}/").content.decode()
    assert "Advisory flag" in html
    assert "Revert draft" not in html


def test_a_due_checkpoint_waiting_for_a_run_says_so(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 0}])
    apply(proposal, t(110))
    html = signed_in(owner).get(f"/proposals/{proposal.pk}/").content.decode()
    assert "waiting for a measurable run" in html
    assert "<svg" not in html


def test_a_proposal_closed_with_no_baseline_says_so(owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[60_000])
    apply(proposal, t(110))
    verify(proposal, now=t(120))
    html = signed_in(owner).get(f"/proposals/{proposal.pk}/").content.decode()
    assert 'id="gate-closed"' in html
    assert "Closed with no baseline" in html


def test_a_proposal_closed_as_unmeasurable_says_why(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)  # no accuracy
    proposal = propose(owner, evalset, created_at=t(100), field="accuracy", checkpoints=[60_000])
    apply(proposal, t(110))
    verify(proposal, now=t(120))
    html = signed_in(owner).get(f"/proposals/{proposal.pk}/").content.decode()
    assert 'data-gate-outcome="unmeasurable"' in html
    assert "Closed as unmeasurable" in html
    assert "<code>accuracy</code> as its <code>newest_before_apply</code> baseline" in html


def test_the_outsider_gets_404_on_another_owners_proposal_page(outsider, measured):
    assert signed_in(outsider).get(f"/proposals/{measured.pk}/").status_code == 404


def test_the_evalsets_list_shows_pins_and_the_latest_summary(owner, measured):
    page = signed_in(owner).get("/evalsets/").content.decode()
    evalset = measured.evalset
    assert f'data-evalset="{evalset.hash}"' in page
    assert f"/evalsets/{evalset.hash}/" in page
    assert "passed 100" in page  # the latest journaled run's summary


def test_an_evalset_page_charts_its_runs_and_lists_its_proposals(owner, measured):
    client = signed_in(owner)
    evalset = measured.evalset
    page = client.get(f"/evalsets/{evalset.hash}/").content.decode()
    assert 'id="runs-chart"' in page
    assert page.count("<circle ") == 5  # five journaled runs
    assert "Trim the planner prompt applied" in page  # the apply, marked on the chart
    assert f"/proposals/{measured.pk}/" in page and "regressed" in page
    assert f"/evalsets/{evalset.hash}/" in client.get(f"/proposals/{measured.pk}/").content.decode()


def test_an_evalset_page_shows_only_the_callers_proposals(outsider, measured):
    page = signed_in(outsider).get(f"/evalsets/{measured.evalset.hash}/").content.decode()
    assert 'id="runs-chart"' in page  # evalsets are shared like the catalog
    assert "Trim the planner prompt" not in page


def test_an_unknown_evalset_is_a_404(owner, db):
    assert signed_in(owner).get("/evalsets/ffff/").status_code == 404
