"""The verdict's pure functions (EVALSETS.md "Reading values", "The verdict", the schedule)."""

import datetime as dt
import math

import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from evalsets import verdict
from evalsets.verdict import (
    Checkpoint,
    CostBound,
    Progress,
    effective_schedule,
    is_due,
    judge,
    read_cost,
    regressed,
    skip_reason,
    tolerance,
    value,
)

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False, allow_infinity=False)
non_negative = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
counts = st.integers(min_value=0, max_value=10**9)


# Reading values -------------------------------------------------------------------------------


def test_passed_and_failed_read_as_stored():
    assert value({"passed": 7, "failed": 3}, "passed") == 7
    assert value({"passed": 7, "failed": 3}, "failed") == 3


def test_total_is_passed_plus_failed_whatever_the_summary_says():
    assert value({"passed": 7, "failed": 3, "total": 99}, "total") == 10


def test_error_rate_is_failed_over_total():
    assert value({"passed": 3, "failed": 1}, "error_rate") == 0.25


def test_error_rate_is_undefined_when_total_is_zero():
    assert value({"passed": 0, "failed": 0}, "error_rate") is None
    assert value({"passed": 0, "failed": 0}, "total") == 0


def test_tokens_need_both_sides():
    assert value({"input_tokens": 10, "output_tokens": 5}, "tokens") == 15
    assert value({"input_tokens": 10}, "tokens") is None
    assert value({"output_tokens": 5}, "tokens") is None


def test_usd_is_micros_over_a_million():
    assert value({"usd_micros": 2_500_000}, "usd") == 2.5
    assert value({}, "usd") is None


def test_cost_per_pass_is_usd_over_passed_and_undefined_without_a_pass():
    assert value({"usd_micros": 3_000_000, "passed": 3, "failed": 0}, "cost_per_pass") == 1.0
    assert value({"usd_micros": 3_000_000, "passed": 0, "failed": 4}, "cost_per_pass") is None
    assert value({"passed": 3, "failed": 0}, "cost_per_pass") is None


def test_any_other_field_is_the_summary_number():
    assert value({"passed": 1, "failed": 0, "accuracy": 0.93}, "accuracy") == 0.93


@pytest.mark.parametrize("raw", [None, True, False, "3", [3], {"n": 3}, math.nan, math.inf])
def test_a_missing_or_non_numeric_value_is_not_measurable(raw):
    assert value({"passed": 1, "failed": 0, "score": raw}, "score") is None


def test_a_missing_field_is_not_measurable_never_zero():
    assert value({"passed": 1, "failed": 0}, "accuracy") is None


@given(
    st.dictionaries(
        st.sampled_from(
            ["passed", "failed", "usd_micros", "input_tokens", "output_tokens", "score"]
        ),
        st.one_of(st.integers(-(2**63), 2**63 - 1), st.floats(), st.booleans(), st.none()),
    ),
    st.sampled_from(
        ["passed", "failed", "total", "error_rate", "tokens", "usd", "cost_per_pass", "score"]
    ),
)
# Two finite numbers whose sum overflows to infinity.
@example({"input_tokens": 1e308, "output_tokens": 1e308}, "tokens")
@example({"passed": 1e308, "failed": 1e308}, "total")
@example({"passed": 1e308, "failed": 1e308}, "error_rate")
def test_a_value_is_finite_or_none(summary, field):
    read = value(summary, field)
    assert read is None or (not isinstance(read, bool) and math.isfinite(read))


# Tolerance ------------------------------------------------------------------------------------


def test_no_min_effect_means_zero_tolerance():
    assert tolerance(None, "passed", {"passed": 10, "failed": 0}) == 0


def test_a_count_is_the_tolerance_whatever_the_field():
    assert tolerance({"count": 3}, "passed", {"passed": 10, "failed": 0}) == 3
    assert tolerance({"count": 0.5}, "accuracy", {"passed": 10, "failed": 0}) == 0.5


def test_points_on_passed_failed_and_total_scale_with_the_baseline_total():
    baseline = {"passed": 150, "failed": 50}
    for field in ("passed", "failed", "total"):
        assert tolerance({"points": 2}, field, baseline) == pytest.approx(4.0)


def test_points_on_any_other_field_are_hundredths():
    assert tolerance({"points": 2}, "error_rate", {"passed": 150, "failed": 50}) == 0.02


def test_points_on_an_empty_baseline_total_tolerate_nothing():
    assert tolerance({"points": 10}, "passed", {"passed": 0, "failed": 0}) == 0


# Regressed ------------------------------------------------------------------------------------


def test_equal_values_are_never_a_regression():
    assert not regressed(5.0, 5.0, 0, True)
    assert not regressed(5.0, 5.0, 0, False)


def test_a_drop_of_exactly_the_tolerance_holds_and_just_past_it_regresses():
    assert not regressed(100, 95, 5, True)
    assert regressed(100, 94.999, 5, True)
    assert not regressed(10, 12, 2, False)
    assert regressed(10, 12.001, 2, False)


def test_floating_point_noise_within_the_slack_is_not_a_regression():
    # 10 points of a total of 30 is 3.0000000000000004; a drop of 3 must hold.
    tol = tolerance({"points": 10}, "passed", {"passed": 20, "failed": 10})
    assert not regressed(20, 17, tol, True)
    assert not regressed(0.3, 0.1 + 0.2, 0, True)
    assert not regressed(0.1 + 0.2, 0.3, 0, False)


@given(finite, non_negative, st.booleans())
def test_a_value_equal_to_the_baseline_never_regresses(baseline, tol, higher_is_better):
    assert not regressed(baseline, baseline, tol, higher_is_better)


@given(finite, finite, non_negative)
def test_lower_is_better_mirrors_higher_is_better(baseline, current, tol):
    assert regressed(baseline, current, tol, True) == regressed(-baseline, -current, tol, False)


@given(finite, finite, finite, non_negative, st.booleans())
def test_a_worse_value_than_a_regression_is_a_regression(baseline, a, b, tol, higher_is_better):
    worse, better = (min(a, b), max(a, b)) if higher_is_better else (max(a, b), min(a, b))
    assume(regressed(baseline, better, tol, higher_is_better))
    assert regressed(baseline, worse, tol, higher_is_better)


@given(finite, finite, non_negative, non_negative, st.booleans())
def test_more_tolerance_never_turns_a_hold_into_a_regression(
    baseline, current, tol, extra, higher_is_better
):
    assume(not regressed(baseline, current, tol, higher_is_better))
    assert not regressed(baseline, current, tol + extra, higher_is_better)


# The cost read --------------------------------------------------------------------------------

BOUND = CostBound("usd", 1.5)


def usd(micros):
    summary = {"passed": 10, "failed": 0}
    if micros is not None:
        summary["usd_micros"] = micros
    return summary


def test_a_cost_within_the_ratio_is_within():
    assert read_cost(BOUND, usd(2_000_000), usd(3_000_000)) == verdict.CostRead("within", 2, 3)


def test_a_cost_past_the_ratio_is_breached():
    assert read_cost(BOUND, usd(2_000_000), usd(3_000_001)).status == "breached"


def test_a_cost_present_on_one_side_only_is_not_measurable_and_keeps_that_side():
    assert read_cost(BOUND, usd(None), usd(3_000_000)) == verdict.CostRead(
        "not_measurable", None, 3.0
    )
    assert read_cost(BOUND, usd(2_000_000), usd(None)) == verdict.CostRead(
        "not_measurable", 2.0, None
    )


def test_a_zero_cost_baseline_breaches_on_any_cost_and_holds_at_zero():
    assert read_cost(BOUND, usd(0), usd(1)).status == "breached"
    assert read_cost(BOUND, usd(0), usd(0)).status == "within"


def test_a_negative_cost_is_malformed():
    bound = CostBound("spend", 2.0)
    read = read_cost(bound, {"spend": -1}, {"spend": 3})
    assert read == verdict.CostRead("not_measurable", None, 3)


def test_cost_per_pass_with_no_pass_is_not_measurable():
    bound = CostBound("cost_per_pass", 1.2)
    baseline = {"passed": 4, "failed": 0, "usd_micros": 4_000_000}
    current = {"passed": 0, "failed": 4, "usd_micros": 4_000_000}
    assert read_cost(bound, baseline, current) == verdict.CostRead("not_measurable", 1.0, None)


@given(non_negative, non_negative, st.floats(min_value=0.01, max_value=100))
def test_breached_means_both_sides_measured_and_past_the_ratio(before, after, ratio):
    bound = CostBound("score", ratio)
    read = read_cost(bound, {"score": before}, {"score": after})
    assert read.status in ("within", "breached")
    assert (read.status == "breached") == (after > ratio * before)


# The verdict ----------------------------------------------------------------------------------


def run(passed, failed=0, **extra):
    return {"passed": passed, "failed": failed, **extra}


def test_held_when_the_value_did_not_get_worse():
    got = judge(field="passed", higher_is_better=True, baseline=run(10), current=run(10))
    assert got == verdict.Judgement(10, 10, 0.0, "held", None)


def test_regressed_dominates_a_breached_cost():
    got = judge(
        field="passed",
        higher_is_better=True,
        baseline=run(10, usd_micros=1_000_000),
        current=run(8, usd_micros=9_000_000),
        cost=CostBound("usd", 1.1),
    )
    assert got.verdict == "regressed"
    assert got.cost.status == "breached"


def test_held_costlier_when_quality_held_but_the_cost_breached():
    got = judge(
        field="passed",
        higher_is_better=True,
        baseline=run(10, usd_micros=1_000_000),
        current=run(10, usd_micros=2_000_000),
        cost=CostBound("usd", 1.1),
    )
    assert got.verdict == "held_costlier"


def test_an_unmeasurable_cost_does_not_change_the_verdict():
    got = judge(
        field="passed",
        higher_is_better=True,
        baseline=run(10),
        current=run(10, usd_micros=2_000_000),
        cost=CostBound("usd", 1.1),
    )
    assert got.verdict == "held"
    assert got.cost == verdict.CostRead("not_measurable", None, 2.0)


def test_no_verdict_when_either_side_is_not_measurable():
    assert (
        judge(field="error_rate", higher_is_better=False, baseline=run(0), current=run(3)) is None
    )
    assert (
        judge(field="error_rate", higher_is_better=False, baseline=run(3), current=run(0)) is None
    )
    assert judge(field="accuracy", higher_is_better=True, baseline=run(3), current=run(3)) is None


@given(
    counts,
    counts,
    counts,
    counts,
    st.booleans(),
    st.one_of(st.none(), st.builds(lambda c: {"count": c}, non_negative)),
    st.one_of(st.none(), st.builds(lambda p: {"points": p}, non_negative)),
)
def test_one_verdict_per_measurement(bp, bf, cp, cf, higher_is_better, by_count, by_points):
    for min_effect in (by_count, by_points):
        got = judge(
            field="passed",
            higher_is_better=higher_is_better,
            baseline=run(bp, bf, usd_micros=bf),
            current=run(cp, cf, usd_micros=cf),
            min_effect=min_effect,
            cost=CostBound("usd", 1.0),
        )
        assert got.verdict in ("held", "regressed", "held_costlier")
        assert (got.verdict == "regressed") == regressed(bp, cp, got.tolerance, higher_is_better)
        if got.verdict == "held_costlier":
            assert got.cost.status == "breached"


def test_best_is_max_or_min_by_direction_and_none_when_empty():
    assert verdict.best([35, 238, 130], True) == 238
    assert verdict.best([35, 238, 130], False) == 35
    assert verdict.best([], True) is None


# The schedule ---------------------------------------------------------------------------------

MS, RUNS, GRAINS = verdict.AFTER_MS, verdict.AFTER_RUNS, verdict.AFTER_GRAINS


def test_the_default_schedule_is_one_seven_and_thirty_days():
    assert [c.as_json() for c in effective_schedule([])] == [
        {"after_ms": 86_400_000},
        {"after_ms": 604_800_000},
        {"after_ms": 2_592_000_000},
    ]


def test_checkpoints_win_over_horizons_when_non_empty():
    got = effective_schedule([Checkpoint.of(RUNS, 1)], [5, 6])
    assert got == [Checkpoint.of(RUNS, 1)]
    assert effective_schedule([], [6, 5]) == [Checkpoint.of(MS, 5), Checkpoint.of(MS, 6)]


def test_the_schedule_is_time_then_runs_then_grains_each_by_value_without_duplicates():
    given_ = [
        Checkpoint.of(GRAINS, 1),
        Checkpoint.of(RUNS, 5),
        Checkpoint.of(MS, 1000),
        Checkpoint.of(RUNS, 2),
        Checkpoint.of(MS, 10),
        Checkpoint.of(RUNS, 2),
    ]
    assert [c.as_json() for c in effective_schedule(given_)] == [
        {"after_ms": 10},
        {"after_ms": 1000},
        {"after_runs": 2},
        {"after_runs": 5},
        {"after_grains": 1},
    ]


checkpoints = st.builds(Checkpoint.of, st.sampled_from(verdict.KINDS), counts)


@given(st.lists(checkpoints, max_size=20))
def test_the_schedule_is_sorted_unique_and_order_free(items):
    got = effective_schedule(items)
    assert got == sorted(set(got))
    assert effective_schedule(list(reversed(items))) == got
    assert effective_schedule(got) == got
    if items:
        assert set(got) == set(items)


@given(checkpoints)
def test_a_checkpoint_survives_json(checkpoint):
    assert Checkpoint.from_json(checkpoint.as_json()) == checkpoint


APPLIED = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)


def progress(ms=0, runs=0, grains=0):
    return Progress(APPLIED, APPLIED + dt.timedelta(milliseconds=ms), runs, grains)


def test_a_time_checkpoint_is_due_once_its_milliseconds_have_passed():
    assert not is_due(Checkpoint.of(MS, 1000), progress(ms=999))
    assert is_due(Checkpoint.of(MS, 1000), progress(ms=1000))


def test_a_runs_checkpoint_is_due_at_that_many_runs_since_the_apply():
    assert not is_due(Checkpoint.of(RUNS, 2), progress(runs=1))
    assert is_due(Checkpoint.of(RUNS, 2), progress(runs=2))


def test_after_runs_with_zero_runs_since_is_not_due_unless_it_asks_for_zero():
    assert not is_due(Checkpoint.of(RUNS, 1), progress(runs=0))
    assert is_due(Checkpoint.of(RUNS, 0), progress(runs=0))


def test_a_grains_checkpoint_is_due_at_that_many_pushed_runs_since_the_apply():
    assert not is_due(Checkpoint.of(GRAINS, 3), progress(grains=2))
    assert is_due(Checkpoint.of(GRAINS, 3), progress(grains=3))


def test_nothing_is_due_before_the_apply():
    early = Progress(APPLIED, APPLIED - dt.timedelta(seconds=1), 0, 0)
    assert not is_due(Checkpoint.of(MS, 0), early)


def test_a_huge_time_checkpoint_is_never_due_and_has_no_due_moment():
    huge = Checkpoint.of(MS, 2**63 - 1)
    assert not is_due(huge, progress(ms=10**12))
    assert verdict.due_at(huge, APPLIED) is None
    assert verdict.due_at(Checkpoint.of(RUNS, 1), APPLIED) is None


# Who is measured ------------------------------------------------------------------------------


def test_only_applicable_llm_authored_proposals_with_a_baseline_run_are_measured():
    assert skip_reason(authored_by="llm", applicable=True, has_baseline_run=True) is None
    assert (
        skip_reason(authored_by="human", applicable=True, has_baseline_run=True)
        == "authored_by_human"
    )
    assert (
        skip_reason(authored_by="llm", applicable=False, has_baseline_run=True) == "not_applicable"
    )
    assert (
        skip_reason(authored_by="llm", applicable=True, has_baseline_run=False) == "no_baseline_run"
    )
