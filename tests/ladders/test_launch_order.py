"""Seed 004, "Launch order": outerAxis, the runs-in-flight limit, when launch passes run, and
when a pass marks its dispatch Finished."""

import io

import pytest
from django.core.management import call_command
from django.db.models.signals import post_save
from django.tasks.base import TaskContext
from django_tasks_db.models import DBTaskResult

from ladders import passes, services
from ladders.models import Ladder
from loopweb.runs import services as run_services
from loopweb.runs.models import IN_FLIGHT, Job
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    config,
    dispatch_of,
    fail,
    foreign_job,
    ladder_jobs,
    make_ladder,
    progress_of,
    push,
    queued,
    ready_passes,
    rung,
    versions,
    work,
)
from tests.runs.helpers import at, hand_job, outside_run
from tests.support.ladders import start


def launch_order(ladder, combos) -> list[tuple[int, str]]:
    """(climber number, case) of every first attempt the ladder launched, in emission order."""
    number = {c.pk: i + 1 for i, c in enumerate(combos)}
    return [(number[j.combination_id], j.case) for j in ladder_jobs(ladder, attempt=1)]


def run_only(result: DBTaskResult):
    """Run one queued background task, as one worker step would."""
    result.claim("tests")
    task, task_result = result.task, result.task_result
    args = task_result.args
    if task.takes_context:
        args = [TaskContext(task_result=task_result), *args]
    value = task.call(*args, **task_result.kwargs)
    result.set_successful(value)
    return value


# outerAxis ------------------------------------------------------------------------------------


def test_outer_axis_defaults_to_rung(owner_api):
    """ "rung, the default" """
    body = config(rungs=[rung(v) for v in versions(1)])
    del body["outerAxis"]
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["outerAxis"] == "rung"


def test_rung_order_brings_every_climber_up_one_rung_before_anyone_moves_on(
    owner, driver, run_tasks
):
    """ "rung, the default, brings every climber up one rung before anyone moves on" """
    combos = climbers(2)
    ladder = start(owner, versions(3), combos, runsInFlightLimit=1)
    work(driver, run_tasks, PERFECT, limit=1)
    assert launch_order(ladder, combos) == [
        (1, "step-1"),
        (2, "step-1"),
        (1, "step-2"),
        (2, "step-2"),
        (1, "step-3"),
        (2, "step-3"),
    ]


def test_combination_order_takes_one_climber_as_far_as_it_gets_before_starting_the_next(
    owner, driver, run_tasks
):
    """ "combination takes one climber as far as it gets before starting the next" """
    combos = climbers(2)
    ladder = start(owner, versions(3), combos, runsInFlightLimit=1, outerAxis="combination")
    first = combos[0].pk
    work(
        driver,
        run_tasks,
        lambda job: BROKEN if (job.combination_id, job.case) == (first, "step-2") else PERFECT,
        limit=1,
    )
    assert launch_order(ladder, combos) == [
        (1, "step-1"),
        (1, "step-2"),  # climber one gets this far
        (2, "step-1"),
        (2, "step-2"),
        (2, "step-3"),
    ]


@pytest.mark.parametrize(
    ("axis", "expected"),
    [("rung", [(2, "step-1"), (1, "step-2")]), ("combination", [(1, "step-2"), (2, "step-1")])],
)
def test_emission_order_is_execution_order(owner, driver_api, axis, expected):
    """ "outerAxis selects which loop is outer, with the same emission-order-is-execution-order
    mechanism a plan uses" — one pass emits the jobs in the axis's order, and drivers are handed
    them in that order."""
    steps = versions(2)
    combos = climbers(2)
    outside_run(owner, steps[0], combos[0], record=PERFECT)  # climber one starts on rung two
    ladder = start(owner, steps, combos, outerAxis=axis)
    assert launch_order(ladder, combos) == expected
    number = {c.pk: i + 1 for i, c in enumerate(combos)}
    claimed = driver_api.post("/api/driver/claim", {"max": 1}, format="json").json()
    claimed += driver_api.post("/api/driver/claim", {"max": 1}, format="json").json()
    assert [(number[j["combination"]["id"]], j["case"]) for j in claimed] == expected


# The limit -------------------------------------------------------------------------------------


def test_the_limit_caps_the_dispatchs_jobs_in_flight_in_every_in_flight_status_across_rungs(
    owner, driver
):
    """ "The dispatch's runs in flight are the jobs it launched that are queued, pending,
    dispatched, starting, or running, across every rung. The limit caps those alone." """
    combos = climbers(4)
    ladder = start(owner, versions(2), combos, runsInFlightLimit=2)
    first, second = queued(ladder)
    for status in ("queued", "pending", "dispatched", "starting", "running"):
        if status == "pending":
            claim_all(driver)
        elif status != "queued":
            for job in (first, second):
                run_services.report_status(job_id=job.pk, driver=driver, status=status)
        assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0, status
    push(driver, first, record=PERFECT)
    # Room for one: climber three's first rung goes before climber one's second (rung order).
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 1
    assert launch_order(ladder, combos)[-1] == (3, "step-1")
    [third] = claim_all(driver)
    push(driver, third, record=PERFECT)
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 1
    assert launch_order(ladder, combos)[-1] == (4, "step-1")
    assert len(ladder_jobs(ladder, status__in=IN_FLIGHT)) == 2  # one on rung one, one on rung one
    push(driver, second, record=PERFECT)
    services.run_launch_pass(ladder_id=ladder.pk)
    in_flight = ladder_jobs(ladder, status__in=IN_FLIGHT)
    assert sorted(j.case for j in in_flight) == ["step-1", "step-2"]  # across every rung


def test_the_limit_caps_the_dispatchs_own_jobs_alone(owner):
    """ "The limit caps those alone." — jobs others launched, of its cells or any other, take none
    of its room."""
    steps = versions(2)
    combos = climbers(3)
    for _ in range(4):
        hand_job(owner, steps[1], combos[0])  # another cell
    hand_job(owner, steps[0], combos[0])  # climber one's slot: its place is held
    other = start(owner, steps, climbers(2, prefix="x"), runsInFlightLimit=5)
    assert len(queued(other)) == 2
    ladder = start(owner, steps, combos, runsInFlightLimit=2)
    assert launch_order(ladder, combos) == [(2, "step-1"), (3, "step-1")]


def test_a_bound_of_zero_launches_nothing_so_a_dispatch_climbs_as_far_as_existing_runs_take_it(
    owner, owner_api
):
    """ "A bound of 0 launches nothing, so a dispatch under it climbs only as far as existing runs
    take it." """
    steps = versions(3)
    far, stuck, failing = climbers(3)
    for step in steps[:2]:
        outside_run(owner, step, far, record=PERFECT)
    outside_run(owner, steps[0], failing, record=BROKEN)
    body = config(
        rungs=[rung(s) for s in steps],
        combinations=[far.pk, stuck.pk, failing.pk],
        runsInFlightLimit=0,
    )
    created = owner_api.post("/api/ladders/", body, format="json")
    assert created.status_code == 201, created.json()
    ladder = Ladder.objects.get(pk=created.json()["id"])
    board = owner_api.post(f"/api/ladders/{ladder.pk}/run").json()
    assert board["dispatch"]["runsInFlightLimit"] == 0
    assert [[s["status"] for s in c["slots"]] for c in board["climbers"]] == [
        ["passed", "passed", "running"],
        ["running", "pending", "pending"],
        ["failed", "skipped", "skipped"],
    ]
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0
    assert Job.objects.count() == 0
    assert board["dispatch"]["status"] == "running"


# When a launch pass runs -------------------------------------------------------------------------


def test_a_pass_runs_when_the_dispatch_is_started(owner, owner_api):
    """ "The backend runs a launch pass of the running dispatch when it is started" """
    ladder = make_ladder(owner, versions(1), climbers(2))
    response = owner_api.post(f"/api/ladders/{ladder.pk}/run")
    assert response.status_code == 200
    assert dispatch_of(ladder).passes == 1
    assert len(queued(ladder)) == 2
    assert response.json()["dispatch"]["runs"]["inFlight"] == 2


def test_a_pass_runs_when_one_of_its_climbers_is_retried(owner, owner_api, driver, run_tasks):
    """ "...when one of its climbers is retried" """
    ladder = start(owner, versions(1), climbers(1), retryCount=0)
    work(driver, run_tasks, "infrastructure")
    passes = dispatch_of(ladder).passes
    key = progress_of(ladder)["climbers"][0]["key"]
    response = owner_api.post(
        f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": key}, format="json"
    )
    assert response.status_code == 200, response.json()
    assert dispatch_of(ladder).passes == passes + 1
    assert len(queued(ladder)) == 1


def make_job(launcher, owner, ladder, step, combo):
    if launcher == "dispatch":
        return queued(ladder)[0]
    if launcher == "hand":
        return hand_job(owner, step, combo, retry_count=0)
    return foreign_job(owner, step, combo, origin="plan:7/c1", retry_count=0)


def end_job(ending, driver, owner_api, job):
    if ending == "canceled":
        assert owner_api.post(f"/api/jobs/{job.pk}/cancel").status_code == 200
        return
    [claimed] = [j for j in claim_all(driver) if j.pk == job.pk]
    if ending == "completed":
        push(driver, claimed, record=PERFECT)
    elif ending == "failed":
        fail(driver, claimed, failure="infrastructure")
    else:
        push(driver, claimed, outcome="timedOut", record={})


@pytest.mark.parametrize("launcher", ["dispatch", "hand", "plan"])
@pytest.mark.parametrize("ending", ["completed", "failed", "model failure", "canceled"])
def test_a_pass_runs_when_a_job_of_one_of_its_slots_cells_reaches_a_terminal_state(
    owner, owner_api, driver, run_tasks, launcher, ending
):
    """ "...when a job of one of its rung slots' cells reaches a terminal state" ... "A job feeds
    every running dispatch that holds its cell, whoever launched the job" """
    steps = versions(2)
    [combo] = climbers(1)
    ladder = start(owner, steps, [combo], retryCount=0, runsPerCell=2)
    job = make_job(launcher, owner, ladder, steps[0], combo)
    run_tasks()
    assert ready_passes(ladder) == 0
    end_job(ending, driver, owner_api, job)
    assert ready_passes(ladder) == 1
    passes = dispatch_of(ladder).passes
    run_tasks()
    assert dispatch_of(ladder).passes == passes + 1


def test_a_job_of_a_rung_the_climber_has_not_reached_still_feeds_the_dispatch(
    owner, driver, run_tasks
):
    """ "...a job of one of its rung slots' cells" — every rung slot's cell, reached or not."""
    steps = versions(2)
    [combo] = climbers(1)
    ladder = start(owner, steps, [combo])
    job = hand_job(owner, steps[1], combo)
    run_tasks()
    claim_all(driver)
    push(driver, job, record=PERFECT)
    assert ready_passes(ladder) == 1


def test_a_job_of_a_cell_no_slot_reads_feeds_nothing(owner, driver, run_tasks):
    """ "...when a job of one of its rung slots' cells reaches a terminal state" — and not
    otherwise."""
    steps = versions(2)
    ladder = start(owner, steps[:1], climbers(1))
    job = hand_job(owner, steps[1], climbers(1)[0])
    run_tasks()
    [claimed] = [j for j in claim_all(driver) if j.pk == job.pk]
    push(driver, claimed, record=PERFECT)
    assert ready_passes(ladder) == 0


def test_a_job_feeds_every_running_dispatch_that_holds_its_cell(owner, outsider, driver, run_tasks):
    """ "A job feeds every running dispatch that holds its cell, whoever launched the job, as it
    feeds every filling plan." — two owners' running ladders, not a stopped one."""
    [step] = versions(1)
    [combo] = climbers(1)
    mine = start(owner, [step], [combo], runsPerCell=2)
    theirs = start(outsider, [step], [combo], runsPerCell=2)
    stopped = start(owner, [step], [combo], runsPerCell=2, name="stopped")
    services.stop_dispatch(ladder=stopped)
    run_tasks()
    [job, *_] = claim_all(driver)
    push(driver, job, record=PERFECT)
    assert (ready_passes(mine), ready_passes(theirs), ready_passes(stopped)) == (1, 1, 0)


@pytest.mark.parametrize("ending", ["fail", "push", "lease expiry"])
def test_a_failed_job_that_enqueued_an_automatic_retry_feeds_nothing(
    owner, driver, run_tasks, ending
):
    """ "A failed job that enqueued an automatic retry feeds nothing." """
    ladder = start(owner, versions(1), climbers(1), retryCount=1)
    run_tasks()
    [job] = claim_all(driver)
    if ending == "fail":
        fail(driver, job, failure="infrastructure")
    elif ending == "push":
        push(driver, job, outcome="catastrophic", record={})
    else:
        assert run_services.expire_leases(now=at(60)) == 1
    job.refresh_from_db()
    assert job.status == "failed" and job.retry_id is not None
    assert ready_passes(ladder) == 0


def test_a_pass_runs_once_at_startup_for_every_running_dispatch(owner, driver, run_tasks):
    """ "...and once at startup." (``manage.py launch_passes``) — a dispatch whose queued pass was
    lost is launched again; a stopped dispatch is left alone."""
    steps = versions(1)
    lost = make_ladder(owner, steps, climbers(2), name="lost")
    services.start_dispatch(ladder=lost, run_pass=False)
    DBTaskResult.objects.all().delete()  # the queued pass is lost with the worker
    running = start(owner, steps, climbers(1, prefix="r"), name="running")
    stopped = start(owner, steps, climbers(1, prefix="s"), name="stopped")
    services.stop_dispatch(ladder=stopped)
    before = {d.pk: dispatch_of(d).passes for d in (lost, running, stopped)}

    out = io.StringIO()
    call_command("launch_passes", stdout=out)
    assert "2" in out.getvalue()
    after = {d.pk: dispatch_of(d).passes for d in (lost, running, stopped)}
    assert after == {
        lost.pk: before[lost.pk] + 1,
        running.pk: before[running.pk] + 1,
        stopped.pk: before[stopped.pk],
    }
    assert len(queued(lost)) == 2


# Between an attempt failing and its retry ----------------------------------------------------


@pytest.mark.parametrize("ending", ["fail", "push", "lease expiry"])
def test_a_pass_sees_either_the_attempt_in_flight_or_its_retry_in_flight(
    owner, driver, run_tasks, ending
):
    """ "No launch pass runs between an attempt failing and its retry being enqueued. The retry is
    enqueued, and the attempt stamped with it, before the attempt becomes terminal, including an
    attempt that failed with no run at all. A pass therefore sees either the attempt in flight or
    its retry in flight." — checked at the moment the attempt's terminal status is written."""
    ladder = start(owner, versions(1), climbers(1), retryCount=1)
    run_tasks()
    [job] = claim_all(driver)
    seen = []

    def watch(sender, instance, **kwargs):
        if instance.pk == job.pk and instance.status == "failed":
            seen.append(
                (
                    instance.retry_id is not None,
                    Job.objects.filter(pk=instance.retry_id, status="queued").exists(),
                    Job.objects.filter(cell_key=job.cell_key, status__in=IN_FLIGHT).count(),
                    ready_passes(ladder),
                )
            )

    post_save.connect(watch, sender=Job)
    try:
        if ending == "fail":
            fail(driver, job, failure="infrastructure")
        elif ending == "push":
            push(driver, job, outcome="hung", record={})
        else:
            run_services.expire_leases(now=at(60))
    finally:
        post_save.disconnect(watch, sender=Job)
    assert seen == [(True, True, 1, 0)]
    run_tasks()
    assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0
    assert len(ladder_jobs(ladder)) == 2


# Cancelled jobs and failing passes ------------------------------------------------------------


def test_a_canceled_job_feeds_the_dispatch_so_a_run_cancelled_by_hand_is_launched_again(
    owner, owner_api, run_tasks
):
    """ "A canceled job feeds a dispatch as it feeds a plan ... so a run cancelled by hand is
    launched again." """
    ladder = start(owner, versions(1), climbers(1))
    run_tasks()
    [job] = queued(ladder)
    assert owner_api.post(f"/api/jobs/{job.pk}/cancel").status_code == 200
    assert ready_passes(ladder) == 1
    run_tasks()
    [again] = queued(ladder)
    assert again.pk != job.pk and again.cell_key == job.cell_key


def test_a_cancelled_hand_launch_the_dispatch_waited_on_feeds_it(owner, owner_api, run_tasks):
    """ "A canceled job feeds a dispatch as it feeds a plan" — whoever launched it."""
    [step] = versions(1)
    [combo] = climbers(1)
    by_hand = hand_job(owner, step, combo)
    ladder = start(owner, [step], [combo])
    assert queued(ladder) == []
    assert owner_api.post(f"/api/jobs/{by_hand.pk}/cancel").status_code == 200
    run_tasks()
    assert len(queued(ladder)) == 1


def test_the_pass_runs_after_the_status_is_stored_so_a_failed_pass_never_fails_the_drivers_report(
    owner, owner_api, driver, driver_api, run_tasks, monkeypatch
):
    """ "The pass runs as the ladder's owner after the job's status is stored, so a failed pass
    never fails the driver's report." """
    steps = versions(2)
    ladder = start(owner, steps, climbers(3))
    run_tasks()
    first, second, third = claim_all(driver)

    def broken_pass(**kwargs):
        raise RuntimeError("the launch pass broke")

    monkeypatch.setattr(passes, "run_launch_pass", broken_pass)
    status = driver_api.post(
        f"/api/driver/jobs/{first.pk}/status", {"status": "running"}, format="json"
    )
    assert status.status_code == 200, status.json()
    pushed = driver_api.post(
        "/api/runs/",
        {"job": first.pk, "outcome": "completed", "record": PERFECT, "finishedAt": at(0)},
        format="json",
    )
    assert pushed.status_code == 201, pushed.json()
    failed = driver_api.post(
        f"/api/driver/jobs/{second.pk}/fail", {"failure": "timedOut"}, format="json"
    )
    assert failed.status_code == 200, failed.json()
    cancelled = owner_api.post(f"/api/jobs/{third.pk}/cancel")
    assert cancelled.status_code == 200, cancelled.json()
    assert [Job.objects.get(pk=j.pk).status for j in (first, second, third)] == [
        "completed",
        "failed",
        "canceled",
    ]
    with pytest.raises(RuntimeError):
        run_tasks()  # the pass fails in the worker, not in the driver's request

    monkeypatch.undo()
    run_tasks()
    services.run_launch_pass(ladder_id=ladder.pk)
    # The pass runs as the ladder's owner: the jobs it launches are the owner's, not the driver's.
    launched = queued(ladder)
    assert sorted(j.case for j in launched) == ["step-1", "step-2"]
    assert {j.owner_id for j in launched} == {owner.pk}


def test_a_failed_pass_never_fails_the_run_or_the_retry_request(
    owner, owner_api, driver, run_tasks, monkeypatch
):
    """ "...so a failed pass never fails" the request that triggered it (SPEC §5): its queued task
    runs it later."""
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=0)

    def broken_pass(**kwargs):
        raise RuntimeError("the launch pass broke")

    monkeypatch.setattr(passes, "run_launch_pass", broken_pass)
    response = owner_api.post(f"/api/ladders/{ladder.pk}/run")
    assert response.status_code == 200, response.json()
    assert response.json()["dispatch"]["status"] == "running"
    assert queued(ladder) == []
    monkeypatch.undo()
    run_tasks()
    assert len(queued(ladder)) == 1


# The snapshot a pass launches under ------------------------------------------------------------


def test_every_pass_launches_under_the_limit_and_retry_limit_of_its_dispatchs_snapshot(
    owner, owner_api, driver, run_tasks
):
    """ "Every pass launches under the limit and with the retry limit in the snapshot of the
    dispatch it reads." — editing the ladder after the Run changes neither."""
    combos = climbers(3)
    ladder = start(owner, versions(2), combos, runsInFlightLimit=1, retryCount=2)
    saved = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    body = config(
        rungs=saved["rungs"],
        combinations=[c.pk for c in combos],
        runsInFlightLimit=50,
        retryCount=0,
    )
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", body, format="json").status_code == 200
    peak = []

    def record(job):
        peak.append(len(ladder_jobs(ladder, status__in=IN_FLIGHT)))
        return PERFECT

    work(driver, run_tasks, record, limit=10)
    assert max(peak) == 1
    assert {j.retry_count for j in ladder_jobs(ladder)} == {2}
    assert len(ladder_jobs(ladder)) == 6


def test_a_pass_left_during_an_earlier_dispatch_launches_the_newer_one_under_its_own_limits(
    owner, owner_api, run_tasks
):
    """ "A pass that serves a request left during another pass can be reading a newer dispatch
    than the one that took the claim, and launches it under that dispatch's own limits." """
    [step] = versions(1)
    combos = climbers(3)
    ladder = start(owner, [step], combos, runsInFlightLimit=1, retryCount=0)
    run_tasks()
    [job] = queued(ladder)
    assert owner_api.post(f"/api/jobs/{job.pk}/cancel").status_code == 200
    assert ready_passes(ladder) == 1  # left for the worker while dispatch one is current
    [left] = DBTaskResult.objects.ready()

    services.stop_dispatch(ladder=ladder)
    saved = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    body = config(
        rungs=saved["rungs"],
        combinations=[c.pk for c in combos],
        runsInFlightLimit=3,
        retryCount=5,
    )
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", body, format="json").status_code == 200
    services.start_dispatch(ladder=ladder, run_pass=False)
    newer = dispatch_of(ladder)
    assert queued(ladder) == []

    # Serve the request left during dispatch one, alone: the Run's own request is set aside.
    DBTaskResult.objects.exclude(pk=left.pk).delete()
    assert run_only(left)["dispatch"] == newer.dispatch_id
    launched = queued(ladder)
    assert len(launched) == 3
    assert {j.origin.rsplit("/", 1)[0] for j in launched} == {
        f"ladder:{ladder.pk}/{newer.dispatch_id}"
    }
    assert {j.retry_count for j in launched} == {5}


# Finished ------------------------------------------------------------------------------------


def test_a_pass_marks_the_dispatch_finished_once_every_climber_is_settled_and_none_of_its_jobs_fly(
    owner, driver, run_tasks
):
    """ "A launch pass that finds every climber completed or failed and none of the dispatch's own
    jobs in flight marks the dispatch Finished." — a job still running after an early decision
    keeps it running."""
    ladder = start(owner, versions(1), climbers(2), runsPerCell=2, gate={"earlyStop": True})
    a1, a2, b1, b2 = claim_all(driver)
    run_services.report_status(job_id=a2.pk, driver=driver, status="running")
    push(driver, a1, record=PERFECT)
    push(driver, b1, record=BROKEN)
    push(driver, b2, record=BROKEN)
    run_tasks()
    body = progress_of(ladder)
    assert [c["status"] for c in body["climbers"]] == ["completed", "failed"]
    assert body["dispatch"]["status"] == "running"
    assert dispatch_of(ladder).status == "running"
    push(driver, a2, record=BROKEN)
    run_tasks()
    assert dispatch_of(ladder).status == "finished"
    assert dispatch_of(ladder).ended_at is not None


def test_jobs_others_launched_do_not_hold_the_finish(owner, run_tasks):
    """ "...none of the dispatch's own jobs in flight" — a hand launch of the cell still queued
    does not keep a settled dispatch running."""
    [step] = versions(1)
    [combo] = climbers(1)
    hand_job(owner, step, combo)
    ladder = start(owner, [step], [combo])
    assert queued(ladder) == []
    outside_run(owner, step, combo, record=PERFECT)
    run_tasks()
    assert dispatch_of(ladder).status == "finished"
    assert Job.objects.filter(status="queued").count() == 1


def test_a_blocked_climber_keeps_the_dispatch_from_finishing(owner, driver, run_tasks):
    """ "...every climber completed or failed" — not blocked."""
    ladder = start(owner, versions(1), climbers(2), retryCount=0)
    work(
        driver,
        run_tasks,
        lambda job: "infrastructure" if job.combination.model == "m1" else PERFECT,
    )
    assert [c["status"] for c in progress_of(ladder)["climbers"]] == ["blocked", "completed"]
    services.run_launch_pass(ladder_id=ladder.pk)
    assert dispatch_of(ladder).status == "running"
