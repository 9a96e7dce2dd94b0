"""Seed 000, "How loopmath reads it": the outcome of a run under an acceptance rule."""

import datetime as dt
from dataclasses import replace

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from signals_app.outcome import Observation, Rule, ScoreTarget, read_outcome
from tests.signals.conftest import FINISHED, signal, signals_url

DAY = dt.timedelta(days=1)
TESTS = Rule(requires=("tests",))


def obs(sid, kind, name, value, at=dt.timedelta(hours=1), tier="verified") -> Observation:
    """A signal observed ``at`` after the run's end."""
    return Observation(sid, kind, name, value, FINISHED + at, tier)


def verdict(sid, value, name="tests", at=dt.timedelta(hours=1), tier="verified"):
    return obs(sid, "verdict", name, value, at, tier)


def score(sid, value, name="bench_score", at=dt.timedelta(hours=1), tier="measured"):
    return obs(sid, "score", name, value, at, tier)


def event(sid, name="revert", at=DAY, tier="reported"):
    return obs(sid, "event", name, f"ref-{sid}", at, tier)


def read(rule, *signals):
    return read_outcome(rule, list(signals), FINISHED)


def part(outcome, kind, name=None):
    return next(p for p in outcome.parts if p.part == kind and (name is None or p.name == name))


# -- verdicts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "state", "result"),
    [
        ("accept", "pass", "success"),
        ("pass", "pass", "success"),
        ("reject", "fail", "failure"),
        ("fail", "fail", "failure"),
        ("error", "unknown", "unknown"),
    ],
)
def test_every_verdict_word(word, state, result):
    outcome = read(TESTS, verdict("t", word))
    assert outcome.result == result
    assert part(outcome, "requires", "tests").state == state
    assert part(outcome, "requires", "tests").signal == "t"


def test_a_missing_verdict_is_unknown():
    outcome = read(TESTS, verdict("r", "pass", name="referee"))
    assert outcome.result == "unknown"
    assert part(outcome, "requires").signal is None
    assert part(outcome, "requires").reason == "no tests verdict yet"


def test_for_each_name_the_latest_verdict_by_observed_at_counts():
    older_pass, newer_fail = verdict("a", "pass", at=DAY), verdict("b", "fail", at=2 * DAY)
    assert read(TESTS, older_pass, newer_fail).result == "failure"
    assert read(TESTS, newer_fail, older_pass).result == "failure"
    newer_pass = verdict("c", "pass", at=3 * DAY)
    assert read(TESTS, newer_fail, newer_pass, older_pass).result == "success"


def test_of_two_verdicts_observed_at_the_same_time_the_one_added_last_counts():
    first, second = verdict("a", "fail"), verdict("b", "pass")
    assert read(TESTS, first, second).result == "success"
    assert read(TESTS, second, first).result == "failure"


def test_a_later_error_verdict_makes_the_part_unknown_again():
    outcome = read(TESTS, verdict("a", "pass"), verdict("b", "error", at=DAY))
    assert outcome.result == "unknown"
    assert part(outcome, "requires").signal == "b"


def test_every_required_verdict_must_pass():
    rule = Rule(requires=("tests", "referee"))
    passing = [verdict("t", "pass"), verdict("r", "accept", name="referee")]
    assert read(rule, *passing).result == "success"
    assert read(rule, passing[0]).result == "unknown"
    assert read(rule, passing[0], verdict("r", "reject", name="referee")).result == "failure"


def test_a_failing_part_outweighs_an_unknown_one():
    rule = Rule(requires=("tests", "referee"))
    assert read(rule, verdict("t", "fail")).result == "failure"
    assert read(rule, verdict("t", "error"), verdict("r", "pass", name="referee")).result == (
        "unknown"
    )


def test_a_verdict_is_read_only_from_verdict_signals_of_that_name():
    outcome = read(TESTS, score("t", 1, name="tests"), event("e", name="tests"))
    assert outcome.result == "unknown"


# -- the score --------------------------------------------------------------------------------

HIGHER = ScoreTarget("bench_score", 2400, "higher")
LOWER = ScoreTarget("runtime_s", 60, "lower")


@pytest.mark.parametrize(
    ("target", "value", "state"),
    [
        (HIGHER, 2400, "pass"),
        (HIGHER, 2400.5, "pass"),
        (HIGHER, 2399.99, "fail"),
        (LOWER, 60, "pass"),
        (LOWER, 0, "pass"),
        (LOWER, 60.01, "fail"),
        (HIGHER, None, "unknown"),
        (LOWER, None, "unknown"),
    ],
)
def test_a_score_reaches_its_target_by_direction(target, value, state):
    rule = Rule(score=target)
    outcome = read(rule, score("s", value, name=target.name))
    assert part(outcome, "score").state == state
    assert outcome.result == {"pass": "success", "fail": "failure", "unknown": "unknown"}[state]


@pytest.mark.parametrize(
    ("scale", "target", "better", "value", "state"),
    [
        ("linear", -5, "higher", -5, "pass"),
        ("linear", -5, "higher", -6, "fail"),
        ("log", 30, "lower", 29.9, "pass"),
        ("log", 30, "lower", 300, "fail"),
        ("fraction", 0.9, "higher", 0.9, "pass"),
        ("fraction", 0.9, "higher", 0.89, "fail"),
        ("fraction", 0, "lower", 0, "pass"),
        ("fraction", 1, "higher", 1, "pass"),
    ],
)
def test_each_scale_reads_by_direction(scale, target, better, value, state):
    rule = Rule(score=ScoreTarget("quality", target, better, scale))
    assert part(read(rule, score("q", value, name="quality")), "score").state == state


def test_a_missing_score_is_unknown():
    outcome = read(Rule(score=HIGHER))
    assert part(outcome, "score").state == "unknown"
    assert part(outcome, "score").signal is None


def test_the_latest_score_counts_and_a_later_null_makes_it_unknown():
    rule = Rule(score=HIGHER)
    low, high = score("a", 2000, at=DAY), score("b", 2500, at=2 * DAY)
    assert read(rule, high, low).result == "success"
    outcome = read(rule, low, high, score("c", None, at=3 * DAY))
    assert outcome.result == "unknown"
    assert part(outcome, "score").signal == "c"


def test_with_requires_empty_the_score_alone_decides():
    rule = Rule(score=HIGHER)
    assert read(rule, score("s", 2500), verdict("t", "fail")).result == "success"


def test_with_both_success_needs_both():
    rule = Rule(requires=("tests",), score=HIGHER)
    assert read(rule, score("s", 2500), verdict("t", "pass")).result == "success"
    assert read(rule, score("s", 2300), verdict("t", "pass")).result == "failure"
    assert read(rule, score("s", 2500), verdict("t", "fail")).result == "failure"
    assert read(rule, score("s", 2500)).result == "unknown"


# -- late events ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("after", "result"),
    [
        (dt.timedelta(0), "failure"),
        (DAY, "failure"),
        (14 * DAY - dt.timedelta(microseconds=1), "failure"),
        (14 * DAY, "failure"),
        (14 * DAY + dt.timedelta(microseconds=1), "success"),
        (15 * DAY, "success"),
        (-dt.timedelta(microseconds=1), "success"),
        (-DAY, "success"),
    ],
)
def test_a_revert_within_fourteen_days_of_the_runs_end_turns_success_into_failure(after, result):
    outcome = read(TESTS, verdict("t", "pass"), event("r", at=after))
    assert outcome.result == result


def test_an_incident_counts_like_a_revert_by_default():
    assert read(TESTS, verdict("t", "pass"), event("i", name="incident")).result == "failure"


def test_an_event_the_rule_does_not_exclude_changes_nothing():
    outcome = read(TESTS, verdict("t", "pass"), event("h", name="hotfix"))
    assert outcome.result == "success"
    assert part(outcome, "excludes_events").state == "pass"


def test_the_rule_chooses_its_events_and_window():
    rule = Rule(requires=("tests",), excludes_events=("hotfix",), window_days=3)
    passed = verdict("t", "pass")
    assert read(rule, passed, event("h", name="hotfix", at=3 * DAY)).result == "failure"
    assert read(rule, passed, event("h", name="hotfix", at=4 * DAY)).result == "success"
    assert read(rule, passed, event("r", name="revert", at=DAY)).result == "success"


def test_a_zero_day_window_counts_only_an_event_at_the_runs_end():
    rule = Rule(requires=("tests",), window_days=0)
    passed = verdict("t", "pass")
    assert read(rule, passed, event("r", at=dt.timedelta(0))).result == "failure"
    assert read(rule, passed, event("r", at=dt.timedelta(seconds=1))).result == "success"


def test_no_excluded_events_means_no_late_event_part():
    rule = Rule(requires=("tests",), excludes_events=())
    outcome = read(rule, verdict("t", "pass"), event("r"))
    assert outcome.result == "success"
    assert [p.part for p in outcome.parts] == ["requires"]


def test_the_earliest_excluded_event_in_the_window_is_named():
    outcome = read(TESTS, verdict("t", "pass"), event("late", at=9 * DAY), event("early"))
    assert part(outcome, "excludes_events").signal == "early"
    assert part(outcome, "excludes_events").name == "revert"


def test_a_late_event_fails_a_run_whose_verdict_is_still_unknown():
    assert read(TESTS, verdict("t", "error"), event("r")).result == "failure"


# -- tiers ------------------------------------------------------------------------------------


def test_the_tier_is_the_weakest_among_the_signals_used():
    rule = Rule(requires=("tests", "referee"), score=HIGHER)
    signals = [
        verdict("t", "pass", tier="verified"),
        verdict("r", "accept", name="referee", tier="reported"),
        score("s", 2500, tier="measured"),
    ]
    assert read(rule, *signals).tier == "reported"
    assert read(Rule(requires=("tests",), score=HIGHER), *signals).tier == "measured"


def test_signals_the_reading_did_not_use_do_not_weaken_it():
    signals = [
        verdict("old", "fail", tier="asserted"),
        verdict("new", "pass", at=DAY, tier="verified"),
        event("h", name="hotfix", tier="asserted"),
    ]
    assert read(TESTS, *signals).tier == "verified"


def test_a_late_event_that_fails_the_run_counts_for_the_tier():
    outcome = read(TESTS, verdict("t", "pass"), event("r", tier="asserted"))
    assert outcome.tier == "asserted"


def test_an_outcome_that_used_no_signal_is_asserted():
    assert read(TESTS).tier == "asserted"
    assert read(Rule(requires=(), excludes_events=())).result == "success"


# -- a property -------------------------------------------------------------------------------

NAMES = {"tests": "verdict", "referee": "verdict", "bench_score": "score", "quality": "score"}
EVENT_NAMES = ("revert", "incident", "hotfix")
TIER_NAMES = ("verified", "measured", "reported", "asserted")


def value_for(kind):
    if kind == "verdict":
        return st.sampled_from(["accept", "reject", "pass", "fail", "error"])
    if kind == "score":
        return st.one_of(st.none(), st.integers(-5, 5), st.floats(0, 1))
    return st.sampled_from(["ref-1", "ref-2"])


@st.composite
def observations(draw, name_kinds):
    name, kind = draw(name_kinds)
    minutes = draw(st.integers(-3 * 24 * 60, 20 * 24 * 60))
    return obs(
        sid=f"s{draw(st.integers(0, 10**6))}",
        kind=kind,
        name=name,
        value=draw(value_for(kind)),
        at=dt.timedelta(minutes=minutes),
        tier=draw(st.sampled_from(TIER_NAMES)),
    )


ALL_NAMES = st.sampled_from([*NAMES.items(), *((name, "event") for name in EVENT_NAMES)])
LATEST_WINS = st.sampled_from(list(NAMES.items()))

rules = st.builds(
    Rule,
    requires=st.lists(st.sampled_from(["tests", "referee"]), unique=True).map(tuple),
    score=st.one_of(
        st.none(),
        st.builds(
            ScoreTarget,
            name=st.sampled_from(["bench_score", "quality"]),
            target=st.integers(-5, 5),
            better=st.sampled_from(["higher", "lower"]),
            scale=st.sampled_from(["linear", "log", "fraction"]),
        ),
    ),
    excludes_events=st.lists(st.sampled_from(EVENT_NAMES), unique=True).map(tuple),
    window_days=st.integers(0, 20),
)


@settings(max_examples=300, deadline=None)
@given(rule=rules, signals=st.lists(observations(ALL_NAMES), max_size=12), data=st.data())
def test_adding_a_signal_older_than_the_latest_of_its_name_never_changes_the_outcome(
    rule, signals, data
):
    """Verdicts and scores are read by their latest signal of a name, so an older one added at
    any position is ignored. (Events are read by window, not by latest, so they are exempt.)"""
    present = sorted({(s.name, s.kind) for s in signals if s.kind != "event"})
    assume(present)
    name, kind = data.draw(st.sampled_from(present))
    newest = max(s.observed_at for s in signals if s.name == name)
    older = data.draw(observations(st.just((name, kind))))
    shift = data.draw(st.integers(1, 10 * 24 * 60))
    older = replace(older, observed_at=newest - dt.timedelta(minutes=shift))
    position = data.draw(st.integers(0, len(signals)))
    added = [*signals[:position], older, *signals[position:]]
    assert read_outcome(rule, added, FINISHED) == read_outcome(rule, signals, FINISHED)


@settings(max_examples=200, deadline=None)
@given(rule=rules, drawn=st.lists(observations(ALL_NAMES), max_size=12))
def test_a_failing_part_makes_a_failure_else_an_unknown_part_makes_it_unknown(rule, drawn):
    signals = [replace(s, id=f"s{i}") for i, s in enumerate(drawn)]
    outcome = read_outcome(rule, signals, FINISHED)
    states = [p.state for p in outcome.parts]
    if "fail" in states:
        assert outcome.result == "failure"
    elif "unknown" in states:
        assert outcome.result == "unknown"
    else:
        assert outcome.result == "success"
    deciding = {p.signal for p in outcome.parts}
    used = [s.tier for s in signals if s.id in deciding]
    assert outcome.tier == max(used or ["asserted"], key=TIER_NAMES.index)


# -- through the API --------------------------------------------------------------------------

pytestmark_db = pytest.mark.django_db


@pytestmark_db
def test_the_outcome_endpoint_names_the_signal_that_decided_each_part(owner_api, run):
    owner_api.post(signals_url(run), signal(id="t1", value="pass"), format="json")
    body = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert body["result"] == "success"
    assert body["tier"] == "verified"
    assert body["rule"]["requires"] == ["tests"]
    assert body["rule_source"] == "run"
    assert body["parts"] == [
        {
            "part": "requires",
            "name": "tests",
            "state": "pass",
            "signal": "t1",
            "reason": "latest tests verdict is pass",
        },
        {
            "part": "excludes_events",
            "name": None,
            "state": "pass",
            "signal": None,
            "reason": "no revert or incident within 14 days of the run's end",
        },
    ]


@pytestmark_db
def test_a_run_with_no_signals_reads_unknown(owner_api, run):
    body = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert (body["result"], body["tier"]) == ("unknown", "asserted")


@pytestmark_db
def test_an_outsider_cannot_read_the_outcome_of_another_owners_run(outsider_api, run):
    assert outsider_api.get(f"/api/runs/{run.pk}/outcome").status_code == 404


@pytestmark_db
def test_a_stored_rule_that_cannot_be_read_is_a_conflict_not_a_crash(owner_api, run):
    run.acceptance_rule = {"name": "broken"}
    run.save()
    response = owner_api.get(f"/api/runs/{run.pk}/outcome")
    assert response.status_code == 409
    assert "acceptance rule" in response.json()["detail"]
