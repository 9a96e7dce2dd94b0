"""The statistics behind compare's verdicts, every slot's interval and the verify gate's
significance policy (docs/statistics.md), checked against published reference values and by
properties."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.stats import binom

from loopweb import stats

ROOT = Path(__file__).resolve().parent.parent

# Wilson intervals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("passed", "counted", "low", "high"),
    [
        # Newcombe, "Two-sided confidence intervals for the single proportion: comparison of seven
        # methods", Statistics in Medicine 17 (1998), Table II, method 3 (score, no correction).
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
        # R: binom::binom.confint(2, 3, methods = "wilson") gives 0.2077, 0.9385: the issue's
        # "2 of 3 passed (21–94 %)".
        (2, 3, 0.2077, 0.9385),
    ],
)
def test_wilson_intervals_match_published_values(passed, counted, low, high):
    interval = stats.wilson(passed, counted)
    assert interval == (pytest.approx(low, abs=5e-5), pytest.approx(high, abs=5e-5))


def test_nothing_counted_has_no_interval():
    assert stats.wilson(0, 0) is None
    assert stats.pass_rate(0, 0) is None


def test_a_pass_rate_is_its_counts_and_interval():
    assert stats.pass_rate(2, 3) == {
        "passed": 2,
        "counted": 3,
        "low": pytest.approx(0.2077, abs=5e-5),
        "high": pytest.approx(0.9385, abs=5e-5),
    }
    assert stats.pass_rate_text(stats.pass_rate(2, 3)) == "2 of 3 passed (21–94 %)"
    assert stats.pass_rate_text(None) == "nothing counted yet"


@given(st.integers(0, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_a_wilson_interval_holds_its_estimate_inside_zero_and_one(case):
    passed, counted = case
    if counted == 0:
        assert stats.wilson(passed, counted) is None
        return
    low, high = stats.wilson(passed, counted)
    assert 0 <= low <= passed / counted <= high <= 1
    # Symmetric: the failures' interval is the passes' mirrored.
    mirrored = stats.wilson(counted - passed, counted)
    assert mirrored == (pytest.approx(1 - high, abs=1e-12), pytest.approx(1 - low, abs=1e-12))


def test_a_wilson_interval_is_scipys_to_the_last_digits():
    """Written out (a board's every slot has one), the interval is SciPy's ``method="wilson"``."""
    from scipy.stats import binomtest

    for counted in range(1, 61):
        for passed in range(counted + 1):
            interval = binomtest(passed, counted).proportion_ci(0.95, method="wilson")
            expected = (max(0.0, interval.low), min(1.0, interval.high))
            assert stats.wilson(passed, counted) == pytest.approx(expected, abs=1e-12)


def test_a_pass_rate_is_read_without_loading_scipy():
    """Every board shows a pass rate per slot: a fresh web process's first board does not wait
    seconds for SciPy to load (nor carry it), only a compare or a significance read does."""
    code = (
        "import sys; from loopweb import stats; "
        "assert stats.pass_rate(2, 3)['low'] == 0.2077; "
        "assert 'scipy' not in sys.modules, 'SciPy was loaded'"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter and code
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr


@given(st.integers(1, 200))
def test_more_runs_narrow_the_interval(counted):
    low, high = stats.wilson(counted // 2, counted)
    low4, high4 = stats.wilson(4 * (counted // 2), 4 * counted)
    assert high4 - low4 < high - low


# Fisher's exact test --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "p"),
    [
        # R: fisher.test(TeaTasting) (Agresti 1990, the lady tasting tea): p-value = 0.4857.
        ((3, 4), (1, 4), 0.4857),
        # R: fisher.test(matrix(c(0, 5, 5, 0), 2)): p-value = 0.007937 (2 / 252): the issue's
        # climber that passes 0 of 5 in one record and 5 of 5 in the other.
        ((0, 5), (5, 5), 0.007937),
        # One run each side can never tell anything: p-value = 1.
        ((0, 1), (1, 1), 1.0),
        # R: fisher.test(matrix(c(7, 3, 6, 4), 2)) (7/10 against 6/10): p-value = 1.
        ((7, 10), (6, 10), 1.0),
        # R: fisher.test(matrix(c(90, 10, 60, 40), 2)): p-value = 1.243e-06.
        ((90, 100), (60, 100), 1.243e-06),
    ],
)
def test_fisher_matches_published_values(a, b, p):
    assert stats.fisher(*a, *b) == pytest.approx(p, rel=5e-4)


def test_a_side_that_counted_nothing_tells_nothing():
    assert stats.fisher(0, 0, 3, 3) == 1.0
    assert stats.fisher(2, 2, 0, 0) == 1.0


counts = st.integers(0, 40).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(counts, counts)
def test_fisher_is_a_symmetric_probability(a, b):
    p = stats.fisher(*a, *b)
    assert 0 <= p <= 1
    assert stats.fisher(*b, *a) == pytest.approx(p, rel=1e-9)
    # Passes and failures swapped on both sides: the same table, mirrored.
    flipped = stats.fisher(a[1] - a[0], a[1], b[1] - b[0], b[1])
    assert flipped == pytest.approx(p, rel=1e-9)


@given(st.integers(1, 30), st.integers(0, 30))
def test_fisher_is_monotone_in_evidence(n, k):
    """A record that passed all its runs against one that passed fewer and fewer: the p-value
    never rises; more runs at the same rates never raise it either."""
    k = min(k, n)
    p = stats.fisher(n, n, k, n)
    if k > 0:
        assert stats.fisher(n, n, k - 1, n) <= p + 1e-12
    assert stats.fisher(2 * n, 2 * n, 2 * k, 2 * n) <= p + 1e-12


# McNemar's exact test -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("up", "down", "p"),
    [
        # statsmodels: mcnemar([[0, 1], [9, 0]], exact=True).pvalue == 0.021484375 (22 / 1024), and
        # R: binom.test(1, 10)$p.value the same.
        (9, 1, 0.021484375),
        # statsmodels: mcnemar([[0, 0], [5, 0]], exact=True).pvalue == 0.0625 (2 / 32).
        (5, 0, 0.0625),
        (3, 3, 1.0),
    ],
)
def test_mcnemar_matches_published_values(up, down, p):
    assert stats.mcnemar(up, down) == pytest.approx(p, rel=1e-9)


def test_mcnemar_without_flips_is_one():
    assert stats.mcnemar(0, 0) == 1.0


@given(st.integers(0, 200), st.integers(0, 200))
def test_mcnemar_is_a_symmetric_probability(up, down):
    p = stats.mcnemar(up, down)
    assert 0 <= p <= 1
    assert stats.mcnemar(down, up) == pytest.approx(p, rel=1e-9)
    if up >= down:
        assert stats.mcnemar(up + 1, down) <= p + 1e-12


# Holm's step-down adjustment ------------------------------------------------------------------


def test_holm_matches_r():
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") gives 0.05 0.08 0.09 0.09 0.09.
    adjusted = stats.holm([0.01, 0.02, 0.03, 0.04, 0.05])
    assert adjusted == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    # R: p.adjust(c(0.04, 0.001, 0.5), "holm") gives 0.080 0.003 0.500 (in the given order).
    assert stats.holm([0.04, 0.001, 0.5]) == pytest.approx([0.08, 0.003, 0.5])
    assert stats.holm([]) == []


@given(st.lists(st.floats(0, 1), max_size=30))
def test_holm_never_lowers_a_p_value_and_keeps_their_order(pvalues):
    adjusted = stats.holm(pvalues)
    assert len(adjusted) == len(pvalues)
    for p, q in zip(pvalues, adjusted, strict=True):
        assert p <= q <= 1
    for i, j in ((i, j) for i in range(len(pvalues)) for j in range(len(pvalues))):
        if pvalues[i] <= pvalues[j]:
            assert adjusted[i] <= adjusted[j]


# Power ----------------------------------------------------------------------------------------


def test_the_uncorrected_size_matches_r_power_prop_test():
    # R: power.prop.test(p1 = .50, p2 = .75, power = .90) gives n = 76.7 (its own example).
    assert stats.normal_runs(0.50, 0.75, alpha=0.05, power=0.90) == pytest.approx(76.7, abs=0.05)


def test_runs_needed_adds_fleiss_continuity_correction():
    # Fleiss, Levin & Paik, Statistical Methods for Rates and Proportions (3rd ed., 2003), eq.
    # 4.14: n' = n / 4 (1 + sqrt(1 + 4 / (n |p2 - p1|)))^2, rounded up.
    n = stats.normal_runs(0.50, 0.75, alpha=0.05, power=0.80)
    expected = math.ceil(n / 4 * (1 + math.sqrt(1 + 4 / (n * 0.25))) ** 2)
    assert stats.runs_needed(0.50, 0.75) == expected == 66


def test_runs_needed_for_thirty_points_at_the_worst_rate():
    """A 30-point change around 50 % (the widest spread a rate has) at α 0.05 and 80 % power."""
    n = stats.runs_per_rung_needed(0.30)
    assert n == stats.runs_needed(0.35, 0.65) == 49
    # Fisher's exact test at that size has about the power asked for (its exact power, summed
    # over every pair of outcomes with SciPy's binomial pmf; checked once here, too slow for a
    # page).
    assert exact_power(0.35, 0.65, n) >= 0.8
    assert exact_power(0.35, 0.65, n // 2) < 0.5


def exact_power(p1: float, p2: float, n: int, alpha: float = 0.05) -> float:
    """The chance that Fisher's exact test at ``alpha`` rejects, with ``n`` runs a side whose
    pass rates are ``p1`` and ``p2``: every pair of outcomes, weighted by SciPy's binomial pmf
    (outcomes below 1e-12 left out)."""
    a, b = binom.pmf(range(n + 1), n, p1), binom.pmf(range(n + 1), n, p2)
    rejected = 0.0
    for x in range(n + 1):
        for y in range(n + 1):
            weight = a[x] * b[y]
            if weight > 1e-12 and stats.fisher(x, n, y, n) < alpha:
                rejected += weight
    return rejected


def test_no_difference_needs_no_size():
    assert stats.runs_needed(0.5, 0.5) is None


@given(st.floats(0.05, 0.95), st.floats(0.05, 0.5))
def test_smaller_changes_need_more_runs(p, d):
    assume(p + d <= 0.99)
    assert stats.runs_needed(p, p + d) >= stats.runs_needed(p, min(0.99, p + d + 0.05))
