"""Seed 004, "What the gate reads": which runs reach the gate, and as what."""

import pytest

from ladders import services
from loopweb.runs.models import Run
from tests.factories import CaseVersionFactory
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    UNLOADED,
    claim_all,
    climbers,
    progress_of,
    push,
    queued,
    versions,
)
from tests.runs.helpers import at, outside_run, push_body
from tests.support.ladders import start

MODEL_FAILURES = ["catastrophic", "timedOut", "harnessError", "limitExceeded", "hung"]
PASSABLE = {  # both critical items and 3 of 5: passable
    "checklist": {"starts": True, "jump": True, "score": True},
    "toolchain": {"build": "ok", "loaded": True},
}
SCUFFED = {  # a critical item failed, one item passed: scuffed
    "checklist": {"starts": True, "jump": False},
    "toolchain": {"build": "ok", "loaded": True},
}
BUILD_FAILED = {**PERFECT, "toolchain": {"build": "failed", "loaded": True}}


def first_climber(ladder) -> dict:
    return progress_of(ladder)["climbers"][0]


def unpinned_rung(case: str, version: str, runs=None) -> dict:
    return {"case": case, "version": version, "variant": "default", "engine": None, "runs": runs}


# The slot's runs -----------------------------------------------------------------------------


def test_the_gate_reads_the_slots_runs_the_first_target_counted_runs_of_its_cell(owner):
    """ "The gate reads the slot's runs." — the first target counted runs of the cell to finish,
    so a later perfect run, and a perfect run of another climber's cell, change nothing."""
    [step] = versions(1)
    combo, other = climbers(2)
    outside_run(owner, step, combo, record=PERFECT, finished_at=at(-5))
    outside_run(owner, step, combo, record=BROKEN, finished_at=at(-10))  # pushed later, ran first
    outside_run(owner, step, other, record=PERFECT, finished_at=at(-20))
    ladder = start(owner, [step], [combo])
    climber = first_climber(ladder)
    assert climber["status"] == "failed"
    assert climber["tally"]["counted"] == 1
    assert queued(ladder) == []


def test_a_completed_run_is_read_at_its_validator_rating(owner, driver):
    """ "A completed run is read at its validator rating: the functional rating the validators
    decide from the run record and the case version's checklist" — at floor passable, a passable
    run passes the rung and a scuffed one does not."""
    steps = versions(2)
    combos = climbers(2)
    ladder = start(owner, steps, combos, gate={"floor": "passable"})
    first, second = claim_all(driver)
    passable = push(driver, first, record=PASSABLE)
    scuffed = push(driver, second, record=SCUFFED)
    assert (passable.validator_rating, scuffed.validator_rating) == ("passable", "scuffed")
    services.run_launch_pass(ladder_id=ladder.pk)
    statuses = [[s["status"] for s in c["slots"]] for c in progress_of(ladder)["climbers"]]
    assert statuses == [["passed", "running"], ["failed", "skipped"]]


def test_the_rating_is_decided_against_the_pinned_versions_own_checklist(owner, driver):
    """ "...decide from the run record and the case version's checklist" — a version whose
    checklist has one item rates a record passing that item flawless."""
    step = CaseVersionFactory(
        case__slug="tiny", checklist=[{"id": "boots", "text": "It boots", "critical": True}]
    )
    ladder = start(owner, [step], climbers(1), gate={"floor": "flawless"})
    [job] = claim_all(driver)
    run = push(driver, job, record={"checklist": {"boots": True}, "toolchain": {"build": "ok"}})
    assert run.validator_rating == "flawless"
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "completed"


def test_the_toolchain_gate_sits_on_top_of_the_checklist(owner, driver):
    """ "...with the toolchain gate on top." — a failed build is broken, whatever its checklist."""
    ladder = start(owner, versions(1), climbers(1))
    [job] = claim_all(driver)
    run = push(driver, job, record=BUILD_FAILED)
    assert run.validator_rating == "broken"
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "failed"


# Model failures ------------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", MODEL_FAILURES)
@pytest.mark.parametrize("unloaded_counts_as_broken", [True, False])
def test_a_run_that_ended_on_the_models_own_failure_is_read_as_broken(
    owner, driver, outcome, unloaded_counts_as_broken
):
    """ "A run that ended on the model's own failure (catastrophic, timed out, harness error,
    limit exceeded, or hung) is read as broken, whatever unloadedCountsAsBroken says" """
    ladder = start(
        owner,
        versions(1),
        climbers(1),
        retryCount=0,
        gate={"unloadedCountsAsBroken": unloaded_counts_as_broken},
    )
    [job] = claim_all(driver)
    push(driver, job, outcome=outcome, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert climber["status"] == "failed"
    assert climber["tally"] == {
        "counted": 1,
        "rated": 1,
        "unrated": 0,
        "passing": 0,
        "pending": 0,
        "inFlight": 0,
        "required": 1,
    }


@pytest.mark.parametrize("outcome", MODEL_FAILURES)
def test_a_model_failure_read_as_broken_meets_a_broken_floor(owner, driver, outcome):
    """ "is read as broken" with "A run rated at the floor or better passes" (The gate): read as
    broken, it is at a floor of broken."""
    ladder = start(owner, versions(1), climbers(1), retryCount=0, gate={"floor": "broken"})
    [job] = claim_all(driver)
    push(driver, job, outcome=outcome, record={})
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "completed"


@pytest.mark.parametrize("outcome", MODEL_FAILURES)
def test_a_model_failure_uses_one_of_the_rungs_runs(owner, driver, outcome):
    """ "...and uses one of the rung's runs. The model had its attempt and produced nothing to
    rate." — no replacement is launched for it, and the rung's other run decides."""
    ladder = start(owner, versions(1), climbers(1), retryCount=0, runsPerCell=2)
    first, second = claim_all(driver)
    push(driver, first, outcome=outcome, record={})
    services.run_launch_pass(ladder_id=ladder.pk)
    assert queued(ladder) == []  # the failure took a run; only the second job is awaited
    push(driver, second, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert climber["status"] == "completed"
    assert climber["slots"][0]["tally"]["counted"] == 2
    assert Run.objects.filter(outcome=outcome).count() == 1


# Runs that never reach the gate --------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["infrastructure", "canceled"])
def test_an_infrastructure_failure_or_a_canceled_run_never_reaches_the_gate(owner, outcome):
    """ "An infrastructure failure or a canceled run never reaches the gate" — a cell holding only
    such a run has no runs, and the dispatch launches the one it is missing."""
    [step] = versions(1)
    [combo] = climbers(1)
    outside_run(owner, step, combo, outcome=outcome, record=PERFECT)
    ladder = start(owner, [step], [combo])
    climber = first_climber(ladder)
    assert climber["status"] == "running"
    assert climber["tally"]["counted"] == 0
    assert len(queued(ladder)) == 1


def test_an_infrastructure_run_of_a_dispatch_job_never_reaches_the_gate(owner, driver):
    """ "An infrastructure failure ... never reaches the gate" — with no retries left, the rung
    is blocked rather than decided."""
    ladder = start(owner, versions(1), climbers(1), retryCount=0)
    [job] = claim_all(driver)
    push(driver, job, outcome="infrastructure", record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")
    assert climber["tally"]["counted"] == 0
    assert climber["slots"][0]["status"] == "blocked"


def test_the_run_of_a_retried_attempt_is_left_out_in_favour_of_its_retry(owner, driver, run_tasks):
    """ "...the run of an attempt the backend retried is left out in favour of its retry" — a
    catastrophic first attempt (finished first) is retried, and the retry's pass decides."""
    ladder = start(owner, versions(1), climbers(1), retryCount=1)
    [job] = claim_all(driver)
    retried = push(driver, job, outcome="catastrophic", record={})
    run_tasks()
    [retry] = claim_all(driver)
    assert retry.attempt == 2
    push(driver, retry, record=PERFECT)
    run_tasks()
    climber = first_climber(ladder)
    assert climber["status"] == "completed"
    assert climber["slots"][0]["tally"]["counted"] == 1
    retried.refresh_from_db()
    assert retried.counted is False


# Reviews and the stored rating ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("record", "verdict", "aesthetic", "expected"),
    [(PERFECT, "reject", 1, "completed"), (BROKEN, "accept", 5, "failed")],
)
def test_the_gate_never_reads_a_review(
    owner, reviewer, reviewer_api, driver, run_tasks, record, verdict, aesthetic, expected
):
    """ "The run's stored rating folds in every reviewer's checklist overrides, so the gate never
    reads it, and it never reads a review." — a review posted before the gate decides changes
    nothing: the gate reads the validator rating alone."""
    ladder = start(owner, versions(1), climbers(1), reviewers=[reviewer.pk])
    [job] = claim_all(driver)
    run = push(driver, job, record=record)
    response = reviewer_api.post(
        f"/api/runs/{run.pk}/reviews",
        {"aestheticRating": aesthetic, "writeup": "a review", "verdict": verdict},
        format="json",
    )
    assert response.status_code == 201, response.json()
    run_tasks()
    assert first_climber(ladder)["status"] == expected


def test_the_validator_rating_is_lifted_onto_the_run_row_at_push_and_a_repush_rewrites_it(
    owner, driver, driver_api, run_tasks
):
    """ "The backend lifts the validator rating onto the run row as validator_rating when the run
    is pushed, and a re-push rewrites it." — and the gate reads the rewritten rating."""
    ladder = start(owner, versions(1), climbers(1), runsPerCell=2)
    first, second = claim_all(driver)
    pushed = driver_api.post("/api/runs/", push_body(first, record=PERFECT), format="json")
    assert pushed.status_code == 201, pushed.json()
    assert pushed.json()["validatorRating"] == "flawless"
    run_id = pushed.json()["id"]
    assert Run.objects.get(pk=run_id).validator_rating == "flawless"

    repushed = driver_api.put(f"/api/runs/{run_id}/", push_body(record=BROKEN), format="json")
    assert repushed.status_code == 200, repushed.json()
    assert repushed.json()["validatorRating"] == "broken"
    assert Run.objects.get(pk=run_id).validator_rating == "broken"
    assert Run.objects.filter(job=first).count() == 1

    push(driver, second, record=BROKEN)
    run_tasks()
    assert first_climber(ladder)["status"] == "failed"  # the first run was rewritten to broken


# Unloaded builds -------------------------------------------------------------------------------


def test_a_completed_run_whose_build_never_loaded_counts_as_broken_by_default(owner, driver):
    """ "A completed run whose build never loaded counts as broken outright when the ladder's
    unloadedCountsAsBroken is on, which it is by default." — outright: its checklist rates it
    flawless, and it still fails the rung."""
    ladder = start(owner, versions(1), climbers(1))
    assert ladder.gate["unloadedCountsAsBroken"] is True
    [job] = claim_all(driver)
    run = push(driver, job, record=UNLOADED)
    assert (run.validator_rating, run.build_loaded) == ("flawless", False)
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "failed"


def test_an_unloaded_run_is_read_at_its_rating_when_unloaded_counts_as_broken_is_off(owner, driver):
    """ "...counts as broken outright when the ladder's unloadedCountsAsBroken is on" — and only
    then."""
    ladder = start(owner, versions(1), climbers(1), gate={"unloadedCountsAsBroken": False})
    [job] = claim_all(driver)
    push(driver, job, record=UNLOADED)
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "completed"


def test_an_unloaded_run_counted_as_broken_meets_a_broken_floor(owner, driver):
    """ "counts as broken outright" with "A run rated at the floor or better passes" (The
    gate)."""
    ladder = start(owner, versions(1), climbers(1), gate={"floor": "broken"})
    [job] = claim_all(driver)
    push(driver, job, record=UNLOADED)
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "completed"


def test_an_unloaded_run_counts_as_broken_even_when_it_is_unrated(owner, driver):
    """ "counts as broken outright": an unloaded run of a version the backend does not hold is
    broken, not unrated."""
    versions(1)
    ladder = start(owner, [], climbers(1), rungs=[unpinned_rung("step-1", "2")])
    [job] = claim_all(driver)
    run = push(driver, job, record=UNLOADED)
    assert run.validator_rating is None
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "failed"


# Unrated runs ---------------------------------------------------------------------------------


def test_a_completed_run_of_a_version_the_backend_does_not_hold_counts_as_unrated(owner, driver):
    """ "A completed run with no validator rating, which happens when the backend did not hold the
    case version when the run was pushed, counts as unrated." ... "a rung left with only unrated
    runs short of its bar is blocked as unrated." """
    versions(1)  # step-1@1 is held; the rung pins step-1@2, which is not
    ladder = start(owner, [], climbers(1), rungs=[unpinned_rung("step-1", "2")])
    [job] = claim_all(driver)
    run = push(driver, job, record=PERFECT)
    assert run.validator_rating is None
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unrated")
    assert climber["slots"][0]["status"] == "blocked"
    assert climber["tally"]["counted"] == 1
    assert climber["tally"]["unrated"] == 1
    assert climber["tally"]["rated"] == 0
    assert queued(ladder) == []


def two_runs_one_unrated(owner, driver, second_record, **overrides):
    """A rung of two runs: the first pushed before its version is ingested (unrated), the second
    after (rated)."""
    [held] = versions(1)
    ladder = start(
        owner, [], climbers(1), rungs=[unpinned_rung("step-1", "2", runs=2)], **overrides
    )
    first, second = claim_all(driver)
    unrated = push(driver, first, record=PERFECT)
    CaseVersionFactory(case=held.case, version="2")
    rated = push(driver, second, record=second_record)
    assert unrated.validator_rating is None and rated.validator_rating is not None
    services.run_launch_pass(ladder_id=ladder.pk)
    return ladder, unrated


def test_an_unrated_run_keeps_a_failure_open_as_a_possible_pass(owner, driver):
    """ "It can still pass later, so the gate treats it as a possible pass in both directions" —
    one broken run and one unrated run do not fail a rung that needs one pass."""
    ladder, _ = two_runs_one_unrated(owner, driver, BROKEN)
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unrated")
    assert climber["tally"]["passing"] == 0


def test_an_unrated_run_never_makes_a_pass(owner, driver):
    """ "...a possible pass in both directions" — one passing run and one unrated run do not pass
    a rung that needs two passes."""
    ladder, _ = two_runs_one_unrated(owner, driver, PERFECT, gate={"threshold": {"count": 2}})
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unrated")
    assert climber["tally"]["passing"] == 1


def test_a_rung_whose_rated_runs_clear_the_bar_passes_beside_an_unrated_run(owner, driver):
    """ "a rung left with only unrated runs short of its bar is blocked as unrated" — not one
    whose rated runs already clear it."""
    ladder, _ = two_runs_one_unrated(owner, driver, PERFECT)
    assert first_climber(ladder)["status"] == "completed"


def test_an_unrated_run_can_still_pass_later_when_it_is_re_pushed(
    owner, driver, driver_api, run_tasks
):
    """ "It can still pass later" — re-pushed once its version is held, it is rated, and the
    re-push runs the pass that decides the rung."""
    ladder, unrated = two_runs_one_unrated(owner, driver, BROKEN)
    run_tasks()
    response = driver_api.put(f"/api/runs/{unrated.pk}/", push_body(record=PERFECT), format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["validatorRating"] == "flawless"
    run_tasks()
    assert first_climber(ladder)["status"] == "completed"
