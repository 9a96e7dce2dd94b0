"""The statistics of reviewing, against published reference values and hand-computed cases."""

import math

import pytest

from loopweb.reviewing.agreement import cohen_kappa, krippendorff_alpha, percent_agreement, split
from loopweb.reviewing.ranking import (
    Judgement,
    bradley_terry,
    preference_table,
    win_probability,
)


def table(a: int, b: int, c: int, d: int) -> list[tuple[str, str]]:
    """A 2 × 2 table of two raters: a both yes, b first yes second no, c first no second yes,
    d both no."""
    return [("y", "y")] * a + [("y", "n")] * b + [("n", "y")] * c + [("n", "n")] * d


def test_cohens_kappa_of_the_textbook_table_is_0_4():
    # 50 items: 20 both yes, 5 yes/no, 10 no/yes, 15 both no; p_o = .7, p_e = .5 (the worked
    # example reproduced in most introductions to κ, e.g. Wikipedia's "Cohen's kappa").
    assert cohen_kappa(table(20, 5, 10, 15)) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("cells", "kappa"),
    [((45, 15, 25, 15), 0.1304), ((25, 35, 5, 35), 0.2593)],
)
def test_cohens_kappa_differs_for_tables_with_the_same_percent_agreement(cells, kappa):
    pairs = table(*cells)
    assert percent_agreement(pairs) == pytest.approx(0.6)
    assert cohen_kappa(pairs) == pytest.approx(kappa, abs=5e-5)


def test_cohens_kappa_is_one_for_perfect_agreement_and_undefined_without_variety():
    assert cohen_kappa([("a", "a"), ("b", "b")]) == pytest.approx(1.0)
    assert cohen_kappa([("a", "a"), ("a", "a")]) is None
    assert cohen_kappa([]) is None


def test_weighted_kappa_counts_a_near_miss_as_part_agreement_by_hand():
    # Categories 1, 2, 3; pairs (1,1), (2,3), (3,3), (1,2). Observed quadratic disagreement:
    # (0 + 1 + 0 + 1) / 4 = .5. Marginals: first {1: .5, 2: .25, 3: .25}, second {1: .25,
    # 2: .25, 3: .5}; expected = sum p_i q_j (i-j)² = .5 · 2.25 + .25 · .75 + .25 · 1.25
    # = 1.625; κ_w = 1 - .5 / 1.625.
    pairs = [(1, 1), (2, 3), (3, 3), (1, 2)]
    assert cohen_kappa(pairs, categories=[1, 2, 3], weights="quadratic") == pytest.approx(
        1 - 0.5 / 1.625
    )
    # Linear: observed .5; expected sum p_i q_j |i-j| = .5 · 1.25 + .25 · .75 + .25 · .75 = 1.
    assert cohen_kappa(pairs, categories=[1, 2, 3], weights="linear") == pytest.approx(0.5)
    assert cohen_kappa(pairs, categories=[1, 2, 3]) == pytest.approx(
        1 - 0.5 / (1 - (0.5 * 0.25 + 0.25 * 0.25 + 0.25 * 0.5))
    )


# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: four observers,
# twelve units, values 1-5, missing data. Published: α nominal .743, ordinal .815, interval
# .849, ratio .797.
N = None
KRIPPENDORFF_2011 = {
    "A": [1, 2, 3, 3, 2, 1, 4, 1, 2, N, N, N],
    "B": [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, N, 3],
    "C": [N, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, N],
    "D": [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, N],
}


def krippendorff_units() -> dict[int, dict[str, float]]:
    units: dict[int, dict[str, float]] = {}
    for observer, values in KRIPPENDORFF_2011.items():
        for unit, value in enumerate(values):
            if value is not None:
                units.setdefault(unit, {})[observer] = value
    return units


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorffs_alpha_matches_his_2011_worked_example(level, published):
    assert krippendorff_alpha(krippendorff_units(), level=level) == pytest.approx(
        published, abs=5e-4
    )


def test_krippendorffs_alpha_is_undefined_without_two_values_on_a_unit_or_any_variety():
    assert krippendorff_alpha({1: {"a": 1}, 2: {"b": 2}}, level="nominal") is None
    assert krippendorff_alpha({1: {"a": 1, "b": 1}, 2: {"a": 1, "b": 1}}, level="nominal") is None


def test_reviews_split_on_opposite_verdicts_or_ratings_more_than_one_step_apart():
    assert split([3, 4], ["accept", "accept"]) == []
    assert split([3, 4], ["accept", "reject"]) == ["verdict"]
    assert split([2, 4], ["accept", ""]) == ["rating"]
    assert split([1, 5], ["accept", "reject"]) == ["verdict", "rating"]


def test_bradley_terry_of_two_climbers_matches_the_hand_computed_estimate_and_interval():
    # a beats b 3 times of 4: p = 3/4, so s_a - s_b = ln 3, centred ±ln 3 / 2. The information
    # of the difference is n p (1 - p) = 4 · 3/16 = 3/4, so Var(s_a - s_b) = 4/3 and each
    # centred strength has variance 1/3.
    judgements = [Judgement("a", "b", "a")] * 3 + [Judgement("a", "b", "b")]
    a, b = bradley_terry(judgements, penalty=0.0)
    assert (a.climber, a.rank, b.climber, b.rank) == ("a", 1, "b", 2)
    assert a.score == pytest.approx(math.log(3) / 2, abs=1e-4)
    assert b.score == pytest.approx(-math.log(3) / 2, abs=1e-4)
    assert a.stderr == pytest.approx(math.sqrt(1 / 3), abs=1e-4)
    assert a.low == pytest.approx(a.score - 1.959964 * math.sqrt(1 / 3), abs=1e-3)
    assert a.high == pytest.approx(a.score + 1.959964 * math.sqrt(1 / 3), abs=1e-3)
    assert win_probability(a.score, b.score) == pytest.approx(0.75, abs=1e-4)
    assert (a.wins, a.comparisons) == (3, 4)


def test_a_tie_counts_as_half_a_win_for_each_side():
    # a: 2 wins and 2 ties of 4 → 3 of 4 as above.
    judgements = [Judgement("a", "b", "a")] * 2 + [Judgement("b", "a", None)] * 2
    a, b = bradley_terry(judgements, penalty=0.0)
    assert a.score - b.score == pytest.approx(math.log(3), abs=1e-4)
    assert a.wins == 3.0


def test_bradley_terry_of_three_climbers_satisfies_the_likelihood_equations():
    # At the maximum each climber's wins equal its expected wins: sum_j n_ij p_ij.
    judgements = (
        [Judgement("a", "b", "a")] * 3
        + [Judgement("a", "b", "b")]
        + [Judgement("b", "c", "b")] * 2
        + [Judgement("b", "c", "c")] * 2
        + [Judgement("a", "c", "a")] * 2
        + [Judgement("c", "a", "c")]
    )
    strengths = {s.climber: s for s in bradley_terry(judgements, penalty=0.0)}
    assert sum(s.score for s in strengths.values()) == pytest.approx(0.0, abs=1e-9)
    for name, s in strengths.items():
        expected = sum(
            win_probability(s.score, strengths[j.b if j.a == name else j.a].score)
            for j in judgements
            if name in (j.a, j.b)
        )
        assert s.wins == pytest.approx(expected, abs=1e-3)
    # b won 3 of 8, c 3 of 7: c ranks above b.
    assert [s.climber for s in sorted(strengths.values(), key=lambda s: s.rank)] == [
        "a",
        "c",
        "b",
    ]


def test_a_climber_that_won_everything_keeps_a_finite_strength_with_a_wide_interval():
    a, b = bradley_terry([Judgement("a", "b", "a")] * 3)
    assert math.isfinite(a.score) and a.score > 1
    assert a.high - a.low > 2


def test_the_preference_table_counts_both_orders():
    judgements = [Judgement("a", "b", "a"), Judgement("b", "a", None), Judgement("a", "b", "b")]
    t = preference_table(judgements)
    assert t["a", "b"] == {"wins": 1, "losses": 1, "ties": 1}
    assert t["b", "a"] == {"wins": 1, "losses": 1, "ties": 1}
    assert bradley_terry([]) == []
