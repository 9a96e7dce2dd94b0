"""Seed 004, "Progress": GET /ladders/{id}/progress, its dispatch block, the runs arithmetic, and
the status words shared with GET /ladders/summary."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from ladders import selectors, services
from ladders.models import DispatchClimber, Ladder
from loopweb.runs import services as run_services
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    config,
    dispatch_of,
    ladder_jobs,
    make_ladder,
    push,
    queued,
    rung,
    versions,
    work,
)
from tests.runs.helpers import hand_job, outside_run
from tests.support.ladders import start

SLOT_STATUSES = {"running", "blocked", "passed", "failed", "pending", "skipped"}


def board(api, ladder) -> dict:
    response = api.get(f"/api/ladders/{ladder.pk}/progress")
    assert response.status_code == 200, response.json()
    return response.json()


def summary_status(api, ladder) -> str:
    rows = api.get("/api/ladders/summary").json()["results"]
    return next(row["status"] for row in rows if row["id"] == ladder.pk)


# What progress reports ------------------------------------------------------------------------


def test_progress_reports_the_configurations_rungs_the_latest_dispatch_and_every_climber(
    owner, owner_api, driver
):
    """ "GET /ladders/{id}/progress reports the configuration's rungs, the latest dispatch, and
    every climber of that dispatch with its status, its blocked reason, its current rung's cell
    and tally, and the status of each of its rung slots." — the rungs as configured now, the
    climbers as the dispatch resolved them."""
    steps = versions(3)
    combos = climbers(2)
    ladder = start(owner, steps[:2], combos)
    [first, _] = claim_all(driver)
    push(driver, first, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    saved = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    edited = config(
        rungs=[*saved["rungs"], rung(steps[2])], combinations=[combos[0].pk], name="edited"
    )
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", edited, format="json").status_code == 200

    body = board(owner_api, ladder)
    assert [r["case"] for r in body["rungs"]] == ["step-1", "step-2", "step-3"]
    dispatch = dispatch_of(ladder)
    assert body["dispatch"]["id"] == dispatch.dispatch_id
    snapshot_rungs = [r["id"] for r in dispatch.snapshot["rungs"]]
    assert [c["key"] for c in body["climbers"]] == [c.key for c in combos]
    moved, waiting = body["climbers"]
    for climber in body["climbers"]:
        assert {
            "key",
            "status",
            "blockedReason",
            "currentRung",
            "cellKey",
            "tally",
            "slots",
        } <= set(climber)
        assert [s["rung"] for s in climber["slots"]] == snapshot_rungs
        assert {s["status"] for s in climber["slots"]} <= SLOT_STATUSES
    assert (moved["status"], moved["blockedReason"]) == ("running", None)
    assert moved["currentRung"] == snapshot_rungs[1]
    assert [s["status"] for s in moved["slots"]] == ["passed", "running"]
    [step_two_job] = [j for j in queued(ladder) if j.combination_id == combos[0].pk]
    assert moved["cellKey"] == step_two_job.cell_key
    assert moved["tally"]["inFlight"] == 1 and moved["tally"]["counted"] == 0
    assert waiting["currentRung"] == snapshot_rungs[0]
    assert [s["status"] for s in waiting["slots"]] == ["running", "pending"]


def test_progress_is_a_read(owner, driver):
    """ "Progress is a read." — reading it writes nothing, decided or not."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo])
    [job] = claim_all(driver)
    push(driver, job, record=PERFECT)  # decided, and not yet recorded by a pass
    passes = dispatch_of(ladder).passes
    fresh = Ladder.objects.get(pk=ladder.pk)
    with CaptureQueriesContext(connection) as ctx:
        selectors.ladder_progress(fresh)
    writes = [
        q["sql"]
        for q in ctx.captured_queries
        if q["sql"].lstrip().split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}
        or "FOR UPDATE" in q["sql"].upper()
    ]
    assert writes == []
    assert dispatch_of(ladder).passes == passes
    assert DispatchClimber.objects.get(dispatch__ladder=ladder).verdicts == {}


def test_verdicts_no_pass_has_written_are_computed_live_and_persisted_by_the_next_pass(
    owner, owner_api, run_tasks
):
    """ "Verdicts the gate has resolved that no launch pass has written down yet are computed live
    and persisted by the next pass." """
    steps = versions(2)
    [combo] = climbers(1)
    ladder = start(owner, steps, [combo])
    run_tasks()
    outside_run(owner, steps[0], combo, record=PERFECT)  # queues a pass; it has not run
    row = DispatchClimber.objects.get(dispatch__ladder=ladder)
    assert row.verdicts == {}
    [climber] = board(owner_api, ladder)["climbers"]
    assert [s["status"] for s in climber["slots"]] == ["passed", "running"]
    row.refresh_from_db()
    assert row.verdicts == {}
    run_tasks()
    row.refresh_from_db()
    assert row.verdicts == {climber["slots"][0]["rung"]: "passed"}


def test_a_dispatch_reports_the_gate_climb_order_limit_and_retry_count_it_snapshotted(
    owner, owner_api
):
    """ "A dispatch reports its status, the gate, the climb order, the runs-in-flight limit and
    the retryCount it snapshotted" — the account's limit when the ladder inherits it, and none of
    the later edits."""
    combos = climbers(1)
    gate = {
        "floor": "great",
        "threshold": {"fraction": 0.5},
        "unloadedCountsAsBroken": False,
        "earlyStop": True,
    }
    ladder = start(owner, versions(1), combos, gate=gate, outerAxis="combination", retryCount=3)
    assert owner.account.runs_in_flight_limit == 20
    saved = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    edited = config(rungs=saved["rungs"], combinations=[combos[0].pk], runsInFlightLimit=2)
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", edited, format="json").status_code == 200

    dispatch = board(owner_api, ladder)["dispatch"]
    assert dispatch["status"] == "running"
    assert dispatch["gate"] == gate
    assert dispatch["outerAxis"] == "combination"
    assert dispatch["runsInFlightLimit"] == 20
    assert dispatch["retryCount"] == 3


def test_a_dispatch_reports_its_rung_slot_counts_in_each_slot_status(owner, owner_api, driver):
    """ "...its rung-slot counts in each slot status" """
    steps = versions(3)
    combos = climbers(3)
    ladder = start(owner, steps, combos, retryCount=0)
    passer, failer, blocked = claim_all(driver)
    push(driver, passer, record=PERFECT)
    push(driver, failer, record=BROKEN)
    run_services.fail_job(job_id=blocked.pk, driver=driver, failure="infrastructure")
    services.run_launch_pass(ladder_id=ladder.pk)
    body = board(owner_api, ladder)
    assert [[s["status"] for s in c["slots"]] for c in body["climbers"]] == [
        ["passed", "running", "pending"],
        ["failed", "skipped", "skipped"],
        ["blocked", "pending", "pending"],
    ]
    assert body["dispatch"]["slotCounts"] == {
        "running": 1,
        "blocked": 1,
        "passed": 1,
        "failed": 1,
        "pending": 3,
        "skipped": 2,
    }


# Runs: total, done, in flight -----------------------------------------------------------------


def test_total_is_the_sum_over_rung_slots_of_the_rungs_target_runs(owner, owner_api):
    """ "total is the sum over rung slots of the rung's target runs" """
    steps = versions(2)
    ladder = start(owner, steps, climbers(2), rungs=[rung(steps[0]), rung(steps[1], runs=3)])
    assert board(owner_api, ladder)["dispatch"]["runs"]["total"] == 2 * (1 + 3)


def test_done_sums_each_slots_runs_by_its_status(owner, owner_api, driver):
    """ "done is the runs that need no more executing, summed per slot" — running and blocked:
    counted; passed, failed and skipped: target - min(launched, target); pending: 0."""
    steps = versions(2)
    early, late = climbers(2)
    ladder = start(
        owner,
        steps,
        [early, late],
        rungs=[rung(steps[0], runs=3), rung(steps[1], runs=2)],
        gate={"earlyStop": True},
    )
    jobs = claim_all(driver)
    a1, a2, _, b1, _, _ = jobs
    run_services.report_status(job_id=a2.pk, driver=driver, status="running")
    push(driver, a1, record=PERFECT)  # early passes rung one; a2 runs on, a3 is cancelled
    push(driver, b1, record=BROKEN)  # late has one run of three on rung one
    services.run_launch_pass(ladder_id=ladder.pk)
    body = board(owner_api, ladder)
    assert [[s["status"] for s in c["slots"]] for c in body["climbers"]] == [
        ["passed", "running"],
        ["running", "pending"],
    ]
    # passed 3 - min(1, 3) = 2; running, none counted: 0; running: 1 counted; pending: 0
    assert body["dispatch"]["runs"] == {
        "total": 10,
        "done": 3,
        "inFlight": 5,
        "skippedByStop": 0,
        "reused": 0,
    }


def test_a_run_that_existed_before_the_dispatch_started_is_done_from_its_first_pass(
    owner, owner_api
):
    """ "counted is the number of the slot's runs, so a run that existed before the dispatch
    started is done from its first pass." """
    [step] = versions(1)
    [combo] = climbers(1)
    outside_run(owner, step, combo, record=BROKEN)
    ladder = start(owner, [step], [combo], runsPerCell=3)
    runs = board(owner_api, ladder)["dispatch"]["runs"]
    assert runs == {"total": 3, "done": 1, "inFlight": 2, "skippedByStop": 0, "reused": 1}


def test_launched_is_the_dispatchs_own_jobs_in_flight_for_the_slot(owner, owner_api):
    """ "launched is the jobs the dispatch launched for the slot that are still in flight." — a
    decided slot with someone else's job in flight is done in full."""
    [step] = versions(1)
    [combo] = climbers(1)
    hand_job(owner, step, combo)
    ladder = start(owner, [step], [combo], runsPerCell=2, gate={"earlyStop": True})
    assert len(queued(ladder)) == 1
    outside_run(owner, step, combo, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)  # passes early, cancels its own queued job
    body = board(owner_api, ladder)
    assert body["climbers"][0]["slots"][0]["status"] == "passed"
    assert body["dispatch"]["runs"] == {
        "total": 2,
        "done": 2,
        "inFlight": 0,
        "skippedByStop": 0,
        "reused": 0,
    }


def test_a_decided_or_skipped_slot_is_done_in_full_once_its_jobs_finish(
    owner, owner_api, driver, run_tasks
):
    """ "A decided or skipped slot needs no more runs, so its whole target is done once those
    finish." — here, slots a plain Stop skipped while one of their jobs ran on."""
    ladder = start(owner, versions(2), climbers(2), runsPerCell=2)
    run_tasks()
    first, *_ = claim_all(driver)
    run_services.report_status(job_id=first.pk, driver=driver, status="running")
    assert owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json").json() == {
        "cancelled": 3
    }
    body = board(owner_api, ladder)
    assert body["dispatch"]["slotCounts"]["skipped"] == 4
    # Of done, 7 runs the Stop left unrun: the job it let run on holds the eighth's place.
    stopped = {"total": 8, "done": 7, "inFlight": 1, "skippedByStop": 7, "reused": 0}
    assert body["dispatch"]["runs"] == stopped
    push(driver, first, record=PERFECT)
    # Once it finishes its slot is done in full; the runs the Stop left unrun stay 7.
    assert board(owner_api, ladder)["dispatch"]["runs"] == {**stopped, "done": 8, "inFlight": 0}


def test_in_flight_is_the_jobs_the_dispatch_launched_that_are_still_in_flight(owner, owner_api):
    """ "in flight is the jobs the dispatch launched that are still in flight." — not a hand
    launch of one of its cells."""
    [step] = versions(1)
    combos = climbers(2)
    ladder = start(owner, [step], combos, runsPerCell=2)
    hand_job(owner, step, combos[0])
    assert board(owner_api, ladder)["dispatch"]["runs"]["inFlight"] == 4
    assert len(ladder_jobs(ladder)) == 4


def test_when_done_equals_total_nothing_is_left_to_execute(owner, owner_api, driver, run_tasks):
    """ "When done equals total, nothing is left to execute in the dispatch." """
    ladder = start(owner, versions(3), climbers(2), runsPerCell=2)
    seen = []

    def record(job):
        runs = board(owner_api, ladder)["dispatch"]["runs"]
        seen.append(runs["done"] < runs["total"])
        return BROKEN if job.case == "step-2" else PERFECT

    work(driver, run_tasks, record)
    assert all(seen)
    body = board(owner_api, ladder)
    assert body["dispatch"]["status"] == "finished"
    assert body["dispatch"]["runs"] == {
        "total": 12,
        "done": 12,
        "inFlight": 0,
        "skippedByStop": 0,
        "reused": 0,
    }
    assert queued(ladder) == []


# Status words ---------------------------------------------------------------------------------


def test_a_ladder_with_no_dispatch_reports_not_run_yet(owner, owner_api):
    """ "A ladder with no dispatch reports its status as Not run yet." """
    ladder = make_ladder(owner, versions(1), climbers(1))
    body = board(owner_api, ladder)
    assert body["ladder"]["status"] == "notRunYet"
    assert body["dispatch"] is None
    assert body["climbers"] == []
    assert [r["case"] for r in body["rungs"]] == ["step-1"]
    assert summary_status(owner_api, ladder) == "notRunYet"


def needs_attention(owner, driver, run_tasks):
    ladder = start(owner, versions(1), climbers(1), retryCount=0)
    work(driver, run_tasks, "infrastructure")
    return ladder


def running(owner, driver, run_tasks):
    return start(owner, versions(1), climbers(1))


def finished(owner, driver, run_tasks):
    ladder = start(owner, versions(1), climbers(1))
    work(driver, run_tasks, PERFECT)
    return ladder


def stopped(owner, driver, run_tasks):
    ladder = start(owner, versions(1), climbers(1))
    services.stop_dispatch(ladder=ladder)
    return ladder


@pytest.mark.parametrize(
    ("scenario", "word"),
    [
        (running, "running"),
        (needs_attention, "needsAttention"),
        (finished, "finished"),
        (stopped, "stopped"),
    ],
)
def test_a_dispatchs_status_carries_the_same_word_on_the_progress_board_and_the_summary(
    owner, owner_api, driver, run_tasks, scenario, word
):
    """ "The ladder's status is one of Not run yet, Running, Needs attention, Finished, or
    Stopped. A dispatch's status carries the last four as running, needsAttention, finished, and
    stopped, on the progress board and on GET /ladders/summary alike." """
    ladder = scenario(owner, driver, run_tasks)
    body = board(owner_api, ladder)
    assert body["ladder"]["status"] == word
    assert body["dispatch"]["status"] == word
    assert summary_status(owner_api, ladder) == word


def test_progress_is_the_owners_and_its_reviewers_and_an_outsider_gets_404(
    owner, reviewer, owner_api, reviewer_api, outsider_api
):
    ladder = start(owner, versions(1), climbers(1), reviewers=[reviewer.pk])
    assert board(reviewer_api, ladder)["dispatch"]["status"] == "running"
    assert outsider_api.get(f"/api/ladders/{ladder.pk}/progress").status_code == 404


def test_the_summary_counts_the_rungs_its_slot_counts_come_from(owner, owner_api):
    """GET /ladders/summary reports the dispatch's rungs (those its slots and runs were counted
    over) beside the configuration's own, which an edit after the Run may have changed."""
    steps = versions(3)
    ladder = start(owner, steps[:2], climbers(2))
    config = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    config["rungs"].append({"case": steps[2].case.slug, "version": "1", "variant": "default"})
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", config, format="json").status_code == 200

    [row] = owner_api.get("/api/ladders/summary").json()["results"]

    assert row["rungs"] == 2
    assert row["configuredRungs"] == 3
    assert sum(row["slotCounts"].values()) == row["climbers"] * row["rungs"]
