"""Seed 004, "Stopping a dispatch"."""

import threading
import time

import pytest
from django.db import connection

from ladders import document, evidence, passes, progress, services, shared_progress
from ladders.models import Dispatch, DispatchClimber, FinalStanding
from loopweb.runs import services as run_services
from loopweb.runs.models import IN_FLIGHT, Job, Run
from tests.console.helpers import Browser, text_of
from tests.ladders.builders import (
    PERFECT,
    climbers,
    fail_attempt,
    foreign_job,
    ladder_jobs,
    make_ladder,
    progress_of,
    push_run_of,
    queued,
    set_status,
    slot_statuses,
    stopped_mid_climb,
    versions,
)
from tests.runs.helpers import hand_job, push_body

UNDER_WAY = ("dispatched", "starting", "running")


def every_status(owner, driver, **overrides):
    """A one-rung dispatch of five climbers whose jobs are running, starting, dispatched,
    pending and queued, in that order of launch."""
    ladder = make_ladder(owner, versions(2), climbers(5), **overrides)
    services.start_dispatch(ladder=ladder)
    jobs = queued(ladder)
    run_services.claim_jobs(driver=driver, limit=4)
    for job, status in zip(jobs, ("running", "starting", "dispatched"), strict=False):
        set_status(driver, job, status)
    for job in jobs:
        job.refresh_from_db()
    assert [j.status for j in jobs] == ["running", "starting", "dispatched", "pending", "queued"]
    return ladder, jobs


def statuses(jobs):
    return [Job.objects.get(pk=j.pk).status for j in jobs]


def test_stop_ends_the_dispatch_and_cancels_its_queued_and_pending_jobs(
    owner, owner_api, driver, run_tasks
):
    """ "Stop ends the dispatch and cancels the queued and pending jobs it launched. Runs
    already dispatched or running finish." """
    ladder, jobs = every_status(owner, driver)
    stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json")
    assert stopped.status_code == 200
    assert stopped.json() == {"cancelled": 2}
    assert statuses(jobs) == ["running", "starting", "dispatched", "canceled", "canceled"]
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"

    # The jobs under way finish, and their runs are stored and counted like any run.
    for job in jobs[:3]:
        _, cancel = run_services.report_status(job_id=job.pk, driver=driver, status="running")
        assert cancel is False
        push_run_of(driver, job, PERFECT)
    run_tasks()
    assert statuses(jobs)[:3] == ["completed"] * 3
    assert Run.objects.filter(counted=True).count() == 3
    assert progress_of(ladder)["dispatch"]["status"] == "stopped"


def test_stop_and_cancel_running_also_cancels_the_jobs_under_way(
    owner, owner_api, driver, driver_api
):
    """ "Stop and cancel running also cancels the dispatched, starting, and running jobs it
    launched. Those are partly or wholly paid for, so the console confirms it first." The
    progress board tells the console how many jobs the confirmation is about."""
    ladder, jobs = every_status(owner, driver)
    board = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert board["dispatch"]["runsUnderWay"] == 3
    stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": True}, "json")
    assert stopped.json() == {"cancelled": 5}
    assert statuses(jobs) == ["canceled"] * 5
    # The driver learns it at its next report, so it stops the run.
    reply = driver_api.post(
        f"/api/driver/jobs/{jobs[0].pk}/status", {"status": "running"}, format="json"
    )
    assert reply.json()["cancel"] is True
    assert (
        owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()["dispatch"]["runsUnderWay"] == 0
    )


def test_stop_and_cancel_running_reaches_the_jobs_an_earlier_dispatch_left_in_flight(
    owner, owner_api, driver, run_tasks
):
    """ "Both also reach the jobs an earlier dispatch of the same ladder launched and left in
    flight. A dispatch started after a plain Stop waits on those jobs as its own slots' jobs in
    flight, so its Stop and cancel running cancels them with its own." """
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder)
    left, _ = queued(ladder)
    set_status(driver, left, "running")
    assert services.stop_dispatch(ladder=ladder) == 1  # the other, pending, job

    owner_api.post(f"/api/ladders/{ladder.pk}/run")
    run_tasks()
    [own] = queued(ladder)
    assert own.combination_id != left.combination_id  # the left job's slot launched nothing
    board = progress_of(ladder)
    waiting = board["climbers"][0]
    assert (waiting["status"], waiting["tally"]["inFlight"]) == ("running", 1)
    assert board["dispatch"]["runs"]["inFlight"] == 1  # only its own job is its run in flight

    stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": True}, "json")
    assert stopped.json() == {"cancelled": 2}
    assert statuses([left, own]) == ["canceled", "canceled"]


def test_a_retry_of_a_job_an_earlier_dispatch_left_is_cancelled_and_the_new_one_relaunches(
    owner, owner_api, driver, run_tasks
):
    """ "A stopped dispatch launches nothing more" and "An automatic retry is checked the same
    way" as a launch pass, against the ladder's running dispatch: the retry of a job an earlier,
    stopped dispatch left running is not that dispatch's, so it is cancelled once it exists, and
    the dispatch waiting on the job launches the slot's run itself."""
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    [left] = queued(ladder)
    set_status(driver, left, "running")
    services.stop_dispatch(ladder=ladder)
    owner_api.post(f"/api/ladders/{ladder.pk}/run")
    assert queued(ladder) == []  # waiting on the job the earlier dispatch left
    fail_attempt(driver, left, "infrastructure")
    run_tasks()
    retry = Job.objects.get(attempt=2)
    assert (retry.origin, retry.status) == (left.origin, "canceled")
    [own] = queued(ladder)
    assert own.origin.split("/")[1] == Dispatch.objects.get(ladder=ladder).dispatch_id
    assert progress_of(ladder)["climbers"][0]["status"] == "running"


def test_a_stop_never_reaches_a_job_a_plan_another_ladder_or_a_hand_launch_enqueued(
    owner, outsider, owner_api, driver, run_tasks
):
    """ "A Stop never reaches a job a plan, another ladder or a hand launch enqueued, even one
    the dispatch is waiting on." """
    [step] = versions(1)
    planned, laddered, by_hand = climbers(3)
    other = make_ladder(outsider, [step], [laddered])
    services.start_dispatch(ladder=other)
    foreign = [
        foreign_job(outsider, step, planned, "plan:4/run-1"),
        *queued(other),
        hand_job(outsider, step, by_hand),
    ]
    set_status(driver, foreign[1], "running")
    ladder = make_ladder(owner, [step], [planned, laddered, by_hand])
    owner_api.post(f"/api/ladders/{ladder.pk}/run")
    assert ladder_jobs(ladder) == []  # the dispatch waits on all three
    before = statuses(foreign)
    assert before == ["pending", "running", "pending"]
    stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": True}, "json")
    assert stopped.json() == {"cancelled": 0}
    assert statuses(foreign) == before


def test_the_jobs_a_stop_of_no_ladder_reaches_are_none(owner, outsider, driver):
    """What a Stop reaches is named by its ladders: asked about none, it reaches no job at all,
    not every job of every owner."""
    [step] = versions(1)
    [climber] = climbers(1)
    services.start_dispatch(ladder=make_ladder(outsider, [step], [climber]))
    assert Job.objects.filter(status__in=IN_FLIGHT).exists()
    assert not evidence.stop_cancels(cancel_running=True).exists()
    assert progress.under_way_of([]) == {}


def test_a_stopped_dispatch_launches_nothing_more_and_its_status_is_stopped(
    owner, owner_api, driver, run_tasks
):
    """ "A stopped dispatch launches nothing more, and its status is Stopped." """
    ladder = make_ladder(owner, versions(3), climbers(2))
    services.start_dispatch(ladder=ladder)
    running, _ = queued(ladder)
    set_status(driver, running, "running")
    services.stop_dispatch(ladder=ladder)
    push_run_of(driver, running, PERFECT)  # its climber passes rung one
    run_tasks()
    assert services.run_launch_pass(ladder_id=ladder.pk) is None
    assert services.launch_passes_for_running() == 0
    assert [j.case for j in ladder_jobs(ladder)] == ["step-1", "step-1"]
    board = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert board["ladder"]["status"] == board["dispatch"]["status"] == "stopped"
    [row] = owner_api.get("/api/ladders/summary").json()["results"]
    assert row["status"] == "stopped"
    # Retry has no running dispatch to act in, and a second Stop has nothing to stop.
    key = board["climbers"][1]["key"]
    retry = owner_api.post(f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": key}, "json")
    assert retry.status_code == 409
    assert owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, "json").status_code == 409


def test_only_the_owner_stops_a_dispatch(owner, reviewer, reviewer_api, outsider_api):
    """Stop is the owner's: a reviewer of the ladder is refused, an outsider does not see it."""
    ladder = make_ladder(owner, versions(1), climbers(1), reviewers=[reviewer.pk])
    services.start_dispatch(ladder=ladder)
    assert reviewer_api.post(f"/api/ladders/{ladder.pk}/stop", {}, "json").status_code == 403
    assert outsider_api.post(f"/api/ladders/{ladder.pk}/stop", {}, "json").status_code == 404
    assert Dispatch.objects.get(ladder=ladder).status == "running"


# The checks around enqueuing ----------------------------------------------------------------


def stop_between(monkeypatch, answers):
    """Make the pass's running checks answer as if a Stop had landed: ``answers`` are the
    answers of the check before enqueuing and the check after."""
    calls = []

    def still_running(dispatch):
        calls.append(dispatch.dispatch_id)
        return answers[len(calls) - 1]

    monkeypatch.setattr(passes, "_still_running", still_running)
    return calls


def test_a_pass_that_finds_its_dispatch_stopped_before_enqueuing_enqueues_nothing(
    owner, driver, monkeypatch
):
    """ "A launch pass checks that its dispatch is still the ladder's running one immediately
    before it enqueues ... the pass either enqueues nothing" """
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder, run_pass=False)
    calls = stop_between(monkeypatch, [False])
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert calls == [Dispatch.objects.get(ladder=ladder).dispatch_id]
    assert report.launched == 0
    assert Job.objects.count() == 0


def test_a_pass_that_finds_its_dispatch_stopped_after_enqueuing_cancels_only_what_it_enqueued(
    owner, outsider, driver, monkeypatch
):
    """ "... and again after ... or cancels the jobs it just enqueued, and only those." """
    low, high = versions(2)
    ladder = make_ladder(owner, [low, high], climbers(3), runsInFlightLimit=2)
    services.start_dispatch(ladder=ladder)
    earlier, deciding = queued(ladder)
    set_status(driver, earlier, "running")
    push_run_of(driver, deciding, PERFECT)
    bystander = hand_job(outsider, low, climbers(1, prefix="x")[0])

    calls = stop_between(monkeypatch, [True, False])
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert len(calls) == 2
    assert report.launched == 0
    just_enqueued = Job.objects.exclude(pk__in=[earlier.pk, deciding.pk, bystander.pk])
    assert just_enqueued.count() == 1
    assert just_enqueued.get().status == "canceled"
    assert statuses([earlier, bystander]) == ["running", "queued"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.xdist_group("concurrency")
def test_a_stop_that_lands_during_a_pass_never_leaves_a_refilled_queue_behind(
    owner, driver, monkeypatch
):
    """ "A Stop that lands during a pass therefore never leaves a refilled queue behind", on
    PostgreSQL with the pass and the Stop on their own connections."""
    ladder = make_ladder(owner, versions(1), climbers(3))
    services.start_dispatch(ladder=ladder, run_pass=False)
    in_pass = threading.Event()
    real = passes._still_running

    def slow_check(dispatch):
        in_pass.set()
        time.sleep(0.3)  # the Stop arrives while the pass is about to enqueue
        return real(dispatch)

    monkeypatch.setattr(passes, "_still_running", slow_check)
    outcome = {}

    def pass_thread():
        try:
            outcome["pass"] = services.run_launch_pass(ladder_id=ladder.pk)
        finally:
            connection.close()

    thread = threading.Thread(target=pass_thread)
    thread.start()
    assert in_pass.wait(10)
    cancelled = services.stop_dispatch(ladder=ladder)
    thread.join(10)
    assert not thread.is_alive()
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"
    assert not Job.objects.filter(status__in=IN_FLIGHT).exists()
    assert outcome["pass"].launched == 3
    assert cancelled == 3
    assert Job.objects.filter(status="canceled").count() == 3


def test_an_automatic_retry_enqueued_after_the_stop_swept_is_cancelled_once_it_exists(
    owner, driver, driver_api, run_tasks
):
    """ "An automatic retry is checked the same way: a retry enqueued while the Stop swept is
    cancelled once it exists." """
    ladder = make_ladder(owner, versions(1), climbers(2), retryCount=2)
    services.start_dispatch(ladder=ladder)
    failing, crashing = queued(ladder)
    for job in (failing, crashing):
        set_status(driver, job, "running")
    services.stop_dispatch(ladder=ladder)

    fail_attempt(driver, failing, "infrastructure")
    answer = driver_api.post("/api/runs/", push_body(crashing, outcome="catastrophic"), "json")
    assert answer.status_code == 201
    run_tasks()
    retries = Job.objects.filter(attempt=2).order_by("id")
    assert [(r.status, r.retry_of.pk) for r in retries] == [
        ("canceled", failing.pk),
        ("canceled", crashing.pk),
    ]
    assert not Job.objects.filter(status__in=IN_FLIGHT).exists()


def test_deleting_a_ladder_deletes_its_dispatch_and_leaves_its_jobs_alone(
    owner, owner_api, driver, run_tasks
):
    """ "Deleting a ladder deletes its dispatch and leaves the dispatch's jobs alone, since they
    record the ladder only as their origin." """
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder)
    jobs = queued(ladder)
    set_status(driver, jobs[0], "running")
    assert owner_api.delete(f"/api/ladders/{ladder.pk}/").status_code == 204
    assert not Dispatch.objects.exists()
    assert not DispatchClimber.objects.exists()
    assert statuses(jobs) == ["running", "pending"]
    assert all(j.origin.startswith(f"ladder:{ladder.pk}/") for j in ladder_jobs(ladder))
    # They run to their end like any job, and nothing launches after them.
    for job in jobs:
        push_run_of(driver, job, PERFECT)
    run_tasks()
    assert statuses(jobs) == ["completed", "completed"]
    assert Job.objects.count() == 2


def test_cancelling_a_deleted_ladders_jobs_as_well_means_stopping_first(owner, owner_api, driver):
    """ "Cancelling them as well means stopping first." """
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder)
    jobs = queued(ladder)
    set_status(driver, jobs[0], "running")
    stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": True}, "json")
    assert stopped.json() == {"cancelled": 2}
    assert owner_api.delete(f"/api/ladders/{ladder.pk}/").status_code == 204
    assert statuses(jobs) == ["canceled", "canceled"]


def test_the_console_confirms_stop_and_cancel_running_first(owner, driver):
    """ "Those are partly or wholly paid for, so the console confirms it first": asking cancels
    nothing and says how many jobs under way it would cancel; confirming cancels them."""
    ladder, jobs = every_status(owner, driver)
    browser = Browser(owner)
    url = f"/ladders/{ladder.pk}/stop/cancel-running"
    asked = browser.get(url)
    assert asked.status_code == 200
    assert "This will cancel 3 jobs that are dispatched, starting or running" in text_of(asked)
    assert statuses(jobs) == ["running", "starting", "dispatched", "pending", "queued"]
    assert Dispatch.objects.get(ladder=ladder).status == "running"

    confirmed = browser.submit(url)
    assert confirmed.status_code == 302
    assert statuses(jobs) == ["canceled"] * 5
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"


def test_a_run_a_plain_stop_let_finish_is_kept_but_its_retried_attempt_counts_for_nothing(
    owner, driver, run_tasks
):
    """ "Runs already dispatched or running finish." — and are kept, but a model failure the
    backend retries is a retried attempt: its retry, cancelled because the dispatch stopped
    ("a stopped dispatch launches nothing more"), leaves it retried (SPEC §3, "Which runs
    count"), so its run does not count and a new Run launches the rung again."""
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    set_status(driver, job, "running")
    services.stop_dispatch(ladder=ladder)

    run = push_run_of(driver, job, {}, outcome="catastrophic")

    [retry] = Job.objects.filter(attempt=2)
    assert retry.status == "canceled"
    assert run.counted is False
    assert Run.objects.get(pk=run.pk).counted is False
    services.start_dispatch(ladder=ladder)
    run_tasks()
    assert progress_of(ladder)["climbers"][0]["status"] == "running"
    [relaunched] = queued(ladder)
    assert relaunched.origin.split("/")[1] == Dispatch.objects.get(ladder=ladder).dispatch_id


@pytest.mark.parametrize("cancel_running", [False, True])
def test_when_a_dispatch_is_stopped_a_slot_whose_automatic_retry_it_cancels_becomes_skipped(
    owner, owner_api, driver, cancel_running
):
    """ "When a dispatch is stopped, every slot that was running, blocked, or pending becomes
    skipped." — a running slot whose attempt ended on a model failure, its automatic retry
    queued, is running: the Stop cancels the retry, and that leaves the attempt retried (its run
    uncounted), so the Stop decides no rung."""
    ladder = make_ladder(owner, versions(2), climbers(1), retryCount=1)
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    set_status(driver, job, "running")
    run = push_run_of(driver, job, {}, outcome="catastrophic")
    [retry] = Job.objects.filter(attempt=2)
    assert retry.status == "queued"
    assert progress_of(ladder)["climbers"][0]["slots"][0]["status"] == "running"

    stopped = owner_api.post(
        f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": cancel_running}, format="json"
    )

    assert stopped.json() == {"cancelled": 1}
    body = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert slot_statuses(body) == [["skipped", "skipped"]]
    assert body["climbers"][0]["status"] != "failed"
    assert body["dispatch"]["slotCounts"]["failed"] == 0
    assert body["dispatch"]["slotCounts"]["skipped"] == 2
    assert Run.objects.get(pk=run.pk).counted is False


def test_a_climber_the_stop_caught_reads_stopped_at_the_rung_it_stood_on(
    owner, owner_api, driver, run_tasks
):
    """ "A stopped dispatch launches nothing more, and its status is Stopped": so is the status of
    each climber it stopped mid-climb, at the rung it stood on (``currentRung``); a climber that
    had completed or failed before the Stop keeps its status."""
    ladder = stopped_mid_climb(owner, driver, run_tasks)
    body = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    rung_1, rung_2 = (r["id"] for r in body["dispatch"]["rungs"])
    read = {
        c["label"].split(" ")[0]: (c["status"], c["currentRung"], c["blockedReason"])
        for c in body["climbers"]
    }
    assert read == {
        "m1": ("completed", None, None),
        "m2": ("failed", rung_1, None),
        "m3": ("stopped", rung_2, None),
        "m4": ("stopped", rung_1, None),
    }
    assert slot_statuses(body) == [
        ["passed", "passed"],
        ["failed", "skipped"],
        ["passed", "skipped"],
        ["skipped", "skipped"],
    ]


def test_the_runs_of_a_stopped_dispatch_say_how_many_the_stop_left_unrun(
    owner, owner_api, driver, run_tasks
):
    """Progress's runs: done counts a skipped slot's whole target, so a stopped dispatch also
    says how many of those runs were never executed because of the Stop (m4's two rungs; m3's
    rung 2 has its job still running, m2's rung 2 was not needed once it failed rung 1)."""
    ladder = stopped_mid_climb(owner, driver, run_tasks)
    runs = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()["dispatch"]["runs"]
    assert runs == {"total": 8, "done": 7, "inFlight": 1, "skippedByStop": 2, "reused": 0}
    [row] = owner_api.get("/api/ladders/summary").json()["results"]
    assert row["runs"] == runs
    # A Stop that cancels the running job leaves m3's rung 2 unrun too.
    again = stopped_mid_climb(owner, driver, run_tasks, cancel_running=True, prefix="again")
    runs = owner_api.get(f"/api/ladders/{again.pk}/progress").json()["dispatch"]["runs"]
    assert runs == {"total": 8, "done": 8, "inFlight": 0, "skippedByStop": 3, "reused": 0}


def test_a_running_dispatch_has_no_runs_skipped_by_a_stop(owner, owner_api, driver, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(1))
    services.start_dispatch(ladder=ladder)
    runs = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()["dispatch"]["runs"]
    assert runs["skippedByStop"] == 0


def test_a_final_standing_stored_before_the_stopped_status_still_reads_stopped(
    owner, owner_api, driver, run_tasks
):
    """A stopped dispatch's final standing written before climbers could read stopped holds
    them as running or blocked, and no count of runs the Stop left unrun: read into the
    document (``document.from_v1``, as the migration to documents reads every such standing),
    they are stopped, and the count is made from the slots."""
    ladder = stopped_mid_climb(owner, driver, run_tasks)
    expected = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    final = FinalStanding.objects.get(dispatch__ladder=ladder)
    old = []
    for climber, was in zip(
        final.climbers, ["completed", "failed", "running", "blocked"], strict=True
    ):
        climber.pop("skippedByStop", None)
        climber["body"]["status"] = was
        if was == "blocked":
            climber["body"].update(blockedReason="failing", attempts=1)
        old.append(climber)
    head, bodies, slots = document.from_v1(final.about, old)
    FinalStanding.objects.filter(pk=final.pk).update(head=head, bodies=bodies, slots=slots)
    shared_progress.reset()  # no board of it kept

    body = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert [c["status"] for c in body["climbers"]] == ["completed", "failed", "stopped", "stopped"]
    assert body["climbers"] == expected["climbers"]
    assert body["dispatch"]["runs"] == expected["dispatch"]["runs"]
    [row] = owner_api.get("/api/ladders/summary").json()["results"]
    assert row["runs"]["skippedByStop"] == 2
