"""Blind pairwise judgements read as a preference table and a Bradley–Terry ranking.

Pure: no Django. ``choix`` fits the model (its maximum-likelihood optimiser); what is written
here is how judgements become its input, how ties count, and the intervals, from the curvature
of the log-likelihood at the estimate (the observed Fisher information, which for
Bradley–Terry equals the expected one). docs/reviewing.md says what each number means.

The model: climber i beats climber j with probability ``exp(s_i) / (exp(s_i) + exp(s_j))``; the
strengths ``s`` are log-scale and centred (they sum to zero), since only differences are
identified. A tie counts as half a win for each side (the usual reading, as in Chatbot Arena):
choix takes (winner, loser) pairs with no weights, so every decisive judgement is given twice
and a tie once each way, which doubles the log-likelihood and leaves its maximum where it is.
"""

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

LEFT = "left"
RIGHT = "right"
TIE = "tie"
CHOICES = (LEFT, RIGHT, TIE)

#: The L2 penalty choix adds to the negative log-likelihood: a weak prior that keeps the
#: strengths finite when a climber won (or lost) every comparison it was in. Small enough to
#: move a well-compared strength by well under a hundredth.
PENALTY = 0.01
CONFIDENCE = 0.95


@dataclass(frozen=True, slots=True)
class Judgement:
    """One judgement between two climbers: ``winner`` is ``a``, ``b`` or None for a tie."""

    a: Hashable
    b: Hashable
    winner: Hashable | None


@dataclass(frozen=True, slots=True)
class Strength:
    climber: Hashable
    rank: int
    #: Centred log-strength and its 95 % interval (normal, from the information matrix).
    score: float
    low: float
    high: float
    stderr: float
    wins: float
    comparisons: int


def preference_table(
    judgements: Sequence[Judgement],
) -> dict[tuple[Hashable, Hashable], dict[str, int]]:
    """For each ordered pair (a, b) that met: ``{"wins", "losses", "ties"}`` of a against b
    (both orders are present)."""
    table: dict[tuple[Hashable, Hashable], dict[str, int]] = {}
    for j in judgements:
        ab = table.setdefault((j.a, j.b), {"wins": 0, "losses": 0, "ties": 0})
        ba = table.setdefault((j.b, j.a), {"wins": 0, "losses": 0, "ties": 0})
        if j.winner is None:
            ab["ties"] += 1
            ba["ties"] += 1
        elif j.winner == j.a:
            ab["wins"] += 1
            ba["losses"] += 1
        else:
            ab["losses"] += 1
            ba["wins"] += 1
    return table


def _weighted(judgements: Sequence[Judgement], index: dict[Hashable, int]) -> list[tuple[int, int]]:
    """(winner, loser) pairs for choix, each decisive judgement twice and a tie once each
    way."""
    data: list[tuple[int, int]] = []
    for j in judgements:
        a, b = index[j.a], index[j.b]
        if j.winner is None:
            data += [(a, b), (b, a)]
        elif j.winner == j.a:
            data += [(a, b), (a, b)]
        else:
            data += [(b, a), (b, a)]
    return data


def _covariance(
    scores: "NDArray[np.float64]", judgements: Sequence[Judgement], index: dict[Hashable, int]
) -> "NDArray[np.float64]":
    """The covariance of the centred strengths: the Moore–Penrose inverse of the information
    matrix ``sum n_ij p_ij (1 - p_ij) (e_i - e_j)(e_i - e_j)^T``, whose null space is the
    common shift the centring removes."""
    import numpy as np

    n = len(index)
    information = np.zeros((n, n))
    for j in judgements:
        a, b = index[j.a], index[j.b]
        p = 1.0 / (1.0 + math.exp(scores[b] - scores[a]))
        w = p * (1.0 - p)
        information[a, a] += w
        information[b, b] += w
        information[a, b] -= w
        information[b, a] -= w
    covariance: NDArray[np.float64] = np.linalg.pinv(information, hermitian=True)
    return covariance


def bradley_terry(
    judgements: Sequence[Judgement], *, penalty: float = PENALTY, confidence: float = CONFIDENCE
) -> list[Strength]:
    """Each climber that was compared, strongest first, with its centred log-strength and an
    interval. Empty with no judgements."""
    climbers = sorted({c for j in judgements for c in (j.a, j.b)}, key=repr)
    if not judgements or len(climbers) < 2:
        return []
    import choix
    import numpy as np
    from scipy.stats import norm

    index = {c: i for i, c in enumerate(climbers)}
    fitted = choix.opt_pairwise(len(climbers), _weighted(judgements, index), alpha=penalty)
    scores = np.asarray(fitted, dtype=float)
    scores -= scores.mean()
    stderr = np.sqrt(np.clip(np.diag(_covariance(scores, judgements, index)), 0.0, None))
    z = float(norm.ppf(0.5 + confidence / 2))
    wins = dict.fromkeys(climbers, 0.0)
    meetings = dict.fromkeys(climbers, 0)
    for j in judgements:
        meetings[j.a] += 1
        meetings[j.b] += 1
        if j.winner is None:
            wins[j.a] += 0.5
            wins[j.b] += 0.5
        else:
            wins[j.winner] += 1.0
    order = sorted(climbers, key=lambda c: (-scores[index[c]], repr(c)))
    return [
        Strength(
            climber=c,
            rank=rank,
            score=float(scores[index[c]]),
            low=float(scores[index[c]] - z * stderr[index[c]]),
            high=float(scores[index[c]] + z * stderr[index[c]]),
            stderr=float(stderr[index[c]]),
            wins=wins[c],
            comparisons=meetings[c],
        )
        for rank, c in enumerate(order, start=1)
    ]


def win_probability(score_a: float, score_b: float) -> float:
    """The model's probability that a climber of strength ``score_a`` beats one of ``score_b``."""
    return 1.0 / (1.0 + math.exp(score_b - score_a))
