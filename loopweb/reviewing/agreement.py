"""Agreement between reviewers, and between reviewers and the validators.

Pure: no Django. Cohen's κ is computed here from its definition (a few lines of arithmetic over
a contingency table); Krippendorff's α comes from ``krippendorff`` (Castro's implementation of
Krippendorff 2011). docs/reviewing.md says what each number means and when it is undefined.
"""

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Literal

Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]

#: Ratings further apart than this are a split between reviewers.
RATING_SPREAD = 1


def cohen_kappa(
    pairs: Sequence[tuple[Hashable, Hashable]],
    *,
    categories: Sequence[Hashable] | None = None,
    weights: Weights = None,
) -> float | None:
    """Cohen's κ of two raters over the items both rated (``pairs``: their two labels per
    item). With ``weights``, the weighted κ (Cohen 1968) over ``categories`` in their order:
    disagreement ``|i - j|`` (linear) or ``(i - j)²`` (quadratic). None when it is undefined:
    no items, or chance alone would agree fully (one label used by both throughout)."""
    if not pairs:
        return None
    labels = (
        list(categories)
        if categories is not None
        else sorted({x for p in pairs for x in p}, key=repr)
    )
    position = {label: i for i, label in enumerate(labels)}
    k, n = len(labels), len(pairs)
    table = [[0.0] * k for _ in range(k)]
    for first, second in pairs:
        table[position[first]][position[second]] += 1.0 / n
    rows = [sum(row) for row in table]
    columns = [sum(table[i][j] for i in range(k)) for j in range(k)]

    def distance(i: int, j: int) -> float:
        if weights is None:
            return 0.0 if i == j else 1.0
        return float(abs(i - j) if weights == "linear" else (i - j) ** 2)

    observed = sum(distance(i, j) * table[i][j] for i in range(k) for j in range(k))
    expected = sum(distance(i, j) * rows[i] * columns[j] for i in range(k) for j in range(k))
    if expected == 0.0:
        return None
    return 1.0 - observed / expected


def percent_agreement(pairs: Sequence[tuple[Hashable, Hashable]]) -> float | None:
    if not pairs:
        return None
    return sum(1 for a, b in pairs if a == b) / len(pairs)


def krippendorff_alpha(
    units: Mapping[Hashable, Mapping[Hashable, float]], *, level: Level
) -> float | None:
    """Krippendorff's α over every unit's values by every rater (missing values allowed).
    ``units``: unit → {rater: value}, values numbers (codes, for nominal data). None when it
    is undefined: no unit with two values, or a single value used throughout."""
    pairable = [values for values in units.values() if len(values) >= 2]
    if not pairable or len({v for values in pairable for v in values.values()}) < 2:
        return None
    import krippendorff
    import numpy as np

    raters = sorted({r for values in units.values() for r in values}, key=repr)
    data = np.full((len(raters), len(pairable)), np.nan)
    row = {r: i for i, r in enumerate(raters)}
    for column, values in enumerate(pairable):
        for rater, value in values.items():
            data[row[rater], column] = value
    alpha = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return None if math.isnan(alpha) else alpha


def split(ratings: Sequence[int], verdicts: Sequence[str]) -> list[str]:
    """How the reviews of one run split: ``verdict`` when one accepted and another rejected,
    ``rating`` when two ratings are more than one step apart. Empty when they agree."""
    reasons = []
    if {"accept", "reject"} <= set(verdicts):
        reasons.append("verdict")
    if ratings and max(ratings) - min(ratings) > RATING_SPREAD:
        reasons.append("rating")
    return reasons
