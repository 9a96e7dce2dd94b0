"""Seed 004, "When a rung is decided": final and pending, earlyStop off and on, cancelling a
decided slot's jobs, and the tally behind every answer."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ladders import services
from ladders.gate import Gate, RunRead, Verdict, decide, tally
from ladders.models import Ladder
from loopweb.runs import services as run_services
from loopweb.runs.models import Job, Run
from tests.factories import CaseVersionFactory
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    config,
    dispatch_of,
    ladder_jobs,
    progress_of,
    push,
    queued,
    rung,
    versions,
)
from tests.runs.helpers import hand_job, outside_run
from tests.support.ladders import start

PROPERTY = settings(max_examples=400, deadline=None, derandomize=True, database=None)
RATINGS = ["flawless", "great", "passable", "scuffed", "broken"]


def first_climber(ladder) -> dict:
    return progress_of(ladder)["climbers"][0]


def passing(n=1):
    return [RunRead("completed", "great", True)] * n


def failing(n=1):
    return [RunRead("completed", "broken", True)] * n


def unrated(n=1):
    return [RunRead("completed", None, True)] * n


# final and pending ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("target", "runs", "in_flight", "counted", "read_in_flight", "pending"),
    [
        (3, 0, 0, 0, 0, 3),
        (3, 1, 1, 1, 1, 2),
        (3, 1, 5, 1, 2, 2),  # in flight is read up to what the target still needs
        (3, 5, 0, 3, 0, 0),  # runs are read up to the target
        (3, 3, 2, 3, 0, 0),
        (1, 0, 4, 0, 1, 1),
    ],
)
def test_a_rung_is_judged_against_the_number_of_runs_it_will_finish_with(
    target, runs, in_flight, counted, read_in_flight, pending
):
    """ "final = max(target, counted + inFlight); pending = final - counted" ... "Both are read
    up to the target, so final is the target." """
    t = tally(passing(runs), target=target, in_flight=in_flight, gate=Gate())
    assert (t.counted, t.in_flight, t.pending) == (counted, read_in_flight, pending)
    final = max(target, t.counted + t.in_flight)
    assert final == target
    assert t.pending == final - t.counted


@PROPERTY
@given(
    target=st.integers(min_value=1, max_value=8),
    runs=st.integers(min_value=0, max_value=12),
    in_flight=st.integers(min_value=0, max_value=12),
)
def test_counted_and_in_flight_are_read_up_to_the_target_so_final_is_the_target(
    target, runs, in_flight
):
    """ "Both are read up to the target, so final is the target." """
    t = tally(failing(runs), target=target, in_flight=in_flight, gate=Gate())
    assert t.counted <= target
    assert t.counted + t.in_flight <= target
    assert t.counted + t.pending == target


def test_target_counted_and_in_flight_are_the_rungs_runs_the_slots_runs_and_its_jobs(owner):
    """ "target is the rung's runs, counted the number of the slot's runs, and inFlight the slot's
    jobs in flight." — a run and a hand launch of the cell made before the Run count too."""
    [step] = versions(1)
    [combo] = climbers(1)
    outside_run(owner, step, combo, record=BROKEN)
    hand_job(owner, step, combo)
    ladder = start(owner, [step], [combo], rungs=[rung(step, runs=4)])
    tally_json = first_climber(ladder)["tally"]
    # target 4: one run, one hand launch and two jobs of the dispatch
    assert tally_json["counted"] == 1
    assert tally_json["inFlight"] == 3
    assert tally_json["pending"] == 3
    assert len(queued(ladder)) == 2


def test_jobs_in_flight_beyond_the_target_are_not_read(owner):
    """ "Both are read up to the target" — five hand launches of a cell fill a target of two."""
    [step] = versions(1)
    [combo] = climbers(1)
    for _ in range(5):
        hand_job(owner, step, combo)
    ladder = start(owner, [step], [combo], runsPerCell=2)
    assert first_climber(ladder)["tally"]["inFlight"] == 2
    assert first_climber(ladder)["tally"]["pending"] == 2
    assert queued(ladder) == []


def test_a_fractional_threshold_is_measured_against_final_so_the_bar_does_not_drift(owner, driver):
    """ "A fractional threshold is measured against final, so the bar does not drift as runs
    land one by one." — half of four runs is two, before, during and after they land."""
    ladder = start(
        owner, versions(1), climbers(1), runsPerCell=4, gate={"threshold": {"fraction": 0.5}}
    )
    required = [first_climber(ladder)["tally"]["required"]]
    for job, record in zip(claim_all(driver), [PERFECT, BROKEN, PERFECT, BROKEN], strict=True):
        push(driver, job, record=record)
        services.run_launch_pass(ladder_id=ladder.pk)
        required.append(first_climber(ladder)["slots"][0]["tally"]["required"])
    assert required == [2, 2, 2, 2, 2]
    assert first_climber(ladder)["status"] == "completed"


# earlyStop off -------------------------------------------------------------------------------


def test_early_stop_is_off_by_default(owner_api, owner):
    """ "earlyStop is off by default." """
    assert Gate().early_stop is False
    body = config(rungs=[rung(v) for v in versions(1)], combinations=[climbers(1)[0].pk])
    body["gate"] = {"floor": "great"}
    created = owner_api.post("/api/ladders/", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["gate"]["earlyStop"] is False
    ladder = Ladder.objects.get(pk=created.json()["id"])
    services.start_dispatch(ladder=ladder)
    assert dispatch_of(ladder).snapshot["gate"]["earlyStop"] is False


@pytest.mark.parametrize(
    ("first", "threshold", "final"),
    [(PERFECT, {"count": 1}, "completed"), (BROKEN, {"count": 3}, "failed")],
)
def test_with_early_stop_off_a_rung_completes_every_run_it_started_though_the_outcome_is_certain(
    owner, driver, first, threshold, final
):
    """ "With it off, a rung is undecided while pending is above zero, so it completes every run
    it started even when the outcome is already certain" """
    ladder = start(owner, versions(2), climbers(1), runsPerCell=3, gate={"threshold": threshold})
    jobs = claim_all(driver)
    push(driver, jobs[0], record=first)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.cancelled == 0 and report.launched == 0
    climber = first_climber(ladder)
    assert climber["status"] == "running"
    assert [s["status"] for s in climber["slots"]] == ["running", "pending"]
    assert climber["tally"]["pending"] == 2
    assert [j.status for j in ladder_jobs(ladder)] == ["completed", "pending", "pending"]
    for job in jobs[1:]:
        push(driver, job, record=first)
        services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["slots"][0]["status"] == final.replace("completed", "passed")


# earlyStop on --------------------------------------------------------------------------------


def test_with_early_stop_on_a_rung_passes_the_moment_the_counted_runs_clear_the_bar(owner, driver):
    """ "With earlyStop on, the gate decides the moment the outcome is certain" — one pass of a
    count of one, with two runs still pending, passes the rung and the next rung launches."""
    ladder = start(owner, versions(2), climbers(1), runsPerCell=3, gate={"earlyStop": True})
    first, *_ = claim_all(driver)
    push(driver, first, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert [s["status"] for s in climber["slots"]] == ["passed", "running"]
    assert [j.case for j in queued(ladder)] == ["step-2"] * 3


def test_with_early_stop_on_a_rung_fails_the_moment_it_cannot_clear_the_bar(owner, driver):
    """ "...counting every pending run as a possible pass and as a possible failure" — needing
    three passes of three runs, the first broken run fails the rung."""
    ladder = start(
        owner,
        versions(2),
        climbers(1),
        runsPerCell=3,
        gate={"earlyStop": True, "threshold": {"count": 3}},
    )
    first, *_ = claim_all(driver)
    push(driver, first, record=BROKEN)
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert climber["status"] == "failed"
    assert [s["status"] for s in climber["slots"]] == ["failed", "skipped"]


def test_with_early_stop_on_a_rung_is_undecided_in_between(owner, driver):
    """ "It passes only when the runs already counted clear the bar, fails only when they cannot
    clear it even if every pending and unrated run passes, and is undecided in between." """
    ladder = start(
        owner,
        versions(1),
        climbers(1),
        runsPerCell=3,
        gate={"earlyStop": True, "threshold": {"count": 2}},
    )
    first, second, third = claim_all(driver)
    seen = []
    for job, record in ((first, PERFECT), (second, BROKEN), (third, PERFECT)):
        push(driver, job, record=record)
        services.run_launch_pass(ladder_id=ladder.pk)
        seen.append(first_climber(ladder)["slots"][0]["status"])
    assert seen == ["running", "running", "passed"]


def test_with_early_stop_on_a_rung_fails_when_even_its_unrated_runs_passing_cannot_clear_it(
    owner, driver
):
    """ "fails only when they cannot clear it even if every pending and unrated run passes" — an
    unrated run and a broken one cannot make two passes."""
    [held] = versions(1)
    rungs = [{"case": "step-1", "version": "2", "variant": "default", "engine": None, "runs": 2}]
    ladder = start(
        owner, [], climbers(1), rungs=rungs, gate={"earlyStop": True, "threshold": {"count": 2}}
    )
    first, second = claim_all(driver)
    push(driver, first, record=PERFECT)  # unrated: step-1@2 is not held
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["slots"][0]["status"] == "running"
    CaseVersionFactory(case=held.case, version="2")
    push(driver, second, record=BROKEN)
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = first_climber(ladder)
    assert climber["status"] == "failed"
    assert (climber["tally"]["unrated"], climber["tally"]["passing"]) == (1, 0)


@PROPERTY
@given(
    target=st.integers(min_value=1, max_value=5),
    count=st.integers(min_value=0, max_value=6),
    reads=st.lists(st.sampled_from(["pass", "fail", "unrated"]), max_size=5),
    in_flight=st.integers(min_value=0, max_value=5),
)
def test_with_early_stop_on_the_gate_decides_exactly_when_the_outcome_is_certain(
    target, count, reads, in_flight
):
    """ "counting every pending run as a possible pass and as a possible failure": the verdict is
    passed when every way the pending and unrated runs could turn out passes, failed when none
    does, and undecided otherwise."""
    gate = Gate(count=count, early_stop=True)
    make = {"pass": passing, "fail": failing, "unrated": unrated}
    runs = [make[r]()[0] for r in reads]
    t = tally(runs, target=target, in_flight=in_flight, gate=gate)
    open_runs = t.unrated + t.pending
    outcomes = {t.passing + extra >= t.required for extra in range(open_runs + 1)}
    expected = None
    if outcomes == {True}:
        expected = Verdict.PASSED
    elif outcomes == {False}:
        expected = Verdict.FAILED
    assert decide(t, gate) == expected


# Cancelling a decided slot's jobs --------------------------------------------------------------


def test_the_pass_that_records_an_early_decision_cancels_the_slots_queued_and_pending_jobs(
    owner, driver
):
    """ "The launch pass that records the decision cancels the queued and pending jobs the
    dispatch launched for the slot. A job already dispatched or running finishes, and its run is
    kept." — and a job someone else queued for the cell is not the dispatch's to cancel."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo], runsPerCell=5, gate={"earlyStop": True})
    deciding, dispatched, running, pending = run_services.claim_jobs(driver=driver, limit=4)
    [still_queued] = queued(ladder)
    by_hand = hand_job(owner, step, combo)
    run_services.report_status(job_id=dispatched.pk, driver=driver, status="dispatched")
    run_services.report_status(job_id=running.pk, driver=driver, status="running")

    push(driver, deciding, record=PERFECT)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.cancelled == 2
    status = {j.pk: j.status for j in Job.objects.all()}
    assert status[pending.pk] == status[still_queued.pk] == "canceled"
    assert status[dispatched.pk] == "dispatched"
    assert status[running.pk] == "running"
    assert status[by_hand.pk] == "queued"
    assert first_climber(ladder)["status"] == "completed"

    kept = [push(driver, dispatched, record=BROKEN), push(driver, running, record=BROKEN)]
    services.run_launch_pass(ladder_id=ladder.pk)
    assert Run.objects.filter(pk__in=[r.pk for r in kept], counted=True).count() == 2
    climber = first_climber(ladder)
    assert climber["slots"][0]["tally"]["counted"] == 3
    # "Either way an outcome never has to be taken back as more evidence lands."
    assert climber["status"] == "completed"
    assert climber["slots"][0]["status"] == "passed"


def test_with_early_stop_off_a_decision_cancels_nothing(owner, driver):
    """ "The launch pass that records the decision cancels ..." is earlyStop's: off, a slot
    decided by a run from elsewhere leaves the dispatch's own job to finish."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo])
    [job] = queued(ladder)
    outside_run(owner, step, combo, record=PERFECT)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.cancelled == 0
    job.refresh_from_db()
    assert job.status == "queued"
    assert first_climber(ladder)["status"] == "completed"


# The tally ---------------------------------------------------------------------------------------


def test_the_evidence_behind_any_answer_is_reported_as_a_tally(owner, owner_api, driver):
    """ "The evidence behind any answer is reported as a tally: counted, rated, unrated, passing,
    pending, in flight, and the number of passing runs required." """
    ladder = start(owner, versions(2), climbers(1), runsPerCell=3, gate={"threshold": {"count": 2}})
    first, second, _ = claim_all(driver)
    push(driver, first, record=PERFECT)
    push(driver, second, record=BROKEN)
    services.run_launch_pass(ladder_id=ladder.pk)
    board = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    [climber] = board["climbers"]
    expected = {
        "counted": 2,
        "rated": 2,
        "unrated": 0,
        "passing": 1,
        "pending": 1,
        "inFlight": 1,
        "required": 2,
    }
    assert climber["tally"] == expected
    assert climber["slots"][0]["tally"] == expected
    assert climber["slots"][1]["tally"] is None  # not reached: no evidence yet


def test_an_attempt_of_an_early_decided_slot_that_fails_is_not_retried(owner, driver):
    """With earlyStop a decided slot needs no more runs: a job still running when its slot was
    decided that then fails on infrastructure gets no retry (the retry is cancelled as it is
    enqueued, as the dispatch's own check on retries does)."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo], runsPerCell=2, gate={"earlyStop": True})
    deciding, running = run_services.claim_jobs(driver=driver, limit=2)
    run_services.report_status(job_id=running.pk, driver=driver, status="running")
    push(driver, deciding, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    assert first_climber(ladder)["status"] == "completed"

    run_services.fail_job(job_id=running.pk, driver=driver, failure="infrastructure")
    [retry] = Job.objects.filter(attempt=2)
    assert retry.status == "canceled"


def test_without_early_stop_a_failed_attempt_of_a_decided_slot_is_still_retried(owner, driver):
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo], runsPerCell=2)
    first, second = run_services.claim_jobs(driver=driver, limit=2)
    run_services.fail_job(job_id=second.pk, driver=driver, failure="infrastructure")
    [retry] = Job.objects.filter(attempt=2)
    assert retry.status == "queued"
    assert ladder_jobs(ladder, status="queued") == [retry]


def test_a_kept_run_of_an_early_decided_slot_counts_when_it_ends_on_a_model_failure(owner, driver):
    """ "A job already dispatched or running finishes, and its run is kept." — a kept run that
    ends on the model's own failure is kept too: its retry is cancelled before it ran, so the
    attempt was not retried and its run counts."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo], runsPerCell=2, gate={"earlyStop": True})
    deciding, running = run_services.claim_jobs(driver=driver, limit=2)
    run_services.report_status(job_id=running.pk, driver=driver, status="running")
    push(driver, deciding, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)

    kept = push(driver, running, outcome="catastrophic", record={})

    [retry] = Job.objects.filter(attempt=2)
    assert retry.status == "canceled"
    assert kept.counted is True
    assert Run.objects.get(pk=kept.pk).counted is True
    assert first_climber(ladder)["slots"][0]["tally"]["counted"] == 2


def test_an_early_decision_that_cancels_a_queued_automatic_retry_keeps_its_attempts_run(
    owner, driver
):
    """ "The launch pass that records the decision cancels the queued and pending jobs the
    dispatch launched for the slot" — an automatic retry among them too, and then its attempt
    was not retried: its run is kept and counts (SPEC §3's one exception; a retry cancelled any
    other way leaves its attempt retried)."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo], runsPerCell=3, retryCount=1, gate={"earlyStop": True})
    failing_job, deciding, running = run_services.claim_jobs(driver=driver, limit=3)
    run_services.report_status(job_id=running.pk, driver=driver, status="running")
    kept = push(driver, failing_job, outcome="catastrophic", record={})
    [retry] = Job.objects.filter(attempt=2, status="queued")
    assert Run.objects.get(pk=kept.pk).counted is False

    push(driver, deciding, record=PERFECT)
    report = services.run_launch_pass(ladder_id=ladder.pk)

    assert report.cancelled == 1
    retry.refresh_from_db()
    assert (retry.status, retry.cancel_cause) == ("canceled", "decision")
    assert Run.objects.get(pk=kept.pk).counted is True
    climber = first_climber(ladder)
    assert (climber["status"], climber["slots"][0]["status"]) == ("completed", "passed")
    assert climber["slots"][0]["tally"]["counted"] == 2
