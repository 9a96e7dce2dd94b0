"""Seed 004, "How a ladder dispatch flows"."""

from ladders import selectors, services
from ladders.models import Dispatch, DispatchClimber
from loopweb.runs.models import Run
from tests.factories import CoverageGroupFactory
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    api_ladder,
    climbers,
    fail_attempt,
    ladder_jobs,
    make_ladder,
    outside,
    progress_of,
    push_run_of,
    queued,
    ready_passes,
    rung,
    set_status,
    versions,
    work,
)
from tests.runs.helpers import hand_job, push_body


def progress(ladder):
    ladder.refresh_from_db()
    return selectors.ladder_progress(ladder)


def test_run_launches_the_first_rung_and_a_passing_climber_moves_on(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(3), climbers(2))
    services.start_dispatch(ladder=ladder)
    jobs = queued(ladder)
    assert [j.case for j in jobs] == ["step-1", "step-1"]
    work(driver, run_tasks, PERFECT)
    body = progress(ladder)
    assert body["dispatch"]["status"] == "finished"
    assert [c["status"] for c in body["climbers"]] == ["completed", "completed"]
    assert body["dispatch"]["slotCounts"]["passed"] == 6


def test_a_climber_that_fails_a_rung_stops_there(owner, driver, run_tasks):
    """ "A climber that fails a rung stops there." """
    ladder = make_ladder(owner, versions(3), climbers(1))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: BROKEN if job.case == "step-2" else PERFECT)
    body = progress(ladder)
    [climber] = body["climbers"]
    assert climber["status"] == "failed"
    assert [s["status"] for s in climber["slots"]] == ["passed", "failed", "skipped"]
    assert body["dispatch"]["status"] == "finished"
    assert not [j for j in ladder_jobs(ladder) if j.case == "step-3"]


# 1. Run -------------------------------------------------------------------------------------


def test_run_snapshots_the_configuration_mints_a_dispatch_id_and_runs_a_launch_pass(
    owner, owner_api
):
    """ "The owner presses Run. The backend snapshots the configuration: the rungs and their
    targets, the climbers resolved from the groups and one-offs, the gate, the climb order, the
    retry limit, and the runs-in-flight limit in force. It mints a dispatch id and runs a launch
    pass." """
    owner.account.runs_in_flight_limit = 3
    owner.account.save()
    low, high = versions(2)
    grouped_a, grouped_b, oneoff = climbers(3)
    group = CoverageGroupFactory(owner=owner, combinations=[grouped_a, grouped_b])
    body = api_ladder(
        owner_api,
        rungs=[rung(low), rung(high, runs=2)],
        groups=[group.pk],
        combinations=[oneoff.pk],
        gate={"floor": "passable", "earlyStop": True},
        retryCount=2,
        outerAxis="combination",
    )
    started = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert started.status_code == 200, started.json()
    board = started.json()
    dispatch = board["dispatch"]
    assert dispatch["id"].startswith("d_") and len(dispatch["id"]) > 2
    assert [(r["id"], r["case"], r["runs"]) for r in dispatch["rungs"]] == [
        (body["rungs"][0]["id"], "step-1", 1),
        (body["rungs"][1]["id"], "step-2", 2),
    ]
    assert [c["key"] for c in board["climbers"]] == [grouped_a.key, grouped_b.key, oneoff.key]
    assert dispatch["gate"] == {
        "floor": "passable",
        "threshold": {"count": 1},
        "unloadedCountsAsBroken": True,
        "earlyStop": True,
    }
    assert dispatch["outerAxis"] == "combination"
    assert dispatch["retryCount"] == 2
    assert dispatch["runsInFlightLimit"] == 3  # the account's, in force at Run
    # The launch pass ran: the first rung is launched for every climber the limit allows.
    assert dispatch["runs"]["inFlight"] == 3
    assert dispatch["id"] == Dispatch.objects.get(ladder_id=body["id"]).dispatch_id

    # The limit in force at Run stays the dispatch's when the account's changes.
    owner.account.runs_in_flight_limit = 50
    owner.account.save()
    services.run_launch_pass(ladder_id=body["id"])
    assert (
        owner_api.get(f"/api/ladders/{body['id']}/progress").json()["dispatch"]["runsInFlightLimit"]
        == 3
    )


def test_only_the_owner_presses_run(owner, owner_api, reviewer, reviewer_api, outsider_api):
    """ "The owner presses Run." A reviewer the ladder is shared with may read it but not run it,
    and an outsider does not see it."""
    body = api_ladder(
        owner_api,
        rungs=[rung(v) for v in versions(1)],
        combinations=[c.pk for c in climbers(1)],
        reviewers=[reviewer.username],
    )
    assert reviewer_api.get(f"/api/ladders/{body['id']}/progress").status_code == 200
    assert reviewer_api.post(f"/api/ladders/{body['id']}/run").status_code == 403
    assert outsider_api.post(f"/api/ladders/{body['id']}/run").status_code == 404
    assert not Dispatch.objects.exists()
    assert owner_api.post(f"/api/ladders/{body['id']}/run").status_code == 200


# 2. A launch pass ---------------------------------------------------------------------------


def test_a_launch_pass_launches_only_what_the_current_rung_is_missing_up_to_the_limit(
    owner, driver
):
    """ "A launch pass evaluates the gate on each climber's current rung over the runs that
    already exist for it, and launches only the runs the rung is still missing, up to the
    limit." """
    low, high = versions(2)
    first, second = climbers(2)
    outside(driver, low, first, PERFECT)
    ladder = make_ladder(owner, [low, high], [first, second], runsPerCell=3, runsInFlightLimit=4)
    services.start_dispatch(ladder=ladder, run_pass=False)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.launched == 4
    # The first climber's low rung has one of its three runs: two are missing. The second
    # climber misses three, and the limit leaves room for two of them.
    assert [(j.case, j.combination_id) for j in queued(ladder)] == [
        ("step-1", first.pk),
        ("step-1", first.pk),
        ("step-1", second.pk),
        ("step-1", second.pk),
    ]
    # A pass with nothing new launches nothing more.
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0


def test_a_launch_pass_reads_the_gate_over_existing_runs_before_launching(owner, driver):
    """ "A launch pass evaluates the gate on each climber's current rung over the runs that
    already exist for it": a climber whose existing run fails its first rung launches nothing."""
    low, high = versions(2)
    failing, fresh = climbers(2)
    outside(driver, low, failing, BROKEN)
    ladder = make_ladder(owner, [low, high], [failing, fresh])
    services.start_dispatch(ladder=ladder)
    assert [(j.case, j.combination_id) for j in queued(ladder)] == [("step-1", fresh.pk)]
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["failed", "running"]


# 3. Validators rate at push time ------------------------------------------------------------


def test_each_run_is_rated_by_its_validators_at_push_time(owner, driver, driver_api, run_tasks):
    """ "Each run completes and its validators rate it at push time." The gate reads that
    rating: a passable run fails a rung whose floor is great."""
    ladder = make_ladder(owner, versions(1), climbers(2), gate={"floor": "great"})
    services.start_dispatch(ladder=ladder)
    great_job, passable_job = queued(ladder)
    driver_api.post("/api/driver/claim", {"max": 10}, format="json")
    great = {**PERFECT, "checklist": {**PERFECT["checklist"], "pause": False}}
    passable = {**PERFECT, "checklist": {"starts": True, "jump": True, "score": True}}
    answers = [
        driver_api.post("/api/runs/", push_body(job, record=record), format="json")
        for job, record in ((great_job, great), (passable_job, passable))
    ]
    assert [a.status_code for a in answers] == [201, 201]
    assert [a.json()["validatorRating"] for a in answers] == ["great", "passable"]
    assert list(Run.objects.order_by("id").values_list("validator_rating", flat=True)) == [
        "great",
        "passable",
    ]
    run_tasks()
    assert [c["status"] for c in progress_of(ladder)["climbers"]] == ["completed", "failed"]


# 4. Every finished run feeds a pass ---------------------------------------------------------


def test_every_finished_run_of_a_slot_cell_runs_another_launch_pass(owner, driver, run_tasks):
    """ "Every finished run of a rung slot's cell makes the backend run another launch pass." """
    ladder = make_ladder(owner, versions(2), climbers(1))
    services.start_dispatch(ladder=ladder)
    run_tasks()
    [job] = queued(ladder)
    push_run_of(driver, job, PERFECT)
    assert ready_passes(ladder) == 1
    assert queued(ladder) == []  # the pass has not run yet
    run_tasks()
    assert [j.case for j in queued(ladder)] == ["step-2"]


def test_a_run_of_the_cell_launched_by_someone_else_also_feeds_the_dispatch(
    owner, driver, run_tasks
):
    """A finished run of a slot's cell feeds the dispatch whoever launched it: here a hand
    launch the dispatch was waiting on, and a run pushed without a job."""
    low, high, top = versions(3)
    combo = climbers(1)[0]
    job = hand_job(owner, low, combo)
    ladder = make_ladder(owner, [low, high, top], [combo])
    services.start_dispatch(ladder=ladder)
    run_tasks()
    assert queued(ladder) == []  # the hand launch holds the slot's place
    push_run_of(driver, job, PERFECT)
    assert ready_passes(ladder) == 1
    run_tasks()
    [next_job] = queued(ladder)
    assert next_job.case == "step-2"

    outside(driver, high, combo, PERFECT)
    assert ready_passes(ladder) == 1
    run_tasks()
    assert [j.case for j in queued(ladder)] == ["step-2", "step-3"]


# 5. Passing moves on, failing stops ---------------------------------------------------------


def test_a_passing_climber_moves_on_and_the_same_pass_evaluates_and_launches_the_next_rung(
    owner, driver
):
    """ "A climber that passes its rung moves to the next one, which the same pass evaluates
    and launches." """
    steps = versions(3)
    combo = climbers(1)[0]
    ladder = make_ladder(owner, steps, [combo])
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    # Rung two already has its run, so one pass decides rungs one and two and launches three.
    outside(driver, steps[1], combo, PERFECT)
    push_run_of(driver, job, PERFECT)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report.launched == 1
    [launched] = queued(ladder)
    assert launched.case == "step-3"
    rung_ids = [r["id"] for r in progress_of(ladder)["dispatch"]["rungs"]]
    verdicts = DispatchClimber.objects.get().verdicts
    assert verdicts == {rung_ids[0]: "passed", rung_ids[1]: "passed"}


# 6. Blocked until the owner retries; Needs attention ----------------------------------------


def test_a_climber_that_cannot_progress_is_blocked_until_its_owner_retries_it(
    owner, owner_api, driver, run_tasks
):
    """ "A climber whose rung cannot progress is blocked until its owner retries it. A dispatch
    left with only blocked climbers to wait for reads Needs attention." """
    ladder = make_ladder(owner, versions(2), climbers(1), retryCount=0)
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    fail_attempt(driver, job, "infrastructure")
    run_tasks()
    board = progress_of(ladder)
    [climber] = board["climbers"]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")
    assert board["dispatch"]["status"] == "needsAttention"
    # Passes on their own change nothing.
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0
    assert queued(ladder) == []

    retried = owner_api.post(
        f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": climber["key"]}, format="json"
    )
    assert retried.status_code == 200, retried.json()
    assert retried.json()["dispatch"]["status"] == "running"
    [relaunch] = queued(ladder)
    assert relaunch.case == "step-1"
    work(driver, run_tasks, PERFECT)
    assert progress_of(ladder)["dispatch"]["status"] == "finished"


# 7. Finished once nothing is in flight; Stop earlier ----------------------------------------


def test_the_dispatch_finishes_once_every_climber_is_done_and_none_of_its_runs_is_in_flight(
    owner, driver, run_tasks
):
    """ "The dispatch is Finished once every climber has completed or failed and none of its
    runs is in flight." An early-stopped rung leaves a running job behind, and the dispatch
    waits for it."""
    ladder = make_ladder(owner, versions(1), climbers(1), runsPerCell=2, gate={"earlyStop": True})
    services.start_dispatch(ladder=ladder)
    deciding, straggler = queued(ladder)
    set_status(driver, straggler, "running")
    push_run_of(driver, deciding, PERFECT)
    run_tasks()
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["completed"]
    assert board["dispatch"]["status"] == "running"
    assert board["dispatch"]["runs"]["inFlight"] == 1
    push_run_of(driver, straggler, BROKEN)
    run_tasks()
    assert progress_of(ladder)["dispatch"]["status"] == "finished"


def test_the_owner_may_stop_a_dispatch_earlier(owner_api, driver, run_tasks):
    """ "The owner may stop it earlier." """
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(2)], combinations=[climbers(1)[0].pk]
    )
    owner_api.post(f"/api/ladders/{body['id']}/run")
    stopped = owner_api.post(f"/api/ladders/{body['id']}/stop", {}, format="json")
    assert stopped.status_code == 200
    assert owner_api.get(f"/api/ladders/{body['id']}/progress").json()["dispatch"]["status"] == (
        "stopped"
    )


# One running dispatch -----------------------------------------------------------------------


def test_run_is_unavailable_while_a_dispatch_is_running(owner_api, driver, run_tasks):
    """ "A ladder holds at most one running dispatch, so Run is unavailable while one is
    running." """
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(1)], combinations=[climbers(1)[0].pk]
    )
    first = owner_api.post(f"/api/ladders/{body['id']}/run").json()["dispatch"]["id"]
    again = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert again.status_code == 409
    assert again.json()["detail"]
    assert Dispatch.objects.get(ladder_id=body["id"]).dispatch_id == first
    assert len(queued()) == 1


def test_a_run_after_a_dispatch_ended_replaces_it(owner_api, driver, run_tasks):
    """ "A Run after a dispatch ended replaces it." """
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(1)], combinations=[climbers(1)[0].pk]
    )
    seen = [owner_api.post(f"/api/ladders/{body['id']}/run").json()["dispatch"]["id"]]
    owner_api.post(f"/api/ladders/{body['id']}/stop", {}, format="json")
    assert Dispatch.objects.get(ladder_id=body["id"]).status == "stopped"

    replaced = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert replaced.status_code == 200, replaced.json()
    seen.append(replaced.json()["dispatch"]["id"])
    work(driver, run_tasks, PERFECT)
    assert Dispatch.objects.get(ladder_id=body["id"]).status == "finished"

    again = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert again.status_code == 200, again.json()
    seen.append(again.json()["dispatch"]["id"])
    assert len(set(seen)) == 3
    assert list(
        Dispatch.objects.filter(ladder_id=body["id"]).values_list("dispatch_id", flat=True)
    ) == [seen[-1]]
