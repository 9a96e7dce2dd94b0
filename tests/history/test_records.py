"""Every ended dispatch leaves a read-only record: finished, stopped, or stopped and cancelled,
written once from its frozen final standing (by a task the ending queues, or at once when a new
Run replaces it or the history is read first); a new Run never changes an earlier record."""

import pytest

from ladders import services
from ladders.models import Ladder
from loopweb.history.models import DispatchRecord
from loopweb.history.tasks import record_dispatch
from tests.factories import UserFactory
from tests.history.helpers import PAID, PAID_BROKEN, history, record
from tests.ladders.builders import climbers, config, make_ladder, rung, versions, work


def test_a_finished_dispatch_leaves_a_record_of_each_climbers_height_and_each_slot(
    owner, owner_api, driver, run_tasks
):
    ladder = make_ladder(owner, versions(3), climbers(2))
    dispatch = services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, lambda job: PAID_BROKEN if job.combination.model == "m2" else PAID)

    [row] = history(owner_api, ladder)["results"]
    assert row["dispatch"] == dispatch.dispatch_id
    assert row["status"] == "finished"
    assert (row["startedBy"], row["stoppedBy"]) == ("olive", None)
    assert row["slotCounts"] == {
        "running": 0,
        "blocked": 0,
        "passed": 3,
        "failed": 1,
        "pending": 0,
        "skipped": 2,
    }
    assert [(c["key"], c["reached"], c["status"]) for c in row["climbers"]] == [
        ("aider|m1|acme", 3, "completed"),
        ("aider|m2|acme", 0, "failed"),
    ]
    assert row["configuration"] and row["endedAt"] and row["startedAt"]

    one = record(owner_api, ladder, row["id"])
    assert [r["number"] for r in one["rungs"]] == [1, 2, 3]
    first, second = one["climbers"]
    assert [s["verdict"] for s in first["slots"]] == ["passed", "passed", "passed"]
    assert [(s["status"], s["verdict"]) for s in second["slots"]] == [
        ("failed", "failed"),
        ("skipped", None),
        ("skipped", None),
    ]
    assert second["slots"][0]["tally"] == {
        "counted": 1,
        "rated": 1,
        "unrated": 0,
        "passing": 0,
        "pending": 0,
        "inFlight": 0,
        "required": 1,
    }
    assert second["slots"][1]["tally"] is None  # never reached
    assert first["totals"]["usdMicros"] == 3000 and second["totals"]["usdMicros"] == 700


def test_a_stop_records_who_stopped_it_and_what_it_cancelled(owner, owner_api, staff):
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, cancel_running=True, by=staff)
    [row] = history(owner_api, ladder)["results"]
    assert (row["status"], row["startedBy"], row["stoppedBy"]) == ("stopped", "olive", "stella")
    assert (row["cancelRunning"], row["cancelled"]) == (True, 2)
    assert row["slotCounts"]["skipped"] == 4
    assert [c["reached"] for c in row["climbers"]] == [0, 0]


def test_a_record_is_written_once_and_later_runs_never_change_it(
    owner, owner_api, driver, run_tasks
):
    steps = versions(2)
    ladder = make_ladder(owner, steps, climbers(2))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    [first] = history(owner_api, ladder)["results"]
    before = record(owner_api, ladder, first["id"])

    # Edit the configuration (a third rung), Run again, push more runs, stop.
    data = config(
        rungs=[*(rung(v) for v in steps), rung(versions(1, prefix="top")[0])],
        combinations=[c.pk for c in climbers(1, prefix="n")],
    )
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID_BROKEN)
    rows = history(owner_api, ladder)["results"]
    assert [r["id"] for r in rows][1] == first["id"]  # newest first
    assert record(owner_api, ladder, first["id"]) == before
    assert rows[0]["configuration"] != first["configuration"]


def a_stopped_dispatchs_record(owner, run_tasks) -> DispatchRecord:
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)
    run_tasks()
    return DispatchRecord.objects.get(ladder=ladder)


def test_a_record_cannot_be_saved_again(owner, run_tasks):
    kept = a_stopped_dispatchs_record(owner, run_tasks)
    kept.configuration = "changed"
    try:
        kept.save()
    except ValueError:
        pass
    else:
        raise AssertionError("a record was saved twice")
    assert DispatchRecord.objects.get(pk=kept.pk).configuration != "changed"


def test_a_record_reads_back_exactly_what_was_written(owner, run_tasks):
    # Its documents are read by orjson where it reads them as json does: not an integer past
    # 64 bits (orjson's would be a float), nor what is read inside them in a query.
    kept = a_stopped_dispatchs_record(owner, run_tasks)
    totals = {**kept.totals, "usdMicros": 2**70 + 1, "label": "été “quoted”"}
    DispatchRecord.objects.filter(pk=kept.pk).update(totals=totals)
    again = DispatchRecord.objects.get(pk=kept.pk)
    assert again.totals == totals and type(again.totals["usdMicros"]) is int
    for name in ("slots", "climbers", "snapshot"):
        assert getattr(again, name) == getattr(kept, name)
    inside = DispatchRecord.objects.filter(pk=kept.pk).values_list("totals__label", flat=True)
    assert list(inside) == ["été “quoted”"]


def test_the_history_is_paginated_newest_first(owner, owner_api):
    ladder = make_ladder(owner, versions(1), climbers(1))
    for _ in range(3):
        services.start_dispatch(ladder=ladder, by=owner)
        services.stop_dispatch(ladder=ladder, by=owner)
    body = history(owner_api, ladder, pageSize=2)
    assert body["count"] == 3 and len(body["results"]) == 2 and body["next"]
    ids = [r["id"] for r in body["results"]]
    assert ids == sorted(ids, reverse=True)


def test_deleting_the_ladder_deletes_its_records(owner, run_tasks):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)
    run_tasks()
    assert DispatchRecord.objects.filter(ladder=ladder).exists()
    services.delete_ladder(ladder=ladder)
    assert not DispatchRecord.objects.exists()


def test_records_are_read_by_the_owner_and_reviewers_and_hidden_from_others(
    owner, reviewer, reviewer_api, outsider_api, anon_api
):
    ladder = make_ladder(owner, versions(1), climbers(1), reviewers=[reviewer.pk])
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)
    [row] = history(reviewer_api, ladder)["results"]
    base = f"/api/ladders/{ladder.pk}"
    for url in (
        f"{base}/history",
        f"{base}/history/{row['id']}",
        f"{base}/compare?a=current&b={row['id']}",
    ):
        assert outsider_api.get(url).status_code == 404
        assert anon_api.get(url).status_code in (401, 403)
    assert reviewer_api.get(f"{base}/history/{row['id'] + 1000}").status_code == 404
    assert reviewer_api.get(f"{base}/history/99999999999999999999").status_code == 404


def test_a_deleted_account_keeps_its_name_on_the_record(owner_api, owner):
    someone = UserFactory(username="sam", role="owner")
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=someone)
    services.stop_dispatch(ladder=ladder, by=owner)
    someone.delete()
    [row] = history(owner_api, ladder)["results"]
    assert row["startedBy"] == "sam"


def test_ending_a_dispatch_queues_its_record_and_the_task_writes_it_once(owner, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, cancel_running=True, by=owner)
    # The transaction that ended it wrote no record (it reads every run the dispatch paid for).
    assert not DispatchRecord.objects.filter(ladder=ladder).exists()
    run_tasks()
    kept = DispatchRecord.objects.get(ladder=ladder)
    assert (kept.status, kept.cancel_running, kept.cancelled) == ("stopped", True, 2)
    assert record_dispatch.call(kept.dispatch_id) is True  # already written: read back, not again
    assert DispatchRecord.objects.filter(ladder=ladder).count() == 1


def test_a_new_run_writes_the_record_its_task_has_not_written_yet(owner, owner_api):
    ladder = make_ladder(owner, versions(1), climbers(1))
    first = services.start_dispatch(ladder=ladder, by=owner).dispatch_id
    services.stop_dispatch(ladder=ladder, by=owner)
    services.start_dispatch(ladder=ladder, by=owner)  # before any worker ran the task
    kept = DispatchRecord.objects.get(ladder=ladder)
    assert (kept.dispatch_id, kept.status, kept.stopped_by_name) == (first, "stopped", "olive")


def test_the_history_read_right_after_a_stop_shows_it(owner, owner_api):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)
    [row] = history(owner_api, ladder)["results"]  # no worker has run yet
    assert row["status"] == "stopped" and isinstance(row["id"], int)


def test_the_recover_chore_writes_a_record_a_failed_task_left_unwritten(owner):
    from django_tasks_db.models import DBTaskResult

    from loopweb.ops import chores

    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)
    DBTaskResult.objects.filter(task_path=record_dispatch.module_path).delete()  # lost
    assert "wrote 1 dispatch record(s)" in chores.recover()
    [kept] = DispatchRecord.objects.filter(ladder=ladder)
    assert kept.status == "stopped"
    assert "wrote 0 dispatch record(s)" in chores.recover()


def test_a_record_that_cannot_be_written_is_an_error_not_a_record_written_already(
    owner, monkeypatch
):
    from django.db import IntegrityError

    from loopweb.history import records

    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)

    def refused(self, *args, **kwargs):
        raise IntegrityError("null value in column")

    monkeypatch.setattr(DispatchRecord, "save", refused)
    dispatch = Ladder.objects.get(pk=ladder.pk).dispatch
    with pytest.raises(IntegrityError):
        records.keep(dispatch)
