"""EVALSETS.md, "Edge cases the tests must cover": one test each, through the gate service."""

import datetime as dt

import pytest
from django.utils import timezone

from evalsets.models import AdvisoryFlag, EvalsetRun, OutcomeResult, RevertDraft
from evalsets.selectors import skip_reason, timeline, visible_proposals
from tests.evalsets.helpers import (
    apply,
    journal,
    journal_back_dated,
    make_evalset,
    propose,
    t,
    verify,
)

pytestmark = pytest.mark.django_db

AT_NEXT_RUN = [{"after_runs": 1}]


def measure_once(owner, before, after, **policy):
    """Journal ``before`` runs, propose, apply, journal ``after``, measure; return the result.

    ``before`` and ``after`` are lists of summaries; ``passed`` defaults to 1, ``failed`` to 0.
    """
    evalset = make_evalset()
    for minute, summary in enumerate(before):
        journal(evalset, t(minute), **{"passed": 1, **summary})
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=AT_NEXT_RUN, **policy)
    apply(proposal, t(110))
    for minute, summary in enumerate(after):
        journal(evalset, t(120 + minute), **{"passed": 1, **summary})
    results = verify(proposal)
    return proposal, (results[0] if results else None)


def test_equal_values_hold(owner):
    _, result = measure_once(owner, [{"passed": 40}], [{"passed": 40}])
    assert (result.baseline, result.current, result.verdict) == (40, 40, "held")


@pytest.mark.parametrize(
    ("higher_is_better", "baseline", "current", "expected"),
    [
        (True, 100, 95, "held"),  # down by exactly the tolerance
        (True, 100, 94, "regressed"),  # just past it
        (False, 10, 15, "held"),  # up by exactly the tolerance
        (False, 10, 16, "regressed"),  # just past it
    ],
    ids=["higher-exact", "higher-past", "lower-exact", "lower-past"],
)
def test_a_drop_of_exactly_the_tolerance_holds_and_just_past_it_regresses(
    owner, higher_is_better, baseline, current, expected
):
    field = "passed" if higher_is_better else "failed"
    _, result = measure_once(
        owner,
        [{field: baseline}],
        [{field: current}],
        field=field,
        higher_is_better=higher_is_better,
        min_effect={"count": 5},
    )
    assert result.tolerance == 5
    assert result.verdict == expected


def test_a_fractional_drop_just_past_the_tolerance_regresses_in_both_directions(owner):
    _, up = measure_once(
        owner,
        [{"passed": 1, "accuracy": 0.9}],
        [{"passed": 1, "accuracy": 0.879}],
        field="accuracy",
        min_effect={"points": 2},
    )
    assert (up.tolerance, up.verdict) == (pytest.approx(0.02), "regressed")
    _, down = measure_once(
        owner,
        [{"passed": 1, "latency": 0.5}],
        [{"passed": 1, "latency": 0.52}],
        field="latency",
        higher_is_better=False,
        min_effect={"points": 2},
    )
    assert down.verdict == "held"


def test_points_on_passed_are_scaled_by_the_baseline_total(owner):
    # 5 points of a baseline total of 200 (160 passed + 40 failed) tolerate a drop of 10.
    _, held = measure_once(
        owner,
        [{"passed": 160, "failed": 40}],
        [{"passed": 150, "failed": 10}],
        min_effect={"points": 5},
    )
    assert (held.tolerance, held.verdict) == (10, "held")
    _, dropped = measure_once(
        owner,
        [{"passed": 160, "failed": 40}],
        [{"passed": 149, "failed": 10}],
        min_effect={"points": 5},
    )
    assert dropped.verdict == "regressed"


def test_total_of_zero_makes_error_rate_unmeasurable_but_total_itself_reads_zero(owner):
    proposal, result = measure_once(
        owner,
        [{"passed": 0, "failed": 0}],
        [{"passed": 5, "failed": 1}],
        field="error_rate",
        higher_is_better=False,
    )
    assert result is None
    assert not OutcomeResult.objects.filter(proposal=proposal).exists()
    _, total = measure_once(
        owner, [{"passed": 0, "failed": 0}], [{"passed": 0, "failed": 0}], field="total"
    )
    assert (total.baseline, total.current, total.verdict) == (0, 0, "held")


def test_passed_of_zero_leaves_cost_per_pass_unmeasurable_and_keeps_the_other_side(owner):
    _, result = measure_once(
        owner,
        [{"passed": 4, "failed": 0, "usd_micros": 2_000_000}],
        [{"passed": 0, "failed": 0, "usd_micros": 3_000_000}],
        field="failed",
        higher_is_better=False,
        cost={"field": "cost_per_pass", "max_increase_ratio": 1.1},
    )
    assert result.verdict == "held"
    assert (result.cost_read, result.cost_baseline, result.cost_current) == (
        "not_measurable",
        0.5,
        None,
    )


def test_a_cost_present_on_one_side_only_is_not_measurable(owner):
    _, result = measure_once(
        owner,
        [{"passed": 10}],
        [{"passed": 10, "usd_micros": 9_000_000}],
        cost={"field": "usd", "max_increase_ratio": 1.1},
    )
    assert (result.verdict, result.cost_read) == ("held", "not_measurable")
    assert (result.cost_baseline, result.cost_current) == (None, 9.0)
    assert not AdvisoryFlag.objects.exists()


def test_a_zero_cost_baseline_is_breached_by_any_cost(owner):
    proposal, result = measure_once(
        owner,
        [{"passed": 10, "usd_micros": 0}],
        [{"passed": 10, "usd_micros": 1}],
        cost={"field": "usd", "max_increase_ratio": 3},
    )
    assert (result.verdict, result.cost_read) == ("held_costlier", "breached")
    assert AdvisoryFlag.objects.get(proposal=proposal).result == result
    assert not RevertDraft.objects.exists()


def test_a_zero_cost_baseline_with_a_zero_cost_is_within(owner):
    _, result = measure_once(
        owner,
        [{"passed": 10, "usd_micros": 0}],
        [{"passed": 10, "usd_micros": 0}],
        cost={"field": "usd", "max_increase_ratio": 3},
    )
    assert (result.verdict, result.cost_read) == ("held", "within")


def test_regressed_and_breached_together_open_one_revert_and_no_flag(owner):
    proposal, result = measure_once(
        owner,
        [{"passed": 10, "usd_micros": 1_000_000}],
        [{"passed": 5, "usd_micros": 5_000_000}],
        cost={"field": "usd", "max_increase_ratio": 1.5},
    )
    assert (result.verdict, result.cost_read) == ("regressed", "breached")
    draft = RevertDraft.objects.get(proposal=proposal)
    assert (draft.result, draft.severity) == (result, "high")
    assert not AdvisoryFlag.objects.exists()


def test_no_run_before_the_proposal_means_no_metric(owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=AT_NEXT_RUN)
    # A run between the proposal's creation and its apply is no baseline for "no metric".
    journal(evalset, t(105), passed=10)
    apply(proposal, t(110))
    journal(evalset, t(120), passed=1)
    assert verify(proposal) == []
    assert not OutcomeResult.objects.exists()
    assert not RevertDraft.objects.exists()


def test_a_run_back_dated_before_the_proposal_but_recorded_after_it_is_no_baseline(owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=AT_NEXT_RUN)
    # Journaled now, dated to before the proposal: the server did not have it at t(100).
    journal_back_dated(evalset, t(50), passed=10)
    apply(proposal, t(110))
    journal(evalset, t(120), passed=1)
    assert verify(proposal) == []
    assert not OutcomeResult.objects.exists()
    assert not RevertDraft.objects.exists()
    assert skip_reason(visible_proposals(owner).get(pk=proposal.pk)) == "no_baseline_run"


def test_a_back_dated_run_never_moves_the_baseline_between_two_checkpoints(owner):
    evalset = make_evalset()
    baseline = journal(evalset, t(0), passed=10)
    proposal = propose(
        owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 1}, {"after_runs": 2}]
    )
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    (first,) = verify(proposal)
    # Dated between the old baseline and the apply, but recorded after the proposal existed.
    journal_back_dated(evalset, t(105), passed=100)
    journal(evalset, t(130), passed=10)
    (second,) = verify(proposal)
    assert first.baseline_run == second.baseline_run == baseline
    assert (second.baseline, second.current, second.verdict) == (10, 10, "held")
    assert second.best_before == 10
    assert not RevertDraft.objects.exists()


def test_a_run_recorded_before_the_proposal_is_no_evidence_after_its_apply(owner):
    evalset = make_evalset()
    baseline = journal(evalset, t(0), passed=10)
    # Recorded at t(99), dated (within the allowed clock skew) after the apply at t(100).
    early = journal(evalset, t(101), passed=1)
    EvalsetRun.objects.filter(pk=early.pk).update(recorded_at=t(99))
    proposal = propose(owner, evalset, created_at=t(99.5), checkpoints=AT_NEXT_RUN)
    apply(proposal, t(100))
    assert verify(proposal) == []
    current = journal(evalset, t(120), passed=10)
    (result,) = verify(proposal)
    assert (result.baseline_run, result.current_run) == (baseline, current)


def test_due_with_no_run_after_the_apply_stays_due_and_is_measured_later(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_ms": 60_000}])
    apply(proposal, t(110))
    assert verify(proposal, now=t(200)) == []  # due for 89 minutes, nothing to measure
    assert not OutcomeResult.objects.exists()
    journal(evalset, t(210), passed=11)
    (result,) = verify(proposal, now=t(220))
    assert (result.current, result.verdict) == (11, "held")
    assert result.measured_at == t(220)


def test_after_runs_with_zero_runs_since_the_apply_is_not_due(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=AT_NEXT_RUN)
    apply(proposal, t(110))
    assert verify(proposal) == []
    journal(evalset, t(120), passed=10)
    assert len(verify(proposal)) == 1


def test_after_runs_of_zero_is_due_at_the_apply_but_waits_for_a_run(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 0}])
    apply(proposal, t(110))
    assert verify(proposal) == []
    journal(evalset, t(120), passed=10)
    assert len(verify(proposal)) == 1


def test_a_run_journaled_in_the_same_instant_as_the_apply_counts_as_after(owner):
    evalset = make_evalset()
    before = journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=AT_NEXT_RUN)
    apply(proposal, t(110))
    same_instant = journal(evalset, t(110), passed=3)
    (result,) = verify(proposal)
    assert result.current_run == same_instant
    assert result.baseline_run == before
    assert result.verdict == "regressed"


def test_high_water_on_a_lower_is_better_field_takes_the_minimum(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10, failed=5)
    low = journal(evalset, t(1), passed=10, failed=2)
    journal(evalset, t(2), passed=10, failed=4)
    proposals = {
        kind: propose(
            owner,
            evalset,
            created_at=t(100),
            field="failed",
            higher_is_better=False,
            baseline=kind,
            checkpoints=AT_NEXT_RUN,
        )
        for kind in ("newest_before_apply", "high_water")
    }
    for proposal in proposals.values():
        apply(proposal, t(110))
    journal(evalset, t(120), passed=10, failed=3)
    (newest,) = verify(proposals["newest_before_apply"])
    (high_water,) = verify(proposals["high_water"])
    assert (newest.baseline, newest.verdict, newest.best_before) == (4, "held", 2)
    assert (high_water.baseline, high_water.verdict, high_water.best_before) == (2, "regressed", 2)
    assert high_water.baseline_run == low


def test_a_newest_run_before_the_apply_without_the_field_is_not_measurable(owner):
    """``newest_before_apply``: the newest run before the apply lacks the field and an older
    one has it. The baseline is that newest run and its value does not read, so nothing is
    written; the older run's value never stands in for it. Its one checkpoint has come due, so
    the gate closes it as unmeasurable."""
    evalset = make_evalset()
    journal(evalset, t(0), passed=10, accuracy=0.9)
    journal(evalset, t(1), passed=10)  # no accuracy
    proposal = propose(owner, evalset, created_at=t(100), field="accuracy", checkpoints=AT_NEXT_RUN)
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10, accuracy=0.5)
    assert verify(proposal) == []
    assert not OutcomeResult.objects.exists()
    assert not RevertDraft.objects.exists()
    assert [step.state for step in timeline(proposal)] == ["due"]
    proposal.refresh_from_db()
    assert (proposal.verify_complete, proposal.gate_outcome) == (True, "unmeasurable")


@pytest.mark.parametrize("kind", ["newest_before_apply", "high_water"])
def test_no_run_before_the_apply_with_a_readable_value_writes_nothing(owner, kind):
    """A baseline run exists (so the proposal carries a metric) but no run before the apply
    reads the field: there is no baseline value and no best before, and nothing is made up."""
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    journal(evalset, t(1), passed=12)
    proposal = propose(
        owner, evalset, created_at=t(100), field="accuracy", baseline=kind, checkpoints=AT_NEXT_RUN
    )
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10, accuracy=0.5)
    assert verify(proposal) == []
    assert not OutcomeResult.objects.exists()
    assert [step.state for step in timeline(proposal)] == ["due"]


@pytest.mark.parametrize("kind", ["newest_before_apply", "high_water"])
def test_best_before_and_high_water_pass_over_runs_whose_value_does_not_read(owner, kind):
    evalset = make_evalset()
    peak = journal(evalset, t(0), passed=10, accuracy=0.95)
    journal(evalset, t(1), passed=10)  # no accuracy
    newest = journal(evalset, t(2), passed=10, accuracy=0.8)
    proposal = propose(
        owner, evalset, created_at=t(100), field="accuracy", baseline=kind, checkpoints=AT_NEXT_RUN
    )
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10, accuracy=0.9)
    (result,) = verify(proposal)
    assert result.best_before == 0.95
    expected = (newest, 0.8, "held") if kind == "newest_before_apply" else (peak, 0.95, "regressed")
    assert (result.baseline_run, result.baseline, result.verdict) == expected


def test_the_fall_from_peak(owner):
    """Runs 35, 238, 130 journaled, then the apply, then 128 (field passed, min_effect count 5).

    | journaled     | passed |                                   |
    |---------------|--------|-----------------------------------|
    | t0            | 35     |                                   |
    | t1            | 238    | best before the apply             |
    | t2            | 130    | newest before the apply           |
    | apply (t110)  |        |                                   |
    | t120          | 128    | current                           |

    | baseline            | baseline | current | tolerance | verdict   | best_before |
    |---------------------|----------|---------|-----------|-----------|-------------|
    | newest_before_apply | 130      | 128     | 5         | held      | 238         |
    | high_water          | 238      | 128     | 5         | regressed | 238         |
    """
    evalset = make_evalset()
    journal(evalset, t(0), passed=35)
    peak = journal(evalset, t(1), passed=238)
    newest = journal(evalset, t(2), passed=130)
    proposals = {
        kind: propose(
            owner,
            evalset,
            created_at=t(100),
            baseline=kind,
            min_effect={"count": 5},
            checkpoints=AT_NEXT_RUN,
        )
        for kind in ("newest_before_apply", "high_water")
    }
    for proposal in proposals.values():
        apply(proposal, t(110))
    current = journal(evalset, t(120), passed=128)

    (by_newest,) = verify(proposals["newest_before_apply"])
    (by_peak,) = verify(proposals["high_water"])

    assert (by_newest.baseline, by_newest.current, by_newest.verdict) == (130, 128, "held")
    assert (by_peak.baseline, by_peak.current, by_peak.verdict) == (238, 128, "regressed")
    assert by_newest.best_before == by_peak.best_before == 238
    assert (by_newest.baseline_run, by_peak.baseline_run) == (newest, peak)
    assert by_newest.current_run == by_peak.current_run == current
    assert not RevertDraft.objects.filter(proposal=proposals["newest_before_apply"]).exists()
    assert RevertDraft.objects.filter(proposal=proposals["high_water"]).exists()


def test_cost_per_pass_as_the_field_with_no_pass_writes_nothing(owner):
    proposal, result = measure_once(
        owner,
        [{"passed": 4, "usd_micros": 2_000_000}],
        [{"passed": 0, "failed": 4, "usd_micros": 2_000_000}],
        field="cost_per_pass",
        higher_is_better=False,
    )
    assert result is None
    assert not OutcomeResult.objects.filter(proposal=proposal).exists()


def test_a_run_dated_after_the_apply_but_recorded_before_it_is_never_its_current_value(owner):
    # Seed 003: the current value is read "from runs journaled AFTER the apply"; "journaled" is
    # what the server had recorded, so a run recorded before the apply never becomes evidence
    # about it, whatever journaled_at (within the clock-skew allowance) it gives.
    evalset = make_evalset()
    baseline = journal(evalset, t(0), passed=10)
    now = timezone.now()
    proposal = propose(
        owner, evalset, created_at=now - dt.timedelta(minutes=1), checkpoints=AT_NEXT_RUN
    )
    forward_dated = journal_back_dated(evalset, now + dt.timedelta(minutes=4), passed=1)
    apply(proposal, timezone.now())
    assert forward_dated.recorded_at < proposal.applied_at < forward_dated.journaled_at
    later = now + dt.timedelta(minutes=10)
    assert verify(proposal, now=later) == []
    assert [step.state for step in timeline(proposal, now=later)] == ["waiting"]
    assert not RevertDraft.objects.exists()

    current = journal(evalset, timezone.now(), passed=10)
    (result,) = verify(proposal, now=later)
    assert (result.baseline_run, result.current_run) == (baseline, current)
    assert result.verdict == "held"
