"""The ``outcome_evalset`` policy (seed 003): defaults, and every malformed form answered 400."""

import math

import pytest

from evalsets.policy import parse_policy
from evalsets.verdict import Checkpoint
from loopweb.runs.checks import Invalid
from tests.evalsets.helpers import make_evalset

BASE = {"hash": "abc", "field": "passed", "higher_is_better": True}


def errors_of(raw) -> dict:
    with pytest.raises(Invalid) as caught:
        parse_policy(raw)
    return caught.value.errors


def test_defaults_are_spelled_out():
    policy = parse_policy(BASE)
    assert policy.as_json() == {
        "hash": "abc",
        "field": "passed",
        "higher_is_better": True,
        "horizons_ms": [86_400_000, 604_800_000, 2_592_000_000],
        "checkpoints": [],
        "baseline": "newest_before_apply",
        "min_effect": None,
        "cost": None,
        "significance": None,
    }
    assert [c.as_json() for c in policy.schedule()] == [
        {"after_ms": 86_400_000},
        {"after_ms": 604_800_000},
        {"after_ms": 2_592_000_000},
    ]


def test_a_bare_integer_checkpoint_is_milliseconds():
    policy = parse_policy({**BASE, "checkpoints": [5000, {"after_runs": 1}]})
    assert policy.schedule() == [Checkpoint.of("after_ms", 5000), Checkpoint.of("after_runs", 1)]


def test_checkpoints_win_over_horizons():
    policy = parse_policy({**BASE, "horizons_ms": [1, 2], "checkpoints": [{"after_grains": 4}]})
    assert [c.as_json() for c in policy.schedule()] == [{"after_grains": 4}]


def test_an_empty_checkpoint_list_means_the_horizons():
    policy = parse_policy({**BASE, "horizons_ms": [7], "checkpoints": []})
    assert [c.as_json() for c in policy.schedule()] == [{"after_ms": 7}]


def test_a_full_policy_round_trips():
    raw = {
        **BASE,
        "higher_is_better": False,
        "field": "error_rate",
        "checkpoints": [{"after_runs": 1}],
        "baseline": "high_water",
        "min_effect": {"points": 1.5},
        "cost": {"field": "usd", "max_increase_ratio": 1.25},
    }
    policy = parse_policy(raw)
    assert parse_policy(policy.as_json()) == policy
    assert policy.metric == "evalset:abc:error_rate"


MALFORMED = [
    # (what is wrong, the policy's extra or replaced keys, the field the 400 names)
    ("unknown key", {"horizon": [1]}, "horizon"),
    ("no hash", {"hash": None}, "hash"),
    ("no field", {"field": ""}, "field"),
    ("higher_is_better missing", {"higher_is_better": None}, "higher_is_better"),
    ("higher_is_better a string", {"higher_is_better": "true"}, "higher_is_better"),
    (
        "negative checkpoint",
        {"checkpoints": [{"after_runs": 1}, {"after_runs": -1}]},
        "checkpoints.1",
    ),
    ("negative bare checkpoint", {"checkpoints": [-5]}, "checkpoints.0"),
    ("a string like 1d", {"checkpoints": [{"after_ms": 1}, "1d"]}, "checkpoints.1"),
    ("a string count", {"checkpoints": [{"after_ms": "1d"}]}, "checkpoints.0"),
    ("a float count", {"checkpoints": [{"after_runs": 1.5}]}, "checkpoints.0"),
    ("a boolean count", {"checkpoints": [{"after_runs": True}]}, "checkpoints.0"),
    (
        "two keys in a checkpoint",
        {"checkpoints": [{"after_ms": 1, "after_runs": 1}]},
        "checkpoints.0",
    ),
    ("no key in a checkpoint", {"checkpoints": [{}]}, "checkpoints.0"),
    ("unknown checkpoint key", {"checkpoints": [{"after_days": 1}]}, "checkpoints.0"),
    ("checkpoints not a list", {"checkpoints": {"after_ms": 1}}, "checkpoints"),
    ("a count past i64", {"checkpoints": [{"after_grains": 2**63}]}, "checkpoints.0"),
    ("negative horizon", {"horizons_ms": [1, -1]}, "horizons_ms.1"),
    ("a string horizon", {"horizons_ms": ["1d"]}, "horizons_ms.0"),
    ("an empty schedule", {"horizons_ms": []}, "horizons_ms"),
    ("an unknown baseline", {"baseline": "oldest"}, "baseline"),
    ("min_effect with both keys", {"min_effect": {"count": 1, "points": 1}}, "min_effect"),
    ("min_effect with neither key", {"min_effect": {}}, "min_effect"),
    ("min_effect with an unknown key", {"min_effect": {"count": 1, "pct": 2}}, "min_effect.pct"),
    ("a negative min_effect count", {"min_effect": {"count": -1}}, "min_effect.count"),
    ("a string min_effect", {"min_effect": {"points": "2"}}, "min_effect.points"),
    ("min_effect not an object", {"min_effect": 3}, "min_effect"),
    (
        "cost ratio zero",
        {"cost": {"field": "usd", "max_increase_ratio": 0}},
        "cost.max_increase_ratio",
    ),
    (
        "cost ratio negative",
        {"cost": {"field": "usd", "max_increase_ratio": -1}},
        "cost.max_increase_ratio",
    ),
    (
        "cost ratio not finite",
        {"cost": {"field": "usd", "max_increase_ratio": 10**400}},
        "cost.max_increase_ratio",
    ),
    (
        "cost ratio a string",
        {"cost": {"field": "usd", "max_increase_ratio": "2"}},
        "cost.max_increase_ratio",
    ),
    ("cost without a field", {"cost": {"max_increase_ratio": 2}}, "cost.field"),
    (
        "cost with an unknown key",
        {"cost": {"field": "usd", "max_increase_ratio": 2, "x": 1}},
        "cost.x",
    ),
]


@pytest.mark.parametrize(("wrong", "change", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_a_malformed_policy_names_the_field(wrong, change, field):
    assert field in errors_of({**BASE, **change})


def test_a_policy_that_is_not_an_object_is_refused():
    assert errors_of(["passed"]) == {"": ["Must be an object."]}


def test_every_problem_is_reported_at_once():
    errors = errors_of({"field": 3, "checkpoints": ["1d", -1], "baseline": "x"})
    assert {
        "hash",
        "field",
        "higher_is_better",
        "checkpoints.0",
        "checkpoints.1",
        "baseline",
    } <= set(errors)


# Over REST ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("wrong", "change", "field"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_posting_a_malformed_policy_answers_400_naming_the_dotted_field(
    owner_api, wrong, change, field
):
    evalset = make_evalset()
    body = {
        "title": "t",
        "authored_by": "llm",
        "applicable": True,
        "outcome_evalset": {**BASE, "hash": evalset.hash, **change},
    }
    response = owner_api.post("/api/proposals/", body, format="json")
    assert response.status_code == 400, response.data
    assert f"outcome_evalset.{field}" in response.data["errors"], response.data
    assert response.data["detail"]


def test_a_policy_naming_no_known_evalset_answers_400_on_its_hash(owner_api, db):
    body = {"title": "t", "authored_by": "llm", "applicable": True, "outcome_evalset": BASE}
    response = owner_api.post("/api/proposals/", body, format="json")
    assert response.status_code == 400
    assert list(response.data["errors"]) == ["outcome_evalset.hash"]


def test_a_missing_policy_answers_400(owner_api, db):
    body = {"title": "t", "authored_by": "llm", "applicable": True}
    response = owner_api.post("/api/proposals/", body, format="json")
    assert response.status_code == 400
    assert "outcome_evalset" in response.data["errors"]


def test_a_policy_that_is_not_an_object_answers_400_on_the_policy(owner_api, db):
    body = {"title": "t", "authored_by": "llm", "applicable": True, "outcome_evalset": [1]}
    response = owner_api.post("/api/proposals/", body, format="json")
    assert response.status_code == 400
    assert list(response.data["errors"]) == ["outcome_evalset"]


@pytest.mark.parametrize("ratio", [math.inf, -math.inf, math.nan])
def test_a_cost_ratio_that_is_not_finite_is_refused(ratio):
    change = {"cost": {"field": "usd", "max_increase_ratio": ratio}}
    assert "cost.max_increase_ratio" in errors_of({**BASE, **change})


def test_higher_is_better_has_no_default():
    raw = {key: value for key, value in BASE.items() if key != "higher_is_better"}
    assert "higher_is_better" in errors_of(raw)


def test_an_integer_effect_and_ratio_echo_back_as_integers():
    policy = parse_policy(
        {**BASE, "min_effect": {"count": 5}, "cost": {"field": "usd", "max_increase_ratio": 2}}
    )
    assert policy.as_json()["min_effect"] == {"count": 5}
    assert policy.as_json()["cost"] == {"field": "usd", "max_increase_ratio": 2}
