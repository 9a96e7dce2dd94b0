"""The standing, a record and a compare as CSV, with the column names ``docs/exports.md``
fixes. One row per rung slot for a standing, one per climber for a compare. Pure."""

import csv
import io

from loopweb import stats
from loopweb.history import costs
from loopweb.history.models import DispatchRecord
from loopweb.history.records import TALLY, VERDICTS

#: ``costs.NAMES`` as CSV column names.
COST_COLUMNS = ("usd_micros", "input_tokens", "output_tokens", "wall_ms", "not_reported", "runs")
TALLY_COLUMNS = ("counted", "rated", "unrated", "passing", "pending", "in_flight", "required")
STANDING_COLUMNS = (
    "record_id",
    "dispatch_id",
    "dispatch_status",
    "climber_key",
    "climber_label",
    "climber_status",
    "blocked_reason",
    "reached",
    "rung_number",
    "rung_id",
    "case",
    "version",
    "variant",
    "engine",
    "slot_status",
    "verdict",
    *TALLY_COLUMNS,
    *COST_COLUMNS,
    # The slot's 95 % Wilson interval of passing of counted runs (docs/statistics.md).
    "pass_rate_low",
    "pass_rate_high",
)
COMPARE_COLUMNS = (
    "climber_key",
    "climber_label",
    "a_reached",
    "a_status",
    "b_reached",
    "b_status",
    "change",
    *(f"a_{c}" for c in COST_COLUMNS),
    *(f"b_{c}" for c in COST_COLUMNS),
    *(f"difference_{c}" for c in COST_COLUMNS),
    "flipped",
    # API.md "Significance": the climber's verdict, its p-values, and its evidence as
    # ``rung:passed/counted>passed/counted`` separated by spaces.
    "verdict",
    "p_value",
    "adjusted_p",
    "evidence",
)


#: How a cell a spreadsheet would run as a formula begins (OWASP's list for CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_text(value):
    """A text value that begins as a formula does, with a leading apostrophe: a spreadsheet
    opening the export shows it as text and runs nothing. Numbers (negative ones too) and other
    text are as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return f"'{value}"
    return value


def _text(rows, columns) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if value is None else as_text(value) for value in row])
    return out.getvalue()


class _Lines:
    """CSV lines as ``csv.writer`` writes them, of one row's fields at a time."""

    def __init__(self):
        self.out = io.StringIO()
        self.writer = csv.writer(self.out, lineterminator="")

    def __call__(self, fields) -> str:
        self.out.seek(0)
        self.out.truncate()
        self.writer.writerow([as_text(value) for value in fields])
        return self.out.getvalue()


#: Values ``csv.writer`` writes as ``str`` gives them, never quoted.
_NUMBERS = frozenset((int, float, bool))


def standing_csv(record: DispatchRecord | None) -> str:
    """A record (or the live standing, ``record_id`` empty) as one row per rung slot; a ladder
    never run is the header alone. An empty tally or cost cell: the slot was never reached, or
    its cell had no run.

    A record of 200 climbers by 50 rungs is 10,000 rows of 35 fields: each climber's fields and
    each rung's are written once, and a slot's numbers joined as ``csv.writer`` would write them
    (anything but numbers goes through it), so the text is the writer's at a third of its cost.
    """
    line = _Lines()
    text = [line(STANDING_COLUMNS), "\r\n"]
    if record is None:
        return "".join(text)
    no_tally, no_totals = "," * (len(TALLY) - 1), "," * (len(costs.NAMES) - 1)
    counted_at, passing_at = TALLY.index("counted"), TALLY.index("passing")
    intervals: dict[tuple[int, int], str] = {(0, 0): ","}  # (passing, counted): its two fields

    def interval(tally) -> str:
        if not tally:
            return ","
        key = (tally[passing_at], tally[counted_at])
        text = intervals.get(key)
        if text is None:
            rate = stats.shared_pass_rate(*key)
            text = intervals[key] = f"{rate['low']},{rate['high']}" if rate else ","
        return text

    def numbers(values, empty: str) -> str:
        if not values:
            return empty
        if _NUMBERS.issuperset(map(type, values)):
            return ",".join(map(str, values))
        return line(values)

    head = [record.pk, record.dispatch_id, record.status]
    rungs = [
        line([n, r["id"], r["case"], r["version"], r["variant"], r.get("engine") or ""])
        for n, r in enumerate(record.snapshot["rungs"], start=1)
    ]
    judged: dict[str, str] = {}  # a slot status, and its status and verdict fields
    for climber, slots in zip(record.climbers, record.slots, strict=True):
        who = line(
            [
                *head,
                climber["key"],
                climber["label"],
                climber["status"],
                climber.get("blockedReason") or "",
                climber["reached"],
            ]
        )
        for rung, (status, tally, totals) in zip(rungs, slots, strict=True):
            verdict = judged.get(status)
            if verdict is None:
                verdict = judged[status] = line([status, status if status in VERDICTS else ""])
            tallied, paid = numbers(tally, no_tally), numbers(totals, no_totals)
            text.append(f"{who},{rung},{verdict},{tallied},{paid},{interval(tally)}\r\n")
    return "".join(text)


def _totals(totals: dict | None) -> list:
    return [None if totals is None else totals[name] for name in costs.NAMES]


def _evidence(row: dict) -> str:
    a, b = row["a"], row["b"]
    return f"{row['rung']}:{a['passed']}/{a['counted']}>{b['passed']}/{b['counted']}"


def compare_csv(result: dict) -> str:
    """A compare as one row per climber; ``flipped`` lists its flipped slots as
    ``rungId:a>b`` separated by spaces."""
    flips: dict[str, list[str]] = {}
    for flip in result["flipped"]:
        flips.setdefault(flip["climber"], []).append(f"{flip['rung']}:{flip['a']}>{flip['b']}")
    rows = []
    for c in result["climbers"]:
        a, b, totals = c["a"] or {}, c["b"] or {}, c["totals"]
        rows.append(
            [
                c["key"],
                c["label"],
                a.get("reached"),
                a.get("status"),
                b.get("reached"),
                b.get("status"),
                c["change"],
                *_totals(totals["a"]),
                *_totals(totals["b"]),
                *_totals(totals["difference"]),
                " ".join(flips.get(c["key"], [])),
                c["significance"]["verdict"],
                c["significance"]["pValue"],
                c["significance"]["adjustedP"],
                " ".join(_evidence(e) for e in c["evidence"]),
            ]
        )
    return _text(rows, COMPARE_COLUMNS)
