"""The standing, a record and a compare as CSV (``?format=csv`` or ``Accept: text/csv``), with
the columns docs/exports.md names; the CSV parses back to the JSON's values."""

import csv
import io

import pytest

from ladders import document, services
from ladders.models import FinalStanding, Ladder
from loopweb import stats
from loopweb.history import exports, records
from loopweb.history.models import DispatchRecord
from tests.history.helpers import PAID, PAID_BROKEN, compare, history, record
from tests.ladders.builders import (
    climbers,
    config,
    make_ladder,
    stopped_mid_climb,
    versions,
    work,
)


def parsed(response) -> list[dict]:
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def number(text: str):
    return None if text == "" else int(text)


def finished(owner, driver, run_tasks, n_climbers=2):
    ladder = make_ladder(owner, versions(2), climbers(n_climbers))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, lambda job: PAID_BROKEN if job.combination.model == "m2" else PAID)
    return ladder


def test_a_record_as_csv_is_one_row_per_slot_with_the_same_values(
    owner, owner_api, driver, run_tasks
):
    ladder = finished(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    body = record(owner_api, ladder, row["id"])
    rows = parsed(owner_api.get(f"/api/ladders/{ladder.pk}/history/{row['id']}?format=csv"))
    assert list(rows[0]) == list(exports.STANDING_COLUMNS)
    assert len(rows) == 2 * 2
    for line, (climber, slot) in zip(
        rows, [(c, s) for c in body["climbers"] for s in c["slots"]], strict=True
    ):
        rung = next(r for r in body["rungs"] if r["id"] == slot["rung"])
        assert number(line["record_id"]) == body["id"]
        assert line["dispatch_id"] == body["dispatch"]
        assert line["dispatch_status"] == body["status"]
        assert (line["climber_key"], line["climber_label"]) == (climber["key"], climber["label"])
        assert line["climber_status"] == climber["status"]
        assert number(line["reached"]) == climber["reached"]
        assert (number(line["rung_number"]), line["rung_id"]) == (rung["number"], rung["id"])
        assert (line["case"], line["version"], line["variant"]) == (
            rung["case"],
            rung["version"],
            rung["variant"],
        )
        assert line["engine"] == (rung["engine"] or "")
        assert line["slot_status"] == slot["status"]
        assert line["verdict"] == (slot["verdict"] or "")
        tally = {
            k: number(line[c])
            for k, c in zip(
                ("counted", "rated", "unrated", "passing", "pending", "inFlight", "required"),
                exports.TALLY_COLUMNS,
                strict=True,
            )
        }
        assert tally == (slot["tally"] or dict.fromkeys(tally))
        totals = {
            k: number(line[c])
            for k, c in zip(
                ("usdMicros", "inputTokens", "outputTokens", "wallMs", "notReported", "runs"),
                exports.COST_COLUMNS,
                strict=True,
            )
        }
        assert totals == (slot["totals"] or dict.fromkeys(totals))
    # The cost columns add up to the record's totals.
    assert sum(number(r["usd_micros"]) or 0 for r in rows) == body["totals"]["usdMicros"]


def test_the_accept_header_asks_for_csv_too(owner, owner_api, driver, run_tasks):
    ladder = finished(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    url = f"/api/ladders/{ladder.pk}/history/{row['id']}"
    by_accept = owner_api.get(url, HTTP_ACCEPT="text/csv")
    assert by_accept.content == owner_api.get(f"{url}?format=csv").content
    assert by_accept["Content-Disposition"].startswith("attachment")
    assert owner_api.get(url, HTTP_ACCEPT="text/html").status_code == 406


def test_a_compare_as_csv_is_one_row_per_climber_with_the_same_values(
    owner, owner_api, driver, run_tasks
):
    ladder = finished(owner, driver, run_tasks)
    data = config(
        rungs=[
            {
                "case": r.case,
                "version": r.version,
                "variant": r.variant,
                "engine": None,
                "runs": None,
            }
            for r in ladder.rungs.order_by("position")
        ],
        combinations=list(ladder.combinations.values_list("pk", flat=True)),
        runsPerCell=2,
        gate={"threshold": {"count": 2}},
    )
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID_BROKEN)
    newer, older = history(owner_api, ladder)["results"]
    body = compare(owner_api, ladder, older["id"], newer["id"])
    response = owner_api.get(
        f"/api/ladders/{ladder.pk}/compare", {"a": older["id"], "b": newer["id"], "format": "csv"}
    )
    rows = parsed(response)
    assert list(rows[0]) == list(exports.COMPARE_COLUMNS)
    names = ("usdMicros", "inputTokens", "outputTokens", "wallMs", "notReported", "runs")
    for line, climber in zip(rows, body["climbers"], strict=True):
        assert line["climber_key"] == climber["key"]
        assert line["change"] == climber["change"]
        for side in ("a", "b"):
            assert number(line[f"{side}_reached"]) == climber[side]["reached"]
            assert line[f"{side}_status"] == climber[side]["status"]
            assert {
                n: number(line[f"{side}_{c}"])
                for n, c in zip(names, exports.COST_COLUMNS, strict=True)
            } == climber["totals"][side]
        assert {
            n: number(line[f"difference_{c}"])
            for n, c in zip(names, exports.COST_COLUMNS, strict=True)
        } == climber["totals"]["difference"]
        flips = [
            f"{f['rung']}:{f['a']}>{f['b']}"
            for f in body["flipped"]
            if f["climber"] == climber["key"]
        ]
        assert line["flipped"].split() == flips
    assert [c["change"] for c in body["climbers"]] == ["down", "same"]
    # The first climber failed rung 1 it had passed: one flip (rung 2, passed then, not reached
    # now, was decided in one record only).
    assert rows[0]["flipped"].count(">") == 1


def test_the_standing_as_csv_is_the_progress_board_with_its_cost(
    owner, owner_api, driver, run_tasks
):
    ladder = make_ladder(owner, versions(2), climbers(2))
    empty = parsed(owner_api.get(f"/api/ladders/{ladder.pk}/progress?format=csv"))
    assert empty == []  # not run yet: the header alone
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID, rounds=1)
    board = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    rows = parsed(owner_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_ACCEPT="text/csv"))
    assert [(r["climber_key"], r["slot_status"]) for r in rows] == [
        (c["key"], s["status"]) for c in board["climbers"] for s in c["slots"]
    ]
    assert {r["dispatch_status"] for r in rows} == {"running"}
    assert {r["record_id"] for r in rows} == {""}
    assert sum(number(r["usd_micros"]) or 0 for r in rows) == 2 * 1000
    # JSON clients are served as before, ETag and all.
    again = owner_api.get(f"/api/ladders/{ladder.pk}/progress?format=json")
    assert again["ETag"] and again.json()["climbers"] == board["climbers"]


def test_errors_stay_json_when_csv_is_asked_for(owner, owner_api, outsider_api):
    ladder = make_ladder(owner, versions(1), climbers(1))
    response = owner_api.get(f"/api/ladders/{ladder.pk}/compare?a=1&format=csv")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert set(response.json()["errors"]) == {"a", "b"}
    hidden = outsider_api.get(f"/api/ladders/{ladder.pk}/progress?format=csv")
    assert hidden.status_code == 404 and hidden.json()["detail"]


def _as_text(value):
    """docs/exports.md's rule: text beginning as a formula does gets a leading apostrophe."""
    return f"'{value}" if isinstance(value, str) and value.startswith(tuple("=+-@\t\r")) else value


def _interval(tally) -> tuple:
    rate = stats.pass_rate(tally[3], tally[0]) if tally else None
    return (rate["low"], rate["high"]) if rate else ("", "")


def _as_the_writer_writes(record) -> str:
    """The standing as ``csv.writer`` writes each row's fields, one row per slot."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(exports.STANDING_COLUMNS)
    rungs = record.snapshot["rungs"]
    for climber, slots in zip(record.climbers, record.slots, strict=True):
        for n, (rung, (status, tally, totals)) in enumerate(zip(rungs, slots, strict=True), 1):
            fields = [
                record.pk,
                record.dispatch_id,
                record.status,
                climber["key"],
                climber["label"],
                climber["status"],
                climber.get("blockedReason") or "",
                climber["reached"],
                n,
                rung["id"],
                rung["case"],
                rung["version"],
                rung["variant"],
                rung.get("engine") or "",
                status,
                status if status in ("passed", "failed") else "",
                *(tally or [""] * 7),
                *(totals or [""] * 6),
                *_interval(tally),
            ]
            writer.writerow([_as_text(value) for value in fields])
    return out.getvalue()


def _record(*, rungs, climbers, slots):
    """A stopped dispatch's record, unsaved, of these rungs, climbers and slots (per slot
    ``[status, tally as a list, totals as a list]``)."""
    ids = [r["id"] for r in rungs]
    entries = [
        {
            "body": {
                **climber,
                "slots": [
                    {
                        "rung": rung_id,
                        "status": status,
                        "tally": dict(zip(document.TALLY, tally, strict=True)) if tally else None,
                    }
                    for rung_id, (status, tally, _) in zip(ids, row, strict=True)
                ],
            },
            "runs": [],
            "completed": [],
        }
        for climber, row in zip(climbers, slots, strict=True)
    ]
    head, bodies, held = document.compose(
        {"id": "d_1", "status": "stopped", "snapshot": {"rungs": rungs}}, entries
    )
    return DispatchRecord(
        pk=7,
        dispatch_id="d_1",
        standing=FinalStanding(head=head, bodies=bodies, slots=held),
        climber_totals=[None] * len(climbers),
        slot_totals=[[totals for _, _, totals in row] for row in slots],
    )


def test_a_records_csv_is_what_the_csv_writer_writes_whatever_its_values():
    tricky = 'a, "quoted"\nlabel'
    record = _record(
        rungs=[
            {"id": "r1", "case": "c,1", "version": "1", "variant": "default", "engine": None},
            {"id": 'r"2', "case": "c2", "version": "2\n", "variant": "v", "engine": "=e 1"},
        ],
        climbers=[
            {"key": "k1", "label": tricky, "status": "completed", "reached": 2},
            {
                "key": "k,2",
                "label": "@x",
                "status": "blocked",
                "blockedReason": "x, y",
                "reached": 0,
            },
        ],
        slots=[
            [["passed", [1, 0, 1, 1, 0, 0, 1], [10, 2, 3, 4, 0, 1]], ["failed", [2] * 7, None]],
            [["skipped", None, None], ["pending", [1.5, True, None, 0, -1, 2, 3], ["-a,b", 1, 2]]],
        ],
    )
    assert exports.standing_csv(record) == _as_the_writer_writes(record)
    assert exports.standing_csv(None) == "\r\n".join([",".join(exports.STANDING_COLUMNS), ""])


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_text_cell_a_spreadsheet_would_run_as_a_formula_is_written_as_text(start):
    """A label, key or pin that begins as a formula does (``=HYPERLINK(…)``, ``+1``, ``@SUM``)
    is written with a leading apostrophe, so a spreadsheet opening the export shows it and runs
    nothing; numbers, negative ones too, are written as they are."""
    formula = f"{start}HYPERLINK(1)"
    record = _record(
        rungs=[{"id": "r1", "case": formula, "version": "1", "variant": "v", "engine": formula}],
        climbers=[{"key": formula, "label": formula, "status": "completed", "reached": 1}],
        slots=[[["passed", [1, 0, 1, 1, 0, 0, 1], [-10, 2, 3, 4, 0, 1]]]],
    )
    [row] = list(csv.DictReader(io.StringIO(exports.standing_csv(record))))
    for column in ("climber_key", "climber_label", "case", "engine"):
        assert row[column] == f"'{formula}", column
    assert row["usd_micros"] == "-10"

    compare = exports.compare_csv(
        {
            "flipped": [],
            "climbers": [
                {
                    "key": formula,
                    "label": "plain",
                    "a": None,
                    "b": {"reached": 1, "status": "completed"},
                    "change": "new",
                    "totals": {"a": None, "b": None, "difference": None},
                    "significance": {"verdict": "new", "pValue": None, "adjustedP": None},
                    "evidence": [],
                }
            ],
        }
    )
    [line] = list(csv.DictReader(io.StringIO(compare)))
    assert line["climber_key"] == f"'{formula}" and line["climber_label"] == "plain"


def test_a_stopped_dispatchs_record_and_its_csv_say_stopped_for_the_climbers_it_stopped(
    owner, owner_api, driver, run_tasks
):
    """Seed 004, "A stopped dispatch ... its status is Stopped": a climber it stopped mid-climb
    reads stopped in the record and its export, not running or blocked; one that had completed
    or failed keeps its status."""
    ladder = stopped_mid_climb(owner, driver, run_tasks)
    run_tasks()
    [row] = history(owner_api, ladder)["results"]
    assert [c["status"] for c in row["climbers"]] == ["completed", "failed", "stopped", "stopped"]
    body = record(owner_api, ladder, row["id"])
    assert [c["status"] for c in body["climbers"]] == ["completed", "failed", "stopped", "stopped"]
    assert body["runs"]["skippedByStop"] == 2
    rows = parsed(owner_api.get(f"/api/ladders/{ladder.pk}/history/{row['id']}?format=csv"))
    assert [r["climber_status"] for r in rows[::2]] == ["completed", "failed", "stopped", "stopped"]
    assert {r["blocked_reason"] for r in rows} == {""}
    standing = parsed(owner_api.get(f"/api/ladders/{ladder.pk}/progress?format=csv"))
    assert [r["climber_status"] for r in standing[::2]] == [
        "completed",
        "failed",
        "stopped",
        "stopped",
    ]


def test_a_record_stored_before_the_stopped_status_reads_stopped_in_the_api_csv_and_compare():
    """A record of a stopped dispatch written before climbers could read stopped holds them as
    running or blocked: read into the dispatch's document (``document.from_record``, as the
    history's migration to documents reads every older record), they read stopped everywhere."""
    rungs = [{"id": "r1", "case": "c", "version": "1", "variant": "v", "engine": None}]
    old = [
        {"key": f"k{i}", "label": f"K{i}", "status": was, "currentRung": "r1", "reached": 0}
        | ({"blockedReason": "failing"} if was == "blocked" else {"blockedReason": None})
        for i, was in enumerate(["completed", "failed", "running", "blocked"])
    ]
    head, bodies, held = document.from_record(
        {
            "id": "d_1",
            "status": "stopped",
            "snapshot": {"rungs": rungs},
            "startedAt": "2030-01-01T00:00:00+00:00",
            "endedAt": "2030-01-01T00:01:00+00:00",
            "startedBy": None,
            "stoppedBy": None,
            "cancelRunning": False,
            "cancelled": 0,
            "slotCounts": {"skipped": 4},
            "runs": {"total": 4, "done": 4, "inFlight": 0},
        },
        old,
        [[["skipped", None, None]] for _ in old],
        ["r1"],
    )
    kept = DispatchRecord(
        pk=7,
        dispatch_id="d_1",
        standing=FinalStanding(head=head, bodies=bodies, slots=held),
        climber_totals=[None] * 4,
        slot_totals=[[None] for _ in old],
    )
    stopped = ["completed", "failed", "stopped", "stopped"]
    assert [c["status"] for c in records.summary_json(kept)["climbers"]] == stopped
    assert [c["blockedReason"] for c in kept.climbers] == [None] * 4
    rows = list(csv.DictReader(io.StringIO(exports.standing_csv(kept))))
    assert [r["climber_status"] for r in rows] == stopped
