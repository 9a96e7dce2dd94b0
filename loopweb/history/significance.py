"""How sure a compare's changes are (API.md "Significance", docs/statistics.md). No queries: reads
two records' slots and snapshots, and leaves every probability to ``loopweb.stats``.

Rungs pair by position (the k-th rung of A with the k-th of B), climbers by key. A rung's
evidence is the counted runs of its slot and how many of them cleared the gate's floor in that
record (the tally's ``passing``).
"""

from collections.abc import Sequence
from functools import lru_cache

from ladders.statuses import FAILED, PASSED
from loopweb import stats
from loopweb.history.models import DispatchRecord
from loopweb.history.records import TALLY
from loopweb.runs.numbers import typed_integer

UP, DOWN, SAME, INCONCLUSIVE, NEW, GONE = "up", "down", "same", "inconclusive", "new", "gone"
VERDICTS = (UP, DOWN, SAME, INCONCLUSIVE, NEW, GONE)
TEST, CORRECTION = "fisher_exact", "holm"

_COUNTED, _PASSING = TALLY.index("counted"), TALLY.index("passing")
#: The longest ``?alpha=`` read: a number, not an essay.
MAX_ALPHA_TEXT = 32
ALPHA_RULE = "Must be a number between 0 and 0.5 (both excluded), such as 0.05."
CHANGE_RULE = "Must be a whole number of percentage points between 1 and 100, such as 30."


def parse_change(raw: str | None) -> float | str:
    """``?change=`` (percentage points) as a fraction, the default when absent, or what is wrong
    with it."""
    if raw is None:
        return stats.CHANGE
    points = typed_integer(raw, low=1)
    if points is None or points > 100:
        return CHANGE_RULE
    return points / 100


def parse_alpha(raw: str | None) -> float | str:
    """``?alpha=`` as a float in (0, 0.5), the default when absent, or what is wrong with it."""
    if raw is None:
        return stats.ALPHA
    try:
        alpha = float(raw) if len(raw) <= MAX_ALPHA_TEXT else None
    except ValueError:
        alpha = None
    if alpha is None or not 0 < alpha < 0.5:  # NaN fails both comparisons
        return ALPHA_RULE
    return alpha


@lru_cache(maxsize=4096)
def _side(passed: int, counted: int) -> dict:
    """One side of a rung's evidence: its pass rate (``{passed, counted, low, high}``, the bounds
    null when nothing counted), one object per pair of counts (read only)."""
    rate = stats.pass_rate(passed, counted)
    return rate or {"passed": passed, "counted": counted, "low": None, "high": None}


def _reached(slots: Sequence) -> list[int]:
    return [j for j, slot in enumerate(slots) if slot[1]]


def walk(slots_a: Sequence | None, slots_b: Sequence | None) -> tuple[list[dict], int, int]:
    """A climber's evidence (each rung position where either record counted runs: both sides'
    counts and Fisher's exact p-value between them), and how many of its slots decided in both
    records went failed → passed and passed → failed.

    A climb stops at its first rung not passed, so only a few slots of each climber were reached
    (have a tally), and every decided slot was: the positions are found in one pass over each
    side and only they are read."""
    slots_a, slots_b = slots_a or (), slots_b or ()
    na, nb = len(slots_a), len(slots_b)
    rows, up, down = [], 0, 0
    for j in sorted(set(_reached(slots_a)).union(_reached(slots_b))):
        sa = slots_a[j] if j < na else None
        sb = slots_b[j] if j < nb else None
        ta, tb = sa and sa[1], sb and sb[1]
        pa, ca = (ta[_PASSING], ta[_COUNTED]) if ta else (0, 0)
        pb, cb = (tb[_PASSING], tb[_COUNTED]) if tb else (0, 0)
        if sa and sb:
            if sa[0] == FAILED and sb[0] == PASSED:
                up += 1
            elif sa[0] == PASSED and sb[0] == FAILED:
                down += 1
        if ca or cb:
            rows.append(
                {
                    "rung": j + 1,
                    "a": _side(pa, ca),
                    "b": _side(pb, cb),
                    "pValue": stats.fisher(pa, ca, pb, cb),
                }
            )
    return rows, up, down


def between(rows: list[dict], reached_a: int, reached_b: int) -> float:
    """The smallest p-value over the rungs between two heights: the rungs one record passed and
    the other did not (1 when none of them has evidence on both sides)."""
    low, high = sorted((reached_a, reached_b))
    return min((r["pValue"] for r in rows if low < r["rung"] <= high), default=1.0)


def judge(climbers: list[dict], alpha: float) -> None:
    """Give each compared climber (``change`` and ``evidence`` set, and both sides' heights) its
    ``significance``: Holm-adjusted over the climbers whose height changed."""
    moved = [c for c in climbers if c["change"] in (UP, DOWN)]
    pvalues = [between(c["evidence"], c["a"]["reached"], c["b"]["reached"]) for c in moved]
    adjusted = stats.holm(pvalues)
    for climber, p, q in zip(moved, pvalues, adjusted, strict=True):
        verdict = climber["change"] if q < alpha else INCONCLUSIVE
        climber["significance"] = {"verdict": verdict, "pValue": p, "adjustedP": q}
    for climber in climbers:
        if "significance" not in climber:
            untested = {"verdict": climber["change"], "pValue": None, "adjustedP": None}
            climber["significance"] = untested


# What differs between the two configurations --------------------------------------------------

GATE_KEYS = ("floor", "threshold", "unloadedCountsAsBroken", "earlyStop")
PIN_KEYS = ("case", "version", "variant", "engine")


def _pin(rung: dict) -> dict:
    return {key: rung.get(key) for key in PIN_KEYS}


def _uniform(rungs: list[dict]) -> int | None:
    runs = {r.get("runs") for r in rungs}
    return runs.pop() if len(runs) == 1 else None


def configuration_differs(a: DispatchRecord, b: DispatchRecord) -> list[dict]:
    """Every difference between the two snapshots that could move a climber: the rungs and
    their pins (by position), the runs per rung, the gate, the retry count, the climb order, the
    runs-in-flight limit and the climbers. The ladder's name is not among them."""
    sa, sb = a.snapshot, b.snapshot
    differs: list[dict] = []

    def differ(what: str, x, y) -> None:
        if x != y:
            differs.append({"what": what, "a": x, "b": y})

    rungs_a, rungs_b = sa.get("rungs", []), sb.get("rungs", [])
    differ("rungs", len(rungs_a), len(rungs_b))
    for j, (ra, rb) in enumerate(zip(rungs_a, rungs_b, strict=False)):
        differ(f"rungs.{j + 1}", _pin(ra), _pin(rb))
    runs_a, runs_b = _uniform(rungs_a), _uniform(rungs_b)
    if runs_a is not None and runs_b is not None:
        differ("runsPerRung", runs_a, runs_b)
    else:
        for j, (ra, rb) in enumerate(zip(rungs_a, rungs_b, strict=False)):
            differ(f"rungs.{j + 1}.runs", ra.get("runs"), rb.get("runs"))
    gate_a, gate_b = sa.get("gate") or {}, sb.get("gate") or {}
    for key in GATE_KEYS:
        differ(f"gate.{key}", gate_a.get(key), gate_b.get(key))
    for key in ("retryCount", "outerAxis", "runsInFlightLimit"):
        differ(key, sa.get(key), sb.get(key))
    keys_a = [c["key"] for c in a.climbers]
    keys_b = [c["key"] for c in b.climbers]
    only_a, only_b = set(keys_a) - set(keys_b), set(keys_b) - set(keys_a)
    if only_a or only_b:
        differs.append(
            {
                "what": "climbers",
                "a": [k for k in keys_a if k in only_a],
                "b": [k for k in keys_b if k in only_b],
            }
        )
    return differs


def _fewest(record: DispatchRecord) -> int | None:
    return min((r.get("runs") or 1 for r in record.snapshot.get("rungs", [])), default=None)


def summary(
    a: DispatchRecord,
    b: DispatchRecord,
    alpha: float,
    flipped: dict,
    change: float = stats.CHANGE,
) -> dict:
    """The compare's top-level ``significance``: the test, McNemar's exact test over the
    flipped slots (``{up, down}``, summed from ``walk``), and the runs per rung a change of
    ``change`` in a rung's pass rate needs."""
    return {
        "alpha": alpha,
        "test": TEST,
        "correction": CORRECTION,
        "flips": flipped,
        "pValue": stats.mcnemar(flipped["up"], flipped["down"]),
        "power": {
            "change": change,
            "alpha": alpha,
            "power": stats.POWER,
            "runsPerRung": stats.runs_per_rung_needed(change, alpha=alpha),
            "fewestRunsPerRung": {"a": _fewest(a), "b": _fewest(b)},
        },
    }
