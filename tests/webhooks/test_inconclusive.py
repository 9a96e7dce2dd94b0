"""proposal.inconclusive: a checkpoint of a proposal with a significance policy came out worse
than its baseline, but by no more than chance explains (no revert draft, no advisory flag)."""

import pytest

from evalsets.models import RevertDraft
from tests.evalsets.test_significance import measured
from tests.webhooks.helpers import deliver_all, subscribe

pytestmark = pytest.mark.django_db


def test_an_inconclusive_result_is_announced_once(owner, receiver):
    subscribe(owner, receiver.url, events=["proposal.inconclusive", "proposal.regressed"])
    proposal, result = measured(owner, (7, 3), (6, 4))
    deliver_all()
    [request] = receiver.requests
    assert request.event == "proposal.inconclusive"
    data = request.json["data"]
    assert data["proposal"]["id"] == proposal.pk
    assert data["result"]["verdict"] == "inconclusive"
    assert data["result"]["pValue"] == pytest.approx(1.0)
    assert data["result"]["casesNeeded"] == 376
    assert data["url"].endswith(f"/proposals/{proposal.pk}/")
    assert not RevertDraft.objects.exists()


def test_the_text_format_says_it_needs_more_evidence(owner, receiver):
    subscribe(owner, receiver.url, events=["proposal.inconclusive"], format="text")
    measured(owner, (7, 3), (6, 4))
    deliver_all()
    [request] = receiver.requests
    text = request.json["text"]
    assert "inconclusive" in text and "about 376 cases per run" in text
