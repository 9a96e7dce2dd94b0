"""Seed 004, "Rung slots"."""

from ladders import services
from loopweb.runs.models import ModelEntry
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    climber_of,
    climbers,
    ladder_jobs,
    make_ladder,
    outside,
    progress_of,
    queued,
    slot_statuses,
    versions,
    work,
)

NO_SLOTS = dict.fromkeys(("running", "blocked", "passed", "failed", "pending", "skipped"), 0)


def counts(**given) -> dict:
    return {**NO_SLOTS, **given}


def test_three_climbers_over_four_rungs_have_twelve_rung_slots(owner, owner_api):
    """ "The unit every rung count is reported in is the rung slot: one climber on one rung. A
    dispatch of three climbers over four rungs has twelve rung slots" """
    ladder = make_ladder(owner, versions(4), climbers(3))
    services.start_dispatch(ladder=ladder)
    board = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert [len(c["slots"]) for c in board["climbers"]] == [4, 4, 4]
    rung_ids = [r["id"] for r in board["dispatch"]["rungs"]]
    assert all([s["rung"] for s in c["slots"]] == rung_ids for c in board["climbers"])
    assert board["dispatch"]["slotCounts"] == counts(running=3, pending=9)
    [row] = owner_api.get("/api/ladders/summary").json()["results"]
    assert (row["climbers"], row["rungs"]) == (3, 4)
    assert row["slotCounts"] == board["dispatch"]["slotCounts"]
    assert sum(row["slotCounts"].values()) == 12


def test_a_running_slot_is_the_current_undecided_rung_launched_or_waiting_for_room(owner):
    """ "running | the climber's current rung, undecided, with runs launched or waiting for
    room" """
    ladder = make_ladder(owner, versions(2), climbers(3), runsInFlightLimit=1)
    services.start_dispatch(ladder=ladder)
    assert len(queued(ladder)) == 1  # one launched, two waiting for room
    board = progress_of(ladder)
    assert slot_statuses(board) == [["running", "pending"]] * 3
    assert board["dispatch"]["slotCounts"] == counts(running=3, pending=3)


def test_a_blocked_slot_is_the_current_undecided_rung_that_is_blocked(owner):
    """ "blocked | the climber's current rung, undecided and blocked" """
    stuck, fine = climbers(2)
    ModelEntry.objects.filter(name=stuck.model).update(launchable=False)
    ladder = make_ladder(owner, versions(2), [stuck, fine])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    assert climber_of(board, stuck.key)["status"] == "blocked"
    assert slot_statuses(board) == [["blocked", "pending"], ["running", "pending"]]
    assert board["dispatch"]["slotCounts"] == counts(blocked=1, running=1, pending=2)


def test_passed_and_failed_slots_are_the_gates_verdicts(owner, driver, run_tasks):
    """ "passed | the gate passed it" and "failed | the gate failed it" """
    low, high = versions(2)
    climbing, failing = climbers(2)
    ladder = make_ladder(owner, [low, high], [climbing, failing])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: BROKEN if job.combination_id == failing.pk else PERFECT)
    board = progress_of(ladder)
    assert slot_statuses(board) == [["passed", "passed"], ["failed", "skipped"]]
    failed_tally = climber_of(board, failing.key)["slots"][0]["tally"]
    assert (failed_tally["passing"], failed_tally["required"]) == (0, 1)


def test_a_pending_slot_is_not_reached_yet_while_the_dispatch_is_running(owner, driver, run_tasks):
    """ "pending | not reached yet, while the dispatch is running" """
    low, middle, high = versions(3)
    combo = climbers(1)[0]
    outside(driver, low, combo, PERFECT)
    ladder = make_ladder(owner, [low, middle, high], [combo])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    assert slot_statuses(board) == [["passed", "running", "pending"]]
    assert board["dispatch"]["status"] == "running"


def test_a_slot_after_a_failed_rung_is_skipped_and_never_runs(owner, driver, run_tasks):
    """ "skipped | never to run: the climber failed an earlier rung" """
    ladder = make_ladder(owner, versions(4), climbers(1))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: BROKEN if job.case == "step-2" else PERFECT)
    board = progress_of(ladder)
    assert slot_statuses(board) == [["passed", "failed", "skipped", "skipped"]]
    assert board["dispatch"]["slotCounts"] == counts(passed=1, failed=1, skipped=2)
    assert {j.case for j in ladder_jobs(ladder)} == {"step-1", "step-2"}


def test_when_a_dispatch_is_stopped_running_blocked_and_pending_slots_become_skipped(
    owner, owner_api, driver, run_tasks
):
    """ "skipped | never to run: ... or the dispatch ended first" and "When a dispatch is
    stopped, every slot that was running, blocked, or pending becomes skipped." """
    low, middle, high = versions(3)
    climbing, failing, stuck = climbers(3)
    ModelEntry.objects.filter(name=stuck.model).update(launchable=False)
    outside(driver, low, climbing, PERFECT)
    outside(driver, low, failing, BROKEN)
    ladder = make_ladder(owner, [low, middle, high], [climbing, failing, stuck])
    services.start_dispatch(ladder=ladder)
    before = progress_of(ladder)
    assert slot_statuses(before) == [
        ["passed", "running", "pending"],
        ["failed", "skipped", "skipped"],
        ["blocked", "pending", "pending"],
    ]
    owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json")
    after = progress_of(ladder)
    assert slot_statuses(after) == [
        ["passed", "skipped", "skipped"],
        ["failed", "skipped", "skipped"],
        ["skipped", "skipped", "skipped"],
    ]
    assert after["dispatch"]["slotCounts"] == counts(passed=1, failed=1, skipped=7)
    [row] = owner_api.get("/api/ladders/summary").json()["results"]
    assert row["slotCounts"] == after["dispatch"]["slotCounts"]
