"""Whether a difference in pass counts is more than chance: exact tests, intervals and the size
a test needs (docs/statistics.md says what each number means and assumes).

Pure and small: SciPy computes every probability (``fisher_exact``, ``binomtest``, the normal
quantiles); what is written here is which test a question asks for, Holm's step-down order over
p-values, and the Wilson interval, whose closed form (SciPy's own, Newcombe 1998) every slot of
every board shows: SciPy takes seconds and tens of megabytes to load, and a web process's first
board would wait on it. Each function of counts is cached: a board reads tens of thousands of
slots of a handful of distinct tallies, and one SciPy call costs about a millisecond. SciPy is
imported on first use, so a process that never asks (one serving boards alone) pays nothing for it.
"""

import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from statistics import NormalDist

#: The significance level compare and the verify gate use unless asked for another.
ALPHA = 0.05
#: The power a size is planned for.
POWER = 0.80
#: The change (in pass rate) the power hint plans for unless asked for another: 30 points.
CHANGE = 0.30
CONFIDENCE = 0.95
#: The normal quantile of a two-sided 95 % interval (1.95996…).
Z = NormalDist().inv_cdf(0.5 + 0.5 * CONFIDENCE)

#: A pass rate as the API shows it: ``{passed, counted, low, high}``.
PassRate = dict[str, int | float]
#: An interval's bounds are shown to four decimals (a hundredth of a percentage point).
DECIMALS = 4


def _counts(passed: object, counted: object) -> bool:
    """Whether ``passed`` of ``counted`` are counts a test can read (a boolean is not one)."""
    if type(passed) is not int or type(counted) is not int:
        return False
    return 0 <= passed <= counted


@lru_cache(maxsize=4096)
def wilson(passed: int, counted: int) -> tuple[float, float] | None:
    """The 95 % Wilson score interval of ``passed`` of ``counted``; None when nothing counted
    (or the counts are not counts)."""
    if not _counts(passed, counted) or counted == 0:
        return None
    # SciPy's ``binomtest(…).proportion_ci(method="wilson")``, written out (Newcombe 1998).
    p = passed / counted
    denominator = 2 * (counted + Z**2)
    center = (2 * counted * p + Z**2) / denominator
    delta = Z / denominator * math.sqrt(4 * counted * p * (1 - p) + Z**2)
    low = 0.0 if passed == 0 else center - delta
    high = 1.0 if passed == counted else center + delta
    return max(0.0, low), min(1.0, high)


def pass_rate(passed: int, counted: int) -> PassRate | None:
    """``{passed, counted, low, high}`` as the API shows a slot's pass rate, the bounds to four
    decimals (a new dict each time: callers may keep it in documents they change)."""
    interval = wilson(passed, counted)
    if interval is None:
        return None
    low, high = (round(bound, DECIMALS) for bound in interval)
    return {"passed": passed, "counted": counted, "low": low, "high": high}


@lru_cache(maxsize=4096)
def shared_pass_rate(passed: int, counted: int) -> PassRate | None:
    """``pass_rate``, one object per pair of counts: for documents built in bulk and read only
    (a board's ten thousand slots hold a handful of distinct tallies). Never change it."""
    return pass_rate(passed, counted)


def pass_rate_of(tally: Mapping[str, int] | None) -> PassRate | None:
    """A slot's pass rate from its tally (``passing`` of ``counted``), shared (read only)."""
    if not tally:
        return None
    return shared_pass_rate(tally["passing"], tally["counted"])


def percent(value: float) -> str:
    return f"{round(100 * value)}"


def pass_rate_text(rate: Mapping[str, int | float] | None) -> str:
    """``2 of 3 passed (21–94 %)``."""
    if rate is None:
        return "nothing counted yet"
    low, high = percent(rate["low"]), percent(rate["high"])
    return f"{rate['passed']} of {rate['counted']} passed ({low}–{high} %)"


@lru_cache(maxsize=8192)
def fisher(a_passed: int, a_counted: int, b_passed: int, b_counted: int) -> float:
    """Fisher's exact test, two-sided, of ``a_passed`` of ``a_counted`` against ``b_passed`` of
    ``b_counted``: the chance of a table at least as lopsided with the same margins if both sides
    had one pass rate. 1 when either side counted nothing (no evidence, no difference)."""
    if not (_counts(a_passed, a_counted) and _counts(b_passed, b_counted)):
        return 1.0
    if a_counted == 0 or b_counted == 0:
        return 1.0
    from scipy.stats import fisher_exact

    table = [[a_passed, a_counted - a_passed], [b_passed, b_counted - b_passed]]
    return min(1.0, float(fisher_exact(table, alternative="two-sided").pvalue))


@lru_cache(maxsize=1024)
def mcnemar(up: int, down: int) -> float:
    """McNemar's exact test, two-sided, of paired verdicts: ``up`` pairs flipped one way, ``down``
    the other, judged as a binomial test of ``up`` of ``up + down`` at one half (the pairs that
    did not flip say nothing about a change). 1 when nothing flipped."""
    if up + down == 0:
        return 1.0
    from scipy.stats import binomtest

    return min(1.0, float(binomtest(up, up + down, 0.5).pvalue))


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (Holm 1979), in the order given: the i-th smallest p-value of
    m is multiplied by ``m - i`` (i from 0), kept at least as large as the one before it and at
    most 1. The familywise error rate is then at most alpha whatever the tests' dependence. (SciPy
    has no Holm; this is R's ``p.adjust(p, "holm")``, and the tests hold it to R's output.)"""
    m = len(pvalues)
    order = sorted(range(m), key=lambda i: pvalues[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def normal_runs(p1: float, p2: float, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The runs a side the two-sided test of two proportions needs to tell ``p1`` from ``p2``
    (the normal approximation, as R's ``power.prop.test`` solves it)."""
    from scipy.stats import norm

    z_alpha, z_power = norm.ppf(1 - alpha / 2), norm.ppf(power)
    mean = (p1 + p2) / 2
    spread = z_alpha * math.sqrt(2 * mean * (1 - mean))
    spread += z_power * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return float((spread / abs(p1 - p2)) ** 2)


@lru_cache(maxsize=1024)
def runs_needed(p1: float, p2: float, alpha: float = ALPHA, power: float = POWER) -> int | None:
    """The runs a side Fisher's exact test needs to tell pass rate ``p1`` from ``p2`` at
    ``alpha`` with ``power``: the normal approximation with Fleiss's continuity correction
    (Fleiss, Levin & Paik 2003, eq. 4.14), which tracks the exact test's power closely. None when
    the rates are equal (no size tells a difference that is not there)."""
    if math.isclose(p1, p2, abs_tol=1e-12):
        return None
    n = normal_runs(p1, p2, alpha=alpha, power=power)
    corrected = n / 4 * (1 + math.sqrt(1 + 4 / (n * abs(p1 - p2)))) ** 2
    return math.ceil(corrected - 1e-9)


def runs_per_rung_needed(
    change: float = CHANGE, *, alpha: float = ALPHA, power: float = POWER
) -> int | None:
    """Runs per rung that tell a change of ``change`` in a rung's pass rate from chance, at the
    rates where it is hardest to see (centred on 50 %)."""
    change = min(max(change, 0.0), 1.0)
    return runs_needed(0.5 - change / 2, 0.5 + change / 2, alpha, power)
