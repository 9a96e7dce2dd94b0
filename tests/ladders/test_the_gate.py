"""Seed 004, "The gate": the one parameterised rule, its floor and threshold, its verdicts and
its default. Pure tests of ``ladders/gate.py`` (no database) plus Hypothesis properties; the
sentences about where the gate is stored go through the API."""

import dataclasses
import itertools
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladders.gate import MODEL_FAILURES, Gate, Read, RunRead, Verdict, decide, read_run, tally
from ladders.models import Rung, default_gate
from tests.ladders.builders import climbers, config, rung, versions
from tests.runs.helpers import outside_run

RATINGS = ["flawless", "great", "passable", "scuffed", "broken"]  # best first
RANK = {rating: len(RATINGS) - i for i, rating in enumerate(RATINGS)}

PROPERTY = settings(max_examples=400, deadline=None, derandomize=True, database=None)


def rated(rating: str | None, outcome: str = "completed", loaded: bool | None = True) -> RunRead:
    return RunRead(outcome, rating, loaded)


def verdict_of(ratings, gate: Gate, target: int | None = None, in_flight: int = 0):
    runs = [rated(r) for r in ratings]
    target = len(runs) if target is None else target
    return decide(tally(runs, target=target, in_flight=in_flight, gate=gate), gate)


# The rule ------------------------------------------------------------------------------------


def test_there_is_exactly_one_rule_count_of_runs_at_the_floor_or_better_against_the_threshold():
    """ "pass when count(runs on this rung rated FLOOR or better) >= THRESHOLD" — checked for
    every floor, every count threshold up to four and every rating of three runs."""
    for floor, count in itertools.product(RATINGS, range(5)):
        gate = Gate(floor=floor, count=count)
        for ratings in itertools.product(RATINGS, repeat=3):
            at_floor = sum(RANK[r] >= RANK[floor] for r in ratings)
            expected = Verdict.PASSED if at_floor >= count else Verdict.FAILED
            assert verdict_of(ratings, gate) == expected, (floor, count, ratings)


@pytest.mark.parametrize("floor", RATINGS)
@pytest.mark.parametrize("rating", RATINGS)
def test_a_run_rated_at_the_floor_or_better_passes(floor, rating):
    """ "A run rated at the floor or better passes." """
    read = read_run(rated(rating), Gate(floor=floor))
    assert read == (Read.PASS if RANK[rating] >= RANK[floor] else Read.FAIL)


@pytest.mark.parametrize("floor", RATINGS)
def test_the_floor_is_a_rating(owner_api, floor):
    """ "floor is a rating: flawless, great, passable, scuffed, or broken." """
    body = config(rungs=[rung(v) for v in versions(1)], gate={"floor": floor})
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["gate"]["floor"] == floor
    assert Gate.from_json(response.json()["gate"]).floor == floor


def test_a_floor_that_is_not_a_rating_is_refused(owner_api):
    """ "floor is a rating: flawless, great, passable, scuffed, or broken." """
    body = config(rungs=[rung(v) for v in versions(1)], gate={"floor": "playable"})
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 400
    assert "gate.floor" in response.json()["errors"]


def test_a_count_threshold_is_an_absolute_run_count():
    """ "threshold is either an absolute run count or a fraction of the rung's runs" """
    assert all(Gate(count=2).required(final) == 2 for final in (0, 1, 3, 10, 50))
    assert verdict_of(["scuffed", "scuffed", "broken", "broken"], Gate(count=2)) == "passed"
    assert verdict_of(["scuffed", "broken", "broken", "broken"], Gate(count=2)) == "failed"


@pytest.mark.parametrize(
    ("fraction", "runs", "required"),
    [(0.5, 4, 2), (0.5, 3, 2), (0.1, 30, 3), (0.7, 10, 7), (1.0, 3, 3), (0.0, 5, 0), (0.34, 3, 2)],
)
def test_a_fraction_threshold_is_compared_as_count_at_least_fraction_times_runs(
    fraction, runs, required
):
    """ "threshold is ... a fraction of the rung's runs, compared as count >= fraction * runs." """
    gate = Gate(count=None, fraction=fraction)
    assert gate.required(runs) == required
    just_enough = ["flawless"] * required + ["broken"] * (runs - required)
    assert verdict_of(just_enough, gate) == Verdict.PASSED
    if required:
        one_short = ["flawless"] * (required - 1) + ["broken"] * (runs - required + 1)
        assert verdict_of(one_short, gate) == Verdict.FAILED


@PROPERTY
@given(
    hundredths=st.integers(min_value=0, max_value=100),
    runs=st.integers(min_value=0, max_value=100),
)
def test_a_fraction_threshold_is_met_exactly_when_count_is_at_least_fraction_times_runs(
    hundredths, runs
):
    """ "compared as count >= fraction * runs", in exact arithmetic, whatever float rounding."""
    gate = Gate(count=None, fraction=hundredths / 100)
    for count in range(runs + 1):
        exact = Fraction(count) >= Fraction(hundredths, 100) * runs
        assert (count >= gate.required(runs)) == exact, (hundredths, runs, count)


def test_a_fraction_just_above_two_thirds_of_three_runs_needs_all_three():
    """ "compared as count >= fraction * runs": 2 >= 0.6666666668 × 3 = 2.0000000004 is false,
    however close; rounding the product first would wrongly let two runs pass."""
    assert Gate(count=None, fraction=0.6666666668).required(3) == 3
    assert Gate(count=None, fraction=2 / 3).required(3) == 2  # 2/3 as a float is just below it


@PROPERTY
@given(
    numerator=st.integers(min_value=0, max_value=10**10),
    runs=st.integers(min_value=0, max_value=100),
)
def test_a_fraction_of_ten_decimal_places_is_compared_exactly(numerator, runs):
    fraction = Decimal(numerator) / Decimal(10**10)
    gate = Gate(count=None, fraction=float(fraction))
    for count in (gate.required(runs) - 1, gate.required(runs)):
        if 0 <= count <= runs:
            exact = Fraction(count) >= Fraction(fraction) * runs
            assert (count >= gate.required(runs)) == exact, (fraction, runs, count)


@pytest.mark.parametrize(
    "threshold", [{"count": 1, "fraction": 0.5}, {}, {"percent": 50}, {"fraction": 1.5}]
)
def test_a_threshold_is_either_a_count_or_a_fraction(owner_api, threshold):
    """ "threshold is either an absolute run count or a fraction of the rung's runs" """
    body = config(rungs=[rung(v) for v in versions(1)])
    body["gate"]["threshold"] = threshold
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 400, response.json()
    assert any(k.startswith("gate.threshold") for k in response.json()["errors"])


# Verdicts ------------------------------------------------------------------------------------


def test_a_rungs_verdict_is_passed_or_failed():
    """ "A rung's verdict is passed or failed." """
    assert {v.value for v in Verdict} == {"passed", "failed"}
    assert verdict_of(["great"], Gate()) == "passed"
    assert verdict_of(["broken"], Gate()) == "failed"


def test_an_undecided_rung_has_no_verdict():
    """ "An undecided rung has no verdict." """
    assert verdict_of([], Gate(), target=1) is None
    assert verdict_of(["broken"], Gate(), target=2, in_flight=1) is None
    assert decide(tally([rated(None)], target=1, in_flight=0, gate=Gate()), Gate()) is None


# Where the gate is stored -------------------------------------------------------------------


def test_the_gate_is_stored_per_ladder_and_a_rung_only_varies_how_many_runs_it_takes(
    owner, owner_api
):
    """ "The gate is stored per ladder rather than per rung. ... the bar it sets is the ladder's,
    and a rung only varies how many runs it takes to answer." """
    assert "gate" not in {f.name for f in Rung._meta.get_fields()}
    steps = versions(2)
    [combo] = climbers(1)
    body = config(
        rungs=[rung(steps[0]), {**rung(steps[1], runs=4), "gate": {"floor": "flawless"}}],
        combinations=[combo.pk],
        gate={"floor": "great", "threshold": {"fraction": 0.5}},
    )
    created = owner_api.post("/api/ladders/", body, format="json")
    assert created.status_code == 201, created.json()
    saved = created.json()
    assert saved["gate"]["floor"] == "great"
    assert all(
        "gate" not in r and "floor" not in r and "threshold" not in r for r in saved["rungs"]
    )
    assert [r["runs"] for r in saved["rungs"]] == [None, 4]

    outside_run(owner, steps[0], combo)  # passes rung one before the Run
    assert owner_api.post(f"/api/ladders/{saved['id']}/run").status_code == 200
    board = owner_api.get(f"/api/ladders/{saved['id']}/progress").json()
    assert board["dispatch"]["gate"]["floor"] == "great"
    assert board["dispatch"]["gate"]["threshold"] == {"fraction": 0.5}
    # One bar, half the rung's runs at great or better: 1 of 1 run, then 2 of 4.
    slots = board["climbers"][0]["slots"]
    assert slots[0]["status"] == "passed"
    assert slots[0]["tally"]["required"] == 1
    assert slots[1]["tally"]["required"] == 2


def test_the_default_gate_is_floor_scuffed_with_a_threshold_count_of_one(owner_api):
    """ "The default gate is floor scuffed with a threshold count of 1" """
    assert Gate() == Gate.from_json({}) == Gate.from_json(default_gate())
    assert (Gate().floor, Gate().count, Gate().fraction) == ("scuffed", 1, None)
    body = config(rungs=[rung(v) for v in versions(1)])
    del body["gate"]
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["gate"] == {
        "floor": "scuffed",
        "threshold": {"count": 1},
        "unloadedCountsAsBroken": True,
        "earlyStop": False,
    }


@pytest.mark.parametrize("playable", ["flawless", "great", "passable", "scuffed"])
def test_under_the_default_gate_one_playable_run_passes_the_rung(playable):
    """ "one playable run passes the rung" """
    for position in range(3):
        ratings = ["broken"] * 3
        ratings[position] = playable
        assert verdict_of(ratings, Gate()) == Verdict.PASSED


def test_under_the_default_gate_failing_takes_every_run_broken():
    """ "failing it takes every run broken." """
    assert verdict_of(["broken"] * 3, Gate()) == Verdict.FAILED
    for ratings in itertools.product(RATINGS, repeat=3):
        if set(ratings) != {"broken"}:
            assert verdict_of(ratings, Gate()) == Verdict.PASSED, ratings


# Properties ----------------------------------------------------------------------------------

OUTCOMES = ["completed", "completed", "completed", *sorted(MODEL_FAILURES)]


@st.composite
def gates(draw, early_stop=None):
    if draw(st.booleans()):
        count, fraction = draw(st.integers(min_value=0, max_value=6)), None
    else:
        count, fraction = None, draw(st.integers(min_value=0, max_value=100)) / 100
    return Gate(
        floor=draw(st.sampled_from(RATINGS)),
        count=count,
        fraction=fraction,
        unloaded_counts_as_broken=draw(st.booleans()),
        early_stop=draw(st.booleans()) if early_stop is None else early_stop,
    )


@st.composite
def landing_runs(draw, min_size=0, max_size=9):
    """Runs as they land: each may land unrated and be rated later (a re-push)."""
    n = draw(st.integers(min_value=min_size, max_value=max_size))
    runs = []
    for _ in range(n):
        outcome = draw(st.sampled_from(OUTCOMES))
        eventual = draw(st.sampled_from(RATINGS)) if outcome == "completed" else None
        lands_unrated = outcome == "completed" and draw(st.booleans())
        loaded = draw(st.sampled_from([True, True, False, None]))
        runs.append((RunRead(outcome, eventual, loaded), lands_unrated))
    return runs


def evidence_states(runs):
    """Every state the slot passes through: the runs landing one by one (unrated ones carry no
    rating yet), then the unrated ones getting their rating one by one."""
    state: list[RunRead] = []
    yield list(state)
    for run, lands_unrated in runs:
        state.append(dataclasses.replace(run, rating=None) if lands_unrated else run)
        yield list(state)
    for index, (run, lands_unrated) in enumerate(runs):
        if lands_unrated:
            state[index] = run
            yield list(state)


@PROPERTY
@given(
    gate=gates(),
    target=st.integers(min_value=1, max_value=6),
    runs=landing_runs(),
    data=st.data(),
)
def test_a_decided_verdict_never_changes_as_more_runs_land(gate, target, runs, data):
    """ "Either way an outcome never has to be taken back as more evidence lands." Jobs in flight
    are whatever the driver happens to hold at each moment."""
    first = None
    for state in evidence_states(runs):
        in_flight = data.draw(st.integers(min_value=0, max_value=target + 2))
        verdict = decide(tally(state, target=target, in_flight=in_flight, gate=gate), gate)
        if first is None:
            first = verdict
        else:
            assert verdict == first, (state, verdict, first)


@PROPERTY
@given(
    gate=gates(early_stop=True),
    target=st.integers(min_value=1, max_value=6),
    data=st.data(),
)
def test_with_early_stop_any_decision_equals_the_decision_the_full_evidence_would_give(
    gate, target, data
):
    """ "With earlyStop on, the gate decides the moment the outcome is certain": whatever it
    decides on part of the evidence is what the full evidence (every run of the rung landed and
    rated) decides, with or without earlyStop."""
    runs = data.draw(landing_runs(min_size=target, max_size=target + 2))
    full = [run for run, _ in runs]
    full_verdict = decide(tally(full, target=target, in_flight=0, gate=gate), gate)
    patient = dataclasses.replace(gate, early_stop=False)
    assert full_verdict is not None
    assert decide(tally(full, target=target, in_flight=0, gate=patient), patient) == full_verdict
    for state in evidence_states(runs):
        in_flight = data.draw(st.integers(min_value=0, max_value=target))
        early = decide(tally(state, target=target, in_flight=in_flight, gate=gate), gate)
        if early is not None:
            assert early == full_verdict, (state, early, full_verdict)
