"""REST: /api/evalsets/, their runs, /api/proposals/, apply and outcomes (API.md)."""

import datetime as dt

import pytest
from django.utils import timezone

from evalsets.models import Evalset, EvalsetRun, Proposal
from tests.evalsets.helpers import PINS, apply, journal, make_evalset, policy, propose, t, verify

pytestmark = pytest.mark.django_db

PAGE_KEYS = {"count", "next", "previous", "results"}


# Evalsets -------------------------------------------------------------------------------------


def test_an_owner_creates_an_evalset_and_gets_its_hash(owner_api):
    response = owner_api.post("/api/evalsets/", {"name": "core", "pins": PINS}, format="json")
    assert response.status_code == 201, response.data
    assert len(response.data["hash"]) == 16
    assert response.data["pins"] == PINS
    assert Evalset.objects.get().hash == response.data["hash"]


def test_the_same_pins_in_any_order_give_the_same_hash_and_the_same_evalset(owner_api):
    first = owner_api.post("/api/evalsets/", {"name": "core", "pins": PINS}, format="json")
    again = owner_api.post("/api/evalsets/", {"name": "renamed", "pins": PINS[::-1]}, format="json")
    assert again.status_code == 200
    assert again.data["hash"] == first.data["hash"]
    assert again.data["name"] == "core"
    assert Evalset.objects.count() == 1


def test_different_pins_give_a_different_hash(owner_api):
    a = owner_api.post("/api/evalsets/", {"name": "a", "pins": PINS}, format="json")
    b = owner_api.post("/api/evalsets/", {"name": "b", "pins": PINS[:1]}, format="json")
    assert a.data["hash"] != b.data["hash"]


def test_a_pin_without_variant_or_engine_takes_the_defaults(owner_api):
    response = owner_api.post(
        "/api/evalsets/", {"name": "a", "pins": [{"case": "jump-1", "version": "3"}]}, format="json"
    )
    assert response.data["pins"] == [
        {"case": "jump-1", "version": "3", "variant": "default", "engine": None}
    ]


@pytest.mark.parametrize(
    ("pins", "field"),
    [
        ([], "pins"),
        ("jump-1", "pins"),
        ([{"case": "jump-1"}], "pins.0.version"),
        ([{"case": "jump 1", "version": "3"}], "pins.0.case"),
        ([{"case": "a", "version": "3"}, {"case": "a", "version": "x/y"}], "pins.1.version"),
        ([{"case": "a", "version": "3", "engine": 5}], "pins.0.engine"),
        ([{"case": "a", "version": "3", "extra": 1}], "pins.0.extra"),
        ([{"case": "a", "version": "3"}, {"case": "a", "version": "3"}], "pins.1"),
        (["a@3"], "pins.0"),
    ],
)
def test_malformed_pins_answer_400_naming_the_pin(owner_api, pins, field):
    response = owner_api.post("/api/evalsets/", {"name": "a", "pins": pins}, format="json")
    assert response.status_code == 400
    assert field in response.data["errors"], response.data


def test_only_owners_and_staff_create_evalsets_but_everyone_signed_in_reads_them(
    reviewer_api, driver_api, anon_api, owner
):
    evalset = make_evalset()
    body = {"name": "x", "pins": PINS}
    assert reviewer_api.post("/api/evalsets/", body, format="json").status_code == 403
    assert driver_api.post("/api/evalsets/", body, format="json").status_code == 403
    assert anon_api.get("/api/evalsets/").status_code == 401
    listed = reviewer_api.get("/api/evalsets/")
    assert set(listed.data) == PAGE_KEYS
    assert [e["hash"] for e in listed.data["results"]] == [evalset.hash]
    assert reviewer_api.get(f"/api/evalsets/{evalset.hash}/").data["name"] == "core"


def test_an_unknown_evalset_is_404(owner_api):
    assert owner_api.get("/api/evalsets/0123456789abcdef/").status_code == 404
    assert owner_api.get("/api/evalsets/0123456789abcdef/runs").status_code == 404


# Journaled runs -------------------------------------------------------------------------------


def test_journaling_a_run_stores_its_summary(owner_api):
    evalset = make_evalset()
    summary = {"passed": 8, "failed": 2, "total": 10, "error_rate": 0.2, "usd_micros": 1500}
    response = owner_api.post(
        f"/api/evalsets/{evalset.hash}/runs", {"summary": summary}, format="json"
    )
    assert response.status_code == 201, response.data
    assert response.data["summary"] == summary
    assert response.data["evalset"] == evalset.hash
    run = EvalsetRun.objects.get()
    assert abs(run.journaled_at - timezone.now()) < dt.timedelta(seconds=10)


def test_a_run_may_be_journaled_at_a_given_moment(owner_api):
    evalset = make_evalset()
    response = owner_api.post(
        f"/api/evalsets/{evalset.hash}/runs",
        {"summary": {"passed": 1, "failed": 0}, "journaled_at": "2026-01-02T03:04:05+00:00"},
        format="json",
    )
    assert response.status_code == 201
    assert response.data["journaled_at"].startswith("2026-01-02T03:04:05")


@pytest.mark.parametrize(
    ("summary", "field"),
    [
        ({"failed": 0}, "summary.passed"),
        ({"passed": 1}, "summary.failed"),
        ({"passed": True, "failed": 0}, "summary.passed"),
        ({"passed": 1, "failed": False}, "summary.failed"),
        ({"passed": -1, "failed": 0}, "summary.passed"),
        ({"passed": 1.5, "failed": 0}, "summary.passed"),
        ({"passed": "1", "failed": 0}, "summary.passed"),
        ({"passed": 1, "failed": 0, "accuracy": "high"}, "summary.accuracy"),
        ({"passed": 1, "failed": 0, "accuracy": True}, "summary.accuracy"),
        ({"passed": 1, "failed": 0, "accuracy": None}, "summary.accuracy"),
        ({"passed": 1, "failed": 0, "nested": {"a": 1}}, "summary.nested"),
        ({"passed": 2**64, "failed": 0}, "summary.passed"),
        ([1, 2], "summary"),
    ],
)
def test_a_malformed_summary_answers_400_naming_the_field(owner_api, summary, field):
    evalset = make_evalset()
    response = owner_api.post(
        f"/api/evalsets/{evalset.hash}/runs", {"summary": summary}, format="json"
    )
    assert response.status_code == 400
    assert field in response.data["errors"], response.data
    assert not EvalsetRun.objects.exists()


def test_a_run_cannot_be_journaled_in_the_future(owner_api):
    evalset = make_evalset()
    later = (timezone.now() + dt.timedelta(hours=1)).isoformat()
    response = owner_api.post(
        f"/api/evalsets/{evalset.hash}/runs",
        {"summary": {"passed": 1, "failed": 0}, "journaled_at": later},
        format="json",
    )
    assert response.status_code == 400
    assert "journaled_at" in response.data["errors"]


def test_nan_in_a_summary_is_a_parse_error_not_a_500(owner_api):
    evalset = make_evalset()
    response = owner_api.post(
        f"/api/evalsets/{evalset.hash}/runs",
        '{"summary": {"passed": 1, "failed": 0, "x": NaN}}',
        content_type="application/json",
    )
    assert response.status_code == 400


def test_drivers_and_owners_journal_runs_reviewers_only_read_them(driver_api, reviewer_api, owner):
    evalset = make_evalset()
    url = f"/api/evalsets/{evalset.hash}/runs"
    body = {"summary": {"passed": 1, "failed": 0}}
    assert driver_api.post(url, body, format="json").status_code == 201
    assert reviewer_api.post(url, body, format="json").status_code == 403
    listed = reviewer_api.get(url)
    assert listed.status_code == 200
    assert set(listed.data) == PAGE_KEYS
    assert listed.data["count"] == 1


def test_runs_are_listed_newest_first_and_paginated(owner_api):
    evalset = make_evalset()
    for minute in range(3):
        journal(evalset, t(minute), passed=minute)
    response = owner_api.get(f"/api/evalsets/{evalset.hash}/runs?pageSize=2")
    assert response.data["count"] == 3
    assert [r["summary"]["passed"] for r in response.data["results"]] == [2, 1]
    assert response.data["next"]


# Proposals ------------------------------------------------------------------------------------


def proposal_body(evalset, **overrides):
    return {
        "title": "Retry flaky builds once",
        "authored_by": "llm",
        "applicable": True,
        "outcome_evalset": policy(evalset, checkpoints=[{"after_runs": 1}]),
        **overrides,
    }


def test_an_owner_creates_a_proposal_and_gets_the_policy_back_canonical(owner_api):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    response = owner_api.post("/api/proposals/", proposal_body(evalset), format="json")
    assert response.status_code == 201, response.data
    data = response.data
    assert data["outcome_evalset"] == {
        "hash": evalset.hash,
        "field": "passed",
        "higher_is_better": True,
        "horizons_ms": [86_400_000, 604_800_000, 2_592_000_000],
        "checkpoints": [{"after_runs": 1}],
        "baseline": "newest_before_apply",
        "min_effect": None,
        "cost": None,
        "significance": None,
    }
    assert data["schedule"] == [{"after_runs": 1}]
    assert data["applied_at"] is None
    assert (data["gate"], data["skipped"]) == ("not_applied", None)
    assert data["owner"] == "olive"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"title": ""}, "title"),
        ({"authored_by": "robot"}, "authored_by"),
        ({"applicable": "yes"}, "applicable"),
        ({"applicable": 1}, "applicable"),
    ],
)
def test_malformed_proposal_fields_answer_400(owner_api, change, field):
    evalset = make_evalset()
    response = owner_api.post("/api/proposals/", proposal_body(evalset, **change), format="json")
    assert response.status_code == 400
    assert field in response.data["errors"]


def test_reviewers_and_drivers_cannot_create_proposals(reviewer_api, driver_api, owner):
    evalset = make_evalset()
    for client in (reviewer_api, driver_api):
        response = client.post("/api/proposals/", proposal_body(evalset), format="json")
        assert response.status_code == 403


def test_proposals_are_scoped_to_their_creator(owner_api, outsider_api, owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    assert [p["id"] for p in owner_api.get("/api/proposals/").data["results"]] == [proposal.pk]
    assert outsider_api.get("/api/proposals/").data["count"] == 0


def test_the_outsider_gets_404_on_another_owners_proposal(outsider_api, owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    base = f"/api/proposals/{proposal.pk}"
    assert outsider_api.get(f"{base}/").status_code == 404
    assert outsider_api.post(f"{base}/apply", {}, format="json").status_code == 404
    assert outsider_api.get(f"{base}/outcomes").status_code == 404
    proposal.refresh_from_db()
    assert proposal.applied_at is None


def test_the_proposal_list_filters_by_author(owner_api, owner):
    evalset = make_evalset()
    propose(owner, evalset, created_at=t(100))
    human = propose(owner, evalset, created_at=t(101), authored_by="human")
    listed = owner_api.get("/api/proposals/?authored_by=human").data
    assert [p["id"] for p in listed["results"]] == [human.pk]


def test_applying_marks_the_proposal_applied_now(owner_api, owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    response = owner_api.post(f"/api/proposals/{proposal.pk}/apply", {}, format="json")
    assert response.status_code == 200, response.data
    proposal.refresh_from_db()
    assert abs(proposal.applied_at - timezone.now()) < dt.timedelta(seconds=10)
    assert response.data["gate"] == "skipped"  # no run of its evalset before it was created


def test_applying_at_a_given_moment(owner_api, owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    response = owner_api.post(
        f"/api/proposals/{proposal.pk}/apply", {"applied_at": t(110).isoformat()}, format="json"
    )
    assert response.status_code == 200
    proposal.refresh_from_db()
    assert proposal.applied_at == t(110)


def test_applying_twice_is_a_409(owner_api, owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    url = f"/api/proposals/{proposal.pk}/apply"
    assert owner_api.post(url, {}, format="json").status_code == 200
    again = owner_api.post(url, {}, format="json")
    assert again.status_code == 409
    assert "already applied" in again.data["detail"]


@pytest.mark.parametrize("when", ["before", "future"])
def test_applying_before_the_proposal_existed_or_in_the_future_is_a_400(owner_api, owner, when):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    moment = t(99) if when == "before" else timezone.now() + dt.timedelta(days=1)
    response = owner_api.post(
        f"/api/proposals/{proposal.pk}/apply", {"applied_at": moment.isoformat()}, format="json"
    )
    assert response.status_code == 400
    assert "applied_at" in response.data["errors"]


# Outcomes -------------------------------------------------------------------------------------


def test_the_whole_loop_over_rest(owner_api, run_tasks):
    evalset_hash = owner_api.post(
        "/api/evalsets/", {"name": "core", "pins": PINS}, format="json"
    ).data["hash"]
    runs = f"/api/evalsets/{evalset_hash}/runs"
    before = (timezone.now() - dt.timedelta(hours=1)).isoformat()
    owner_api.post(
        runs,
        {"summary": {"passed": 90, "failed": 10, "usd_micros": 1_000_000}, "journaled_at": before},
        format="json",
    )
    body = {
        "title": "Shorter system prompt",
        "authored_by": "llm",
        "applicable": True,
        "outcome_evalset": {
            "hash": evalset_hash,
            "field": "passed",
            "higher_is_better": True,
            "checkpoints": [{"after_runs": 1}, {"after_runs": 2}],
            "min_effect": {"points": 5},
            "cost": {"field": "usd", "max_increase_ratio": 1.2},
        },
    }
    proposal = owner_api.post("/api/proposals/", body, format="json").data
    owner_api.post(f"/api/proposals/{proposal['id']}/apply", {}, format="json")
    run_tasks()
    outcomes = owner_api.get(f"/api/proposals/{proposal['id']}/outcomes").data
    assert (outcomes["count"], outcomes["gate"], outcomes["skipped"]) == (0, "measuring", None)

    owner_api.post(
        runs, {"summary": {"passed": 86, "failed": 14, "usd_micros": 1_500_000}}, format="json"
    )
    run_tasks()
    outcomes = owner_api.get(f"/api/proposals/{proposal['id']}/outcomes").data
    assert set(outcomes) >= PAGE_KEYS
    (result,) = outcomes["results"]
    assert result["checkpoint"] == {"after_runs": 1}
    assert result["metric"] == f"evalset:{evalset_hash}:passed"
    assert (result["baseline"], result["current"], result["tolerance"]) == (90, 86, 5)
    assert result["verdict"] == "held_costlier"
    assert result["baseline_kind"] == "newest_before_apply"
    assert result["best_before"] == 90
    assert result["cost"] == {
        "read": "breached",
        "field": "usd",
        "max_increase_ratio": 1.2,
        "baseline": 1.0,
        "current": 1.5,
    }
    assert {"baseline_run", "current_run", "measured_at"} <= set(result)
    detail = owner_api.get(f"/api/proposals/{proposal['id']}/").data
    assert detail["latest_verdict"] == "held_costlier"
    assert detail["advisory_flag"]["result"] == result["id"]
    assert detail["revert_draft"] is None

    owner_api.post(runs, {"summary": {"passed": 70, "failed": 30}}, format="json")
    run_tasks()
    outcomes = owner_api.get(f"/api/proposals/{proposal['id']}/outcomes").data
    assert [r["verdict"] for r in outcomes["results"]] == ["held_costlier", "regressed"]
    assert outcomes["results"][1]["cost"]["read"] == "not_measurable"
    assert outcomes["gate"] == "complete"
    detail = owner_api.get(f"/api/proposals/{proposal['id']}/").data
    assert detail["revert_draft"]["severity"] == "high"
    assert detail["revert_draft"]["result"] == outcomes["results"][1]["id"]


@pytest.mark.parametrize(
    ("authored_by", "applicable", "reason"),
    [
        ("human", True, "authored_by_human"),
        ("llm", False, "not_applicable"),
    ],
)
def test_outcomes_say_why_the_gate_skips_a_proposal(
    owner_api, owner, authored_by, applicable, reason
):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(
        owner, evalset, created_at=t(100), authored_by=authored_by, applicable=applicable
    )
    apply(proposal, t(110))
    outcomes = owner_api.get(f"/api/proposals/{proposal.pk}/outcomes").data
    assert (outcomes["gate"], outcomes["skipped"], outcomes["results"]) == (
        "skipped",
        reason,
        [],
    )


def test_outcomes_say_a_proposal_without_a_baseline_run_carries_no_metric(owner_api, owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))
    outcomes = owner_api.get(f"/api/proposals/{proposal.pk}/outcomes").data
    assert outcomes["skipped"] == "no_baseline_run"


def test_the_proposal_list_costs_the_same_queries_for_one_or_many(
    owner_api, owner, django_assert_max_num_queries
):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=1)
    verify(proposal)
    # token lookup, count, the page (proposals joined with evalset, owner, revert draft and
    # advisory flag; the latest verdict and the baseline check as subqueries)
    with django_assert_max_num_queries(4):
        assert owner_api.get("/api/proposals/").status_code == 200
    for minute in range(10):
        propose(owner, evalset, created_at=t(101 + minute))
    with django_assert_max_num_queries(4):
        response = owner_api.get("/api/proposals/")
    assert response.data["count"] == 11


def test_the_schema_describes_the_evalset_endpoints(owner_api):
    response = owner_api.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"] if hasattr(response, "json") else {}
    for path in (
        "/api/evalsets/",
        "/api/evalsets/{hash}/runs",
        "/api/proposals/",
        "/api/proposals/{id}/apply",
        "/api/proposals/{id}/outcomes",
    ):
        assert path in paths, sorted(paths)


def test_a_proposal_keeps_its_policy_as_given(owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 3}, 1000])
    assert Proposal.objects.get(pk=proposal.pk).outcome_evalset["checkpoints"] == [
        {"after_runs": 3},
        {"after_ms": 1000},
    ]


def test_outcomes_cost_the_same_queries_however_many_results(
    owner_api, owner, django_assert_max_num_queries
):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10, usd_micros=10)
    proposal = propose(
        owner,
        evalset,
        created_at=t(100),
        checkpoints=[{"after_runs": n} for n in range(1, 9)],
        cost={"field": "usd", "max_increase_ratio": 2},
    )
    apply(proposal, t(110))
    for n in range(1, 9):
        journal(evalset, t(110 + n), passed=10, usd_micros=10)
        verify(proposal)
    # token lookup, the proposal (with its annotations), count, the page of results
    with django_assert_max_num_queries(4):
        response = owner_api.get(f"/api/proposals/{proposal.pk}/outcomes")
    assert response.data["count"] == 8
    assert all(r["cost"]["read"] == "within" for r in response.data["results"])
