"""An ended dispatch's standing is stored once, as one document with a ``schemaVersion``: the
ladder's final standing, which progress reads while the dispatch is the latest and which its
record reads for good (a new Run keeps it); the record adds only what is the history's own, what
the runs cost. Records and standings written before the document read as they did."""

import datetime as dt

import pytest
from django.db import connection

from ladders import document, services
from ladders.models import FinalStanding
from loopweb.history import records
from loopweb.history.models import DispatchRecord
from loopweb.history.tasks import record_dispatch
from tests.history.helpers import PAID, history, record
from tests.ladders.builders import climbers, make_ladder, progress_of, versions, work
from tests.migrating import migrate_to, migrate_to_latest

STANDING_COLUMNS = {"status", "snapshot", "slot_counts", "runs", "climbers", "slots"}


def columns(table: str) -> set[str]:
    with connection.cursor() as cursor:
        return {c.name for c in connection.introspection.get_table_description(cursor, table)}


def ended(owner, driver, run_tasks, n_climbers=2):
    ladder = make_ladder(owner, versions(2), climbers(n_climbers))
    dispatch = services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID, rounds=1)
    services.stop_dispatch(ladder=ladder, by=owner)
    record_dispatch.call(dispatch.dispatch_id)
    return ladder, dispatch


@pytest.mark.django_db
def test_an_ended_dispatchs_standing_lives_in_one_row(owner, driver, run_tasks):
    ladder, dispatch = ended(owner, driver, run_tasks)

    [standing] = FinalStanding.objects.all()
    [kept] = DispatchRecord.objects.all()
    assert kept.standing_id == standing.pk
    assert standing.dispatch_id == dispatch.pk
    assert not STANDING_COLUMNS & columns(DispatchRecord._meta.db_table)


@pytest.mark.django_db
def test_the_document_carries_its_schema_version(owner, owner_api, driver, run_tasks):
    ladder, _ = ended(owner, driver, run_tasks)

    [standing] = FinalStanding.objects.all()
    assert standing.as_document()["schemaVersion"] == document.SCHEMA_VERSION == 2
    [row] = history(owner_api, ladder)["results"]
    assert row["schemaVersion"] == 2
    assert record(owner_api, ladder, row["id"])["schemaVersion"] == 2


@pytest.mark.django_db(transaction=True)
def test_live_progress_carries_the_documents_schema_version(owner, owner_api, driver, run_tasks):
    """Progress read live (before a Run, while running, as a delta, once ended) carries the
    ``schemaVersion`` of the ended standing's document, and its schema says so."""
    ladder = make_ladder(owner, versions(2), climbers(2))
    url = f"/api/ladders/{ladder.pk}/progress"
    assert owner_api.get(url).json()["schemaVersion"] == document.SCHEMA_VERSION
    services.start_dispatch(ladder=ladder, by=owner)
    running = owner_api.get(url)
    assert running.json()["schemaVersion"] == document.SCHEMA_VERSION
    since = owner_api.get(url, {"since": running["ETag"].strip('"')}).json()
    assert since["schemaVersion"] == document.SCHEMA_VERSION
    work(driver, run_tasks, PAID, rounds=1)
    services.stop_dispatch(ladder=ladder, by=owner)
    shown = owner_api.get(url).json()
    assert shown["schemaVersion"] == FinalStanding.objects.get().schema_version
    assert progress_of(ladder)["schemaVersion"] == document.SCHEMA_VERSION

    schema = owner_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    answer = schema["paths"]["/api/ladders/{id}/progress"]["get"]["responses"]["200"]
    body = answer["content"]["application/json"]["schema"]
    assert body["properties"]["schemaVersion"]["const"] == document.SCHEMA_VERSION


@pytest.mark.django_db
def test_a_new_run_keeps_the_standing_its_record_reads(owner, owner_api, driver, run_tasks):
    ladder, dispatch = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    before = record(owner_api, ladder, row["id"])

    services.start_dispatch(ladder=ladder, by=owner)

    standing = FinalStanding.objects.get()
    assert standing.dispatch_id is None  # the ladder's dispatch row is the new dispatch's now
    assert standing.dispatch_key == dispatch.dispatch_id
    assert record(owner_api, ladder, row["id"]) == before
    assert progress_of(ladder)["dispatch"]["status"] == "running"


@pytest.mark.django_db
def test_progress_the_record_and_the_document_show_one_standing(
    owner, owner_api, driver, run_tasks
):
    ladder, _ = ended(owner, driver, run_tasks)
    shown = progress_of(ladder)
    [row] = history(owner_api, ladder)["results"]
    one = record(owner_api, ladder, row["id"])
    whole = FinalStanding.objects.get().as_document()

    assert [c["key"] for c in whole["climbers"]] == [c["key"] for c in shown["climbers"]]
    for stored, live, recorded in zip(
        whole["climbers"], shown["climbers"], one["climbers"], strict=True
    ):
        assert {k: v for k, v in stored.items() if k in live} == live
        assert (recorded["status"], recorded["reached"]) == (stored["status"], stored["reached"])
        assert [s["status"] for s in recorded["slots"]] == [s["status"] for s in live["slots"]]
    assert one["slotCounts"] == whole["dispatch"]["slotCounts"] == shown["dispatch"]["slotCounts"]


@pytest.mark.django_db
def test_deleting_the_ladder_deletes_its_standings_and_records(owner, driver, run_tasks):
    ladder, _ = ended(owner, driver, run_tasks)
    services.start_dispatch(ladder=ladder, by=owner)
    ladder.delete()
    assert not FinalStanding.objects.exists()
    assert not DispatchRecord.objects.exists()


@pytest.mark.django_db
def test_the_current_side_is_an_unsaved_document_of_the_running_dispatch(owner, driver):
    ladder = make_ladder(owner, versions(2), climbers(2))
    dispatch = services.start_dispatch(ladder=ladder, by=owner)
    now = records.live(dispatch)
    assert now.pk is None and now.standing.pk is None
    assert now.schema_version == 2
    assert [c["status"] for c in now.climbers] == ["running", "running"]
    assert FinalStanding.objects.count() == 0


# Rows written before the document ------------------------------------------------------------

BEFORE = [
    ("ladders", "0012_review_rubric_and_assignment"),
    ("history", "0002_records_read_by_orjson"),
]
AT = dt.datetime(2030, 1, 1, 12, 30, 15, 123456, tzinfo=dt.UTC)
RUNGS = [
    {"id": "r_1", "case": "c", "version": "1", "variant": "default", "engine": None, "runs": 1},
    {"id": "r_2", "case": "c", "version": "2", "variant": "default", "engine": None, "runs": 1},
]
SNAPSHOT = {
    "name": "l",
    "rungs": RUNGS,
    "gate": {"floor": "scuffed"},
    "outerAxis": "rung",
    "runsInFlightLimit": 5,
    "retryCount": 1,
}
TALLY = [1, 1, 0, 1, 0, 0, 1]
TOTALS = [1000, 100, 10, 5000, 0, 1]
CLIMBER_TOTALS = dict(zip(("usdMicros", "inputTokens", "outputTokens", "wallMs", "notReported",
                          "runs"), TOTALS, strict=True))  # fmt: skip


def _slot(rung, status, tally=None):
    keys = ("counted", "rated", "unrated", "passing", "pending", "inFlight", "required")
    return {
        "rung": rung,
        "status": status,
        "cellKey": f"{rung}::aider|m1|acme",
        "tally": dict(zip(keys, tally, strict=True)) if tally else None,
        "passRate": None,
    }


def _old_record(model, ladder, dispatch_id, status="stopped"):
    return model.objects.create(
        ladder_id=ladder.pk,
        dispatch_id=dispatch_id,
        status=status,
        configuration="digest",
        snapshot=SNAPSHOT,
        started_at=AT,
        ended_at=AT,
        started_by_name="olive",
        stopped_by_name="olive",
        cancel_running=False,
        cancelled=1,
        slot_counts={"passed": 1, "skipped": 1},
        runs={"total": 2, "done": 2, "inFlight": 0},
        totals=CLIMBER_TOTALS,
        climbers=[
            {
                "key": "aider|m1|acme",
                "label": "m1 via aider (acme)",
                "status": "running",  # caught by a Stop before climbers could read stopped
                "blockedReason": None,
                "currentRung": "r_2",
                "reached": 1,
                "totals": CLIMBER_TOTALS,
            }
        ],
        slots=[[["passed", TALLY, TOTALS], ["skipped", None, None]]],
    )


@pytest.mark.django_db(transaction=True)
def test_standings_and_records_written_before_the_document_read_as_they_did():
    try:
        old = migrate_to(BEFORE)
        user = old.get_model("auth", "User").objects.create(username="olive")
        ladder = old.get_model("ladders", "Ladder").objects.create(owner_id=user.pk, name="l")
        dispatch = old.get_model("ladders", "Dispatch").objects.create(
            ladder_id=ladder.pk,
            dispatch_id="d_latest",
            status="stopped",
            snapshot=SNAPSHOT,
            started_at=AT,
            ended_at=AT,
        )
        old.get_model("ladders", "FinalStanding").objects.create(
            dispatch_id=dispatch.pk,
            slot_counts={"passed": 1, "skipped": 1},
            climbers=[
                {
                    "body": {
                        "key": "aider|m1|acme",
                        "label": "m1 via aider (acme)",
                        "status": "blocked",
                        "blockedReason": "failing",
                        "problem": None,
                        "attempts": 2,
                        "currentRung": "r_2",
                        "cellKey": "r_2::aider|m1|acme",
                        "tally": None,
                        "slots": [_slot("r_1", "passed", TALLY), _slot("r_2", "skipped")],
                    },
                    "runs": [[7], []],
                    "completed": [[7], []],
                }
            ],
            frozen_at=AT,
            cancel_running=False,
            cancelled=1,
            started_by_name="olive",
            stopped_by_name="olive",
        )
        Record = old.get_model("history", "DispatchRecord")
        replaced = _old_record(Record, ladder, "d_replaced")
        latest = _old_record(Record, ladder, "d_latest")

        migrate_to_latest()

        # The replaced dispatch's record became a standing of its own.
        older = DispatchRecord.objects.select_related("standing").get(pk=replaced.pk)
        assert older.standing.dispatch_id is None
        assert older.schema_version == 2
        detail = records.detail_json(older)
        assert detail["schemaVersion"] == 2
        assert (detail["status"], detail["startedAt"], detail["startedBy"]) == (
            "stopped",
            AT,
            "olive",
        )
        [climber] = detail["climbers"]
        assert (climber["status"], climber["blockedReason"], climber["reached"]) == (
            "stopped",
            None,
            1,
        )
        assert climber["totals"] == CLIMBER_TOTALS
        assert [(s["status"], s["verdict"]) for s in climber["slots"]] == [
            ("passed", "passed"),
            ("skipped", None),
        ]
        assert climber["slots"][0]["tally"]["passing"] == 1
        assert climber["slots"][0]["totals"]["usdMicros"] == 1000
        assert climber["slots"][1]["tally"] is None and climber["slots"][1]["totals"] is None
        assert detail["runs"] == {"total": 2, "done": 2, "inFlight": 0}

        # The latest dispatch's record reads the dispatch's converted standing: one row.
        current = DispatchRecord.objects.select_related("standing").get(pk=latest.pk)
        standing = FinalStanding.objects.get(dispatch_id=dispatch.pk)
        assert current.standing_id == standing.pk
        assert FinalStanding.objects.count() == 2
        [entry] = standing.climbers
        assert entry["runs"] == [[7], []] and entry["skippedByStop"] is None
        assert entry["body"]["status"] == "stopped"
        assert standing.slot_counts == {"passed": 1, "skipped": 1}
        assert (standing.cancelled, standing.started_by_name) == (1, "olive")
        assert records.detail_json(current)["climbers"][0]["slots"][0]["totals"]["runs"] == 1
    finally:
        migrate_to_latest()
