"""Two standings side by side: each climber's height in both, which way it moved, the slots
whose verdict flipped, and what each cost. Pure."""

from loopweb import stats
from loopweb.history import costs, significance
from loopweb.history.models import DispatchRecord
from loopweb.history.records import VERDICTS, head_json

UP, DOWN, SAME, NEW, GONE = "up", "down", "same", "new", "gone"
CHANGES = (UP, DOWN, SAME, NEW, GONE)


def change(a: dict | None, b: dict | None) -> str:
    if a is None:
        return NEW
    if b is None:
        return GONE
    if b["reached"] > a["reached"]:
        return UP
    if b["reached"] < a["reached"]:
        return DOWN
    return SAME


def _side(climber: dict | None) -> dict | None:
    return None if climber is None else {"reached": climber["reached"], "status": climber["status"]}


def _pins(record: DispatchRecord):
    """Each rung's pin, with how many times the pin came before it."""
    seen: dict[tuple, int] = {}
    for r in record.snapshot["rungs"]:
        pin = (r["case"], r["version"], r["variant"], r.get("engine"))
        seen[pin] = seen.get(pin, -1) + 1
        yield (*pin, seen[pin])


def compare(
    a: DispatchRecord,
    b: DispatchRecord,
    alpha: float = stats.ALPHA,
    planned: float = stats.CHANGE,
) -> dict:
    """``b`` against ``a``: up means ``b`` climbed higher, ``significance`` how sure that is at
    ``alpha`` (``significance.judge``), its power hint for a change of ``planned`` in a rung's pass
    rate. Climbers in ``b``'s order, then those only ``a`` had. A slot flipped when both decided
    its rung (passed one way, failed the other); one decided in one record only (skipped or
    pending in the other) is listed apart. Rungs are matched by their pin (an edit that re-adds a
    rung mints a new id for the same pin), the k-th of a pin named twice with the k-th."""
    in_a = {c["key"]: i for i, c in enumerate(a.climbers)}
    in_b = {c["key"]: i for i, c in enumerate(b.climbers)}
    keys = [c["key"] for c in b.climbers] + [c["key"] for c in a.climbers if c["key"] not in in_b]
    rungs = _matched_rungs(a, b)
    climbers, flipped, apart = [], [], []
    flips = {"up": 0, "down": 0}  # slots decided in both whose verdict changed (by position)
    for key in keys:
        ia, ib = in_a.get(key), in_b.get(key)
        ca = a.climbers[ia] if ia is not None else None
        cb = b.climbers[ib] if ib is not None else None
        row = _climber_row(key, ca, cb)
        evidence, up, down = significance.walk(
            a.slots[ia] if ia is not None else None, b.slots[ib] if ib is not None else None
        )
        row["evidence"] = evidence
        flips["up"] += up
        flips["down"] += down
        climbers.append(row)
        if ia is not None and ib is not None:
            for slot in _slots_decided_apart(row, a.slots[ia], b.slots[ib], rungs, b):
                # A flip is a verdict changed; a slot decided in one record only is apart.
                both = slot["a"] in VERDICTS and slot["b"] in VERDICTS
                (flipped if both else apart).append(slot)
    significance.judge(climbers, alpha)
    return {
        "a": head_json(a),
        "b": head_json(b),
        "climbers": climbers,
        "flipped": flipped,
        "decidedInOne": apart,
        "changes": {kind: sum(c["change"] == kind for c in climbers) for kind in CHANGES},
        "verdicts": {
            kind: sum(c["significance"]["verdict"] == kind for c in climbers)
            for kind in significance.VERDICTS
        },
        "significance": significance.summary(a, b, alpha, flips, planned),
        "configurationDiffers": significance.configuration_differs(a, b),
        "totals": {
            "a": a.totals,
            "b": b.totals,
            "difference": costs.difference(a.totals, b.totals),
        },
    }


def _matched_rungs(a: DispatchRecord, b: DispatchRecord) -> list[tuple[int, int]]:
    """(rung of ``b``, the rung of ``a`` with the same pin) for each rung both ran."""
    in_a = {pin: j for j, pin in enumerate(_pins(a))}
    return [(jb, in_a[pin]) for jb, pin in enumerate(_pins(b)) if pin in in_a]


def _climber_row(key: str, ca: dict | None, cb: dict | None) -> dict:
    """A climber of either record, as the compare lists it (its evidence added after)."""
    shown = cb if cb is not None else ca
    assert shown is not None, "a climber compared is in one record at least"
    ta, tb = (ca or {}).get("totals"), (cb or {}).get("totals")
    return {
        "key": key,
        "label": shown["label"],
        "a": _side(ca),
        "b": _side(cb),
        "change": change(ca, cb),
        "totals": {"a": ta, "b": tb, "difference": costs.difference(ta, tb)},
    }


def _slots_decided_apart(
    row: dict, slots_a: list, slots_b: list, rungs: list[tuple[int, int]], b: DispatchRecord
):
    """The climber's slots of matched rungs whose status differs with a verdict on one side."""
    for jb, ja in rungs:
        sa, sb = slots_a[ja][0], slots_b[jb][0]
        if sa == sb or (sa not in VERDICTS and sb not in VERDICTS):
            continue
        yield {
            "climber": row["key"],
            "label": row["label"],
            "rung": b.snapshot["rungs"][jb]["id"],
            "rungNumber": jb + 1,
            "a": sa,
            "b": sb,
        }
