"""The verify gate's opt-in significance policy (EVALSETS.md "Significance"): a drop past the
tolerance regresses only when Fisher's exact test on the two runs' passed of total says it is
more than chance; otherwise the result is inconclusive: no revert draft, no advisory flag, a
``proposal.inconclusive`` event, and the page says how many cases per run would tell."""

import itertools

import pytest

from evalsets import verdict
from evalsets.models import AdvisoryFlag, OutcomeResult, RevertDraft
from evalsets.policy import parse_policy
from loopweb.runs.checks import Invalid
from tests.console.helpers import Browser, text_of
from tests.evalsets.helpers import apply, journal, make_evalset, propose, t, verify

pytestmark = pytest.mark.django_db

EVALSETS = itertools.count()
SIGNIFICANT = {"significance": {"alpha": 0.05}, "checkpoints": [{"after_runs": 1}]}


def measured(owner, before: tuple[int, int], after: tuple[int, int], usd=None, **policy):
    # An evalset of its own (its own pins) for each measurement of a test.
    pin = {"case": f"case-{next(EVALSETS)}", "version": "1", "variant": "default", "engine": None}
    evalset = make_evalset(pins=[pin])
    cost_before, cost_after = ({"usd_micros": u} for u in usd) if usd else ({}, {})
    journal(evalset, t(0), passed=before[0], failed=before[1], **cost_before)
    proposal = propose(owner, evalset, created_at=t(100), **{**SIGNIFICANT, **policy})
    apply(proposal, t(110))
    journal(evalset, t(120), passed=after[0], failed=after[1], **cost_after)
    [result] = verify(proposal, now=t(130))
    return proposal, result


def test_7_of_10_to_6_of_10_is_inconclusive_and_opens_no_revert(owner):
    proposal, result = measured(owner, (7, 3), (6, 4))
    assert result.verdict == "inconclusive"
    assert result.p_value == pytest.approx(1.0)
    # 70 % against 60 %: Fleiss's continuity-corrected size at α 0.05 and 80 % power.
    assert result.cases_needed == 376
    assert not RevertDraft.objects.exists()
    assert not AdvisoryFlag.objects.exists()


def test_90_of_100_to_60_of_100_regresses(owner):
    proposal, result = measured(owner, (90, 10), (60, 40))
    assert result.verdict == "regressed"
    # R: fisher.test(matrix(c(90, 10, 60, 40), 2)): p-value = 1.243e-06.
    assert result.p_value == pytest.approx(1.243e-06, rel=1e-3)
    assert RevertDraft.objects.get().proposal == proposal


def test_without_significance_the_same_drop_regresses(owner):
    _, result = measured(owner, (7, 3), (6, 4), significance=None)
    assert result.verdict == "regressed"
    assert result.p_value is None
    assert RevertDraft.objects.exists()


def test_a_lower_is_better_failed_count_is_tested_the_same_way(owner):
    _, result = measured(owner, (7, 3), (6, 4), field="failed", higher_is_better=False)
    assert result.verdict == "inconclusive"
    _, result = measured(owner, (90, 10), (60, 40), field="failed", higher_is_better=False)
    assert result.verdict == "regressed"


def test_a_held_value_stays_held_and_records_its_p_value(owner):
    _, result = measured(owner, (6, 4), (7, 3))
    assert result.verdict == "held"
    assert result.p_value == pytest.approx(1.0)


def test_inconclusive_dominates_a_cost_breach_and_a_significant_hold_still_flags_it(owner):
    """EVALSETS.md: worse past the tolerance but not significantly is inconclusive (neither a
    revert nor a flag); a value that held is read as the seed says, its cost bound included."""
    cost = {"field": "usd", "max_increase_ratio": 1.5}
    _, result = measured(owner, (7, 3), (6, 4), cost=cost, usd=(1_000_000, 2_000_000))
    assert (result.verdict, result.cost_read) == ("inconclusive", "breached")
    assert not AdvisoryFlag.objects.exists()
    _, result = measured(owner, (6, 4), (7, 3), cost=cost, usd=(1_000_000, 2_000_000))
    assert result.verdict == "held_costlier"
    assert AdvisoryFlag.objects.count() == 1


def test_the_verdict_as_a_pure_function():
    judged = verdict.judge(
        field="passed",
        higher_is_better=True,
        baseline={"passed": 7, "failed": 3},
        current={"passed": 6, "failed": 4},
        alpha=0.05,
    )
    assert (judged.verdict, judged.p_value, judged.cases_needed) == (
        "inconclusive",
        pytest.approx(1.0),
        376,
    )
    judged = verdict.judge(
        field="passed",
        higher_is_better=True,
        baseline={"passed": 7, "failed": 3},
        current={"passed": 6, "failed": 4},
    )
    assert (judged.verdict, judged.p_value) == ("regressed", None)


@pytest.mark.parametrize(
    ("significance", "field", "where"),
    [
        ({"alpha": 0}, "passed", "significance.alpha"),
        ({"alpha": 0.5}, "passed", "significance.alpha"),
        ({"alpha": "0.05"}, "passed", "significance.alpha"),
        ({"alpha": True}, "passed", "significance.alpha"),
        ({}, "passed", "significance.alpha"),
        ({"alpha": 0.05, "beta": 1}, "passed", "significance.beta"),
        ([0.05], "passed", "significance"),
        ({"alpha": 0.05}, "error_rate", "significance"),
    ],
)
def test_a_bad_significance_policy_is_refused_naming_the_field(significance, field, where):
    with pytest.raises(Invalid) as caught:
        parse_policy(
            {"hash": "ab", "field": field, "higher_is_better": True, "significance": significance}
        )
    assert where in caught.value.errors


def test_the_api_refuses_a_bad_significance_with_a_400(owner, owner_api):
    evalset = make_evalset()
    response = owner_api.post(
        "/api/proposals/",
        {
            "title": "x",
            "authored_by": "llm",
            "applicable": True,
            "outcome_evalset": {
                "hash": evalset.hash,
                "field": "error_rate",
                "higher_is_better": False,
                "significance": {"alpha": 0.05},
            },
        },
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "outcome_evalset.significance" in errors
    assert "passed or failed" in errors["outcome_evalset.significance"][0]


def test_the_api_shows_the_p_value_and_the_policy(owner, owner_api):
    proposal, _ = measured(owner, (7, 3), (6, 4))
    body = owner_api.get(f"/api/proposals/{proposal.pk}/outcomes").json()
    [result] = body.get("results", body)
    assert result["verdict"] == "inconclusive"
    assert result["p_value"] == result["pValue"] == pytest.approx(1.0)
    assert result["cases_needed"] == 376
    policy = owner_api.get(f"/api/proposals/{proposal.pk}/").json()["outcome_evalset"]
    assert policy["significance"] == {"alpha": 0.05}


def test_the_proposal_page_says_it_needs_more_evidence(owner):
    proposal, _ = measured(owner, (7, 3), (6, 4))
    page = Browser(owner).get(f"/proposals/{proposal.pk}/")
    assert page.status_code == 200
    text = text_of(page)
    assert "needs more evidence" in text
    assert "about 376 cases per run" in text
    assert "p = 1" in text
    assert OutcomeResult.objects.get().verdict == "inconclusive"
