"""Seed 004, "Launching runs": what a launch pass records and what it enqueues."""

from collections import defaultdict

from ladders import services
from ladders.models import DispatchClimber
from loopweb.runs.models import IN_FLIGHT, Job
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    climbers,
    dispatch_of,
    ladder_jobs,
    make_ladder,
    progress_of,
    queued,
    rung,
    versions,
    work,
)
from tests.runs.helpers import hand_job, outside_run


def verdicts(ladder) -> list[dict]:
    rows = DispatchClimber.objects.filter(dispatch__ladder=ladder).order_by("position")
    return [row.verdicts for row in rows]


def test_a_launch_pass_records_every_verdict_the_gate_can_now_decide(owner):
    """ "A running dispatch launches its runs in a launch pass: it records every verdict the gate
    can now decide" — every climber's, on every rung existing runs decide, in one pass."""
    steps = versions(3)
    sure, weak, fresh = climbers(3)
    for step in steps[:2]:
        outside_run(owner, step, sure, record=PERFECT)
    outside_run(owner, steps[0], weak, record=BROKEN)
    ladder = make_ladder(owner, steps, [sure, weak, fresh])
    services.start_dispatch(ladder=ladder, run_pass=False)
    assert verdicts(ladder) == [{}, {}, {}]

    report = services.run_launch_pass(ladder_id=ladder.pk)
    r1, r2, _ = (r["id"] for r in dispatch_of(ladder).snapshot["rungs"])
    assert verdicts(ladder) == [{r1: "passed", r2: "passed"}, {r1: "failed"}, {}]
    # ... "then enqueues what each current rung is missing"
    assert report.launched == 2
    assert sorted((j.combination_id, j.case) for j in queued(ladder)) == sorted(
        [(sure.pk, "step-3"), (fresh.pk, "step-1")]
    )


def test_a_pass_enqueues_the_target_less_the_slots_runs_and_its_jobs_in_flight(owner):
    """ "...then enqueues what each current rung is missing, its target less its runs and its
    jobs in flight" — a target of four, one run and one hand launch: two launched."""
    [step] = versions(1)
    [combo] = climbers(1)
    outside_run(owner, step, combo, record=BROKEN)
    hand_job(owner, step, combo)
    ladder = make_ladder(owner, [step], [combo], rungs=[rung(step, runs=4)])
    services.start_dispatch(ladder=ladder, run_pass=False)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.launched == 2
    assert len(queued(ladder)) == 2
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0  # nothing more missing


def test_a_pass_enqueues_up_to_the_dispatchs_limit(owner, driver, run_tasks):
    """ "...up to the dispatch's limit." — five climbers missing a run each, room for three; the
    rest launch as room frees up."""
    ladder = make_ladder(owner, versions(1), climbers(5), runsInFlightLimit=3)
    services.start_dispatch(ladder=ladder, run_pass=False)
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 3
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0
    peak = []

    def record(job):
        peak.append(len(ladder_jobs(ladder, status__in=IN_FLIGHT)))
        return PERFECT

    work(driver, run_tasks, record, limit=1)
    assert max(peak) == 3
    assert len(ladder_jobs(ladder)) == 5
    assert progress_of(ladder)["dispatch"]["status"] == "finished"


def test_only_a_climbers_current_rung_is_ever_launched(owner, driver, run_tasks):
    """ "A launch pass of a ladder is the plan's launch pass with one restriction: only a
    climber's current rung is ever launched." — with room to spare, no climber ever has jobs of
    two rungs in flight, nor of a rung it has not reached."""
    steps = versions(3)
    combos = climbers(2)
    ladder = make_ladder(owner, steps, combos, runsPerCell=2, runsInFlightLimit=100)
    services.start_dispatch(ladder=ladder)
    assert sorted(j.case for j in queued(ladder)) == ["step-1"] * 4
    mixed = []

    def record(job):
        cases = defaultdict(set)
        for other in ladder_jobs(ladder, status__in=IN_FLIGHT):
            cases[other.combination_id].add(other.case)
        mixed.extend(c for c in cases.values() if len(c) > 1)
        return PERFECT

    work(driver, run_tasks, record)
    assert mixed == []
    assert progress_of(ladder)["dispatch"]["status"] == "finished"


def test_a_climber_that_failed_rung_two_never_runs_rung_five(owner, driver, run_tasks):
    """ "Running rung five for a model that failed rung two would answer a question the dispatch
    has already answered." """
    steps = versions(5)
    quitter, climber = climbers(2)
    ladder = make_ladder(owner, steps, [quitter, climber], runsInFlightLimit=100)
    services.start_dispatch(ladder=ladder)
    work(
        driver,
        run_tasks,
        lambda job: BROKEN if (job.combination_id, job.case) == (quitter.pk, "step-2") else PERFECT,
    )
    for _ in range(2):  # more passes launch nothing for it either
        assert services.run_launch_pass(ladder_id=ladder.pk) is None  # finished
    cases = defaultdict(list)
    for job in ladder_jobs(ladder):
        cases[job.combination_id].append(job.case)
    assert cases[quitter.pk] == ["step-1", "step-2"]
    assert cases[climber.pk] == [f"step-{i}" for i in range(1, 6)]
    body = progress_of(ladder)
    assert [s["status"] for s in body["climbers"][0]["slots"]] == [
        "passed",
        "failed",
        "skipped",
        "skipped",
        "skipped",
    ]


def test_only_a_running_dispatch_launches(owner, owner_api):
    """ "A running dispatch launches its runs in a launch pass" — a stopped one launches
    nothing."""
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder, run_pass=False)
    assert owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json").status_code == 200
    assert services.run_launch_pass(ladder_id=ladder.pk) is None
    assert ladder_jobs(ladder) == []
    assert Job.objects.count() == 0
