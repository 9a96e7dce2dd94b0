"""The standing, a record and a compare as CSV, with the column names ``docs/exports.md``
fixes. One row per rung slot for a standing, one per climber for a compare. Pure."""

import csv
import io

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
)


def _text(rows, columns) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    return out.getvalue()


def standing_csv(record: DispatchRecord | None) -> str:
    """A record (or the live standing, ``record_id`` empty) as one row per rung slot; a ladder
    never run is the header alone. An empty tally or cost cell: the slot was never reached, or
    its cell had no run."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(STANDING_COLUMNS)
    if record is None:
        return out.getvalue()
    no_tally, no_totals = [""] * len(TALLY), [""] * len(costs.NAMES)
    head = [record.pk, record.dispatch_id, record.status]
    rungs = [
        [n, r["id"], r["case"], r["version"], r["variant"], r.get("engine") or ""]
        for n, r in enumerate(record.snapshot["rungs"], start=1)
    ]
    for climber, slots in zip(record.climbers, record.slots, strict=True):
        who = [
            *head,
            climber["key"],
            climber["label"],
            climber["status"],
            climber.get("blockedReason") or "",
            climber["reached"],
        ]
        writer.writerows(
            [
                *who,
                *rung,
                status,
                status if status in VERDICTS else "",
                *(tally or no_tally),
                *(totals or no_totals),
            ]
            for rung, (status, tally, totals) in zip(rungs, slots, strict=True)
        )
    return out.getvalue()


def _totals(totals: dict | None) -> list:
    return [None if totals is None else totals[name] for name in costs.NAMES]


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
            ]
        )
    return _text(rows, COMPARE_COLUMNS)
