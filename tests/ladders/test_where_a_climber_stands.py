"""Seed 004, "Where a climber stands"."""

from ladders import services
from ladders.models import Dispatch
from loopweb.runs.models import ModelEntry
from tests.console.helpers import Browser, text_of
from tests.factories import CaseFactory, CaseVersionFactory
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    climber_of,
    climbers,
    fail_attempt,
    ladder_jobs,
    make_ladder,
    progress_of,
    push_run_of,
    queued,
    rung,
    versions,
    work,
)
from tests.runs.helpers import push_body


def rung_ids(board) -> list[str]:
    return [r["id"] for r in board["dispatch"]["rungs"]]


def retry(api, ladder, key):
    return api.post(f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": key}, format="json")


def test_a_climber_whose_current_rung_is_undecided_and_can_be_launched_is_running(
    owner, driver, run_tasks
):
    """ "running | Running rung X | its current rung is undecided and can be launched", whether
    its runs are launched or wait for room."""
    launched, waiting = climbers(2)
    ladder = make_ladder(owner, versions(2), [launched, waiting], runsInFlightLimit=1)
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    low = rung_ids(board)[0]
    for climber in board["climbers"]:
        assert (climber["status"], climber["currentRung"], climber["blockedReason"]) == (
            "running",
            low,
            None,
        )
    assert [j.combination_id for j in queued(ladder)] == [launched.pk]


def test_a_climber_that_failed_a_rung_is_failed_at_that_rung(owner, driver, run_tasks):
    """ "failed | Failed at rung X | it failed rung X" """
    ladder = make_ladder(owner, versions(3), climbers(1))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: BROKEN if job.case == "step-2" else PERFECT)
    board = progress_of(ladder)
    [climber] = board["climbers"]
    assert (climber["status"], climber["currentRung"]) == ("failed", rung_ids(board)[1])


def test_a_climber_that_passed_every_rung_is_completed(owner, driver, run_tasks):
    """ "completed | Completed | it passed every rung" """
    ladder = make_ladder(owner, versions(2), climbers(1))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    [climber] = progress_of(ladder)["climbers"]
    assert (climber["status"], climber["currentRung"], climber["blockedReason"]) == (
        "completed",
        None,
        None,
    )
    assert [s["status"] for s in climber["slots"]] == ["passed", "passed"]


def test_a_climber_whose_combination_cannot_be_launched_is_blocked_unlaunchable(
    owner, owner_api, driver, run_tasks
):
    """ "unlaunchable | the combination cannot be launched | fix the cause, then Retry" """
    stuck, missing, fine = climbers(3)
    ModelEntry.objects.filter(name=stuck.model).update(launchable=False)
    ModelEntry.objects.filter(name=missing.model).delete()
    ladder = make_ladder(owner, versions(2), [stuck, missing, fine])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    low = rung_ids(board)[0]
    for combo, cause in ((stuck, "not launchable"), (missing, "not in the catalog")):
        climber = climber_of(board, combo.key)
        assert (climber["status"], climber["blockedReason"], climber["currentRung"]) == (
            "blocked",
            "unlaunchable",
            low,
        )
        assert cause in climber["problem"]
    assert [j.combination_id for j in queued(ladder)] == [fine.pk]

    # Fix the cause, then Retry.
    ModelEntry.objects.filter(name=stuck.model).update(launchable=True)
    answer = retry(owner_api, ladder, stuck.key)
    assert answer.status_code == 200, answer.json()
    assert climber_of(answer.json(), stuck.key)["status"] == "running"
    assert sorted(j.combination_id for j in queued(ladder)) == sorted([stuck.pk, fine.pk])


def test_a_climber_whose_launch_used_up_its_retries_is_blocked_failing(
    owner, owner_api, driver, run_tasks
):
    """ "failing | a launch used up its retries with no run | fix the cause, then Retry" """
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=1)
    services.start_dispatch(ladder=ladder)
    for _ in range(2):
        [job] = queued(ladder)
        fail_attempt(driver, job, "infrastructure")
        run_tasks()
    board = progress_of(ladder)
    [climber] = board["climbers"]
    assert (climber["status"], climber["blockedReason"], climber["currentRung"]) == (
        "blocked",
        "failing",
        rung_ids(board)[0],
    )
    assert climber["attempts"] == 2
    assert queued(ladder) == []

    answer = retry(owner_api, ladder, climber["key"])
    assert answer.status_code == 200
    assert answer.json()["climbers"][0]["status"] == "running"
    [relaunch] = queued(ladder)
    assert relaunch.attempt == 1
    work(driver, run_tasks, PERFECT)
    assert progress_of(ladder)["climbers"][0]["status"] == "completed"


def test_a_climber_whose_runs_carry_no_rating_is_blocked_unrated_until_they_are_re_pushed(
    owner, owner_api, driver, driver_api, run_tasks
):
    """ "unrated | completed runs carry no validator rating | re-push the runs, or Stop" """
    case = CaseFactory(slug="jump")
    future = {**rung(CaseVersionFactory(case=case, version="1")), "version": "2"}
    ladder = make_ladder(owner, [], climbers(1), rungs=[future])
    services.start_dispatch(ladder=ladder)
    [run] = work(driver, run_tasks, PERFECT)
    assert run.validator_rating is None
    board = progress_of(ladder)
    [climber] = board["climbers"]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unrated")
    assert climber["tally"]["unrated"] == 1
    # Retry is not its fix.
    assert retry(owner_api, ladder, climber["key"]).status_code == 409

    CaseVersionFactory(case=case, version="2")
    repushed = driver_api.put(f"/api/runs/{run.pk}/", push_body(record=PERFECT), format="json")
    assert repushed.status_code == 200, repushed.json()
    assert repushed.json()["validatorRating"] == "flawless"
    run_tasks()
    board = progress_of(ladder)
    assert board["climbers"][0]["status"] == "completed"
    assert board["dispatch"]["status"] == "finished"


def test_an_unrated_climber_may_instead_be_stopped(owner, owner_api, driver, run_tasks):
    """ "re-push the runs, or Stop" """
    future = {**rung(CaseVersionFactory(case=CaseFactory(slug="jump"))), "version": "2"}
    ladder = make_ladder(owner, [], climbers(1), rungs=[future])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    assert progress_of(ladder)["climbers"][0]["blockedReason"] == "unrated"
    assert owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json").json() == {
        "cancelled": 0
    }
    assert progress_of(ladder)["dispatch"]["status"] == "stopped"


def test_a_blocked_climber_keeps_its_dispatch_running_so_a_retry_resumes_the_climb_within_it(
    owner, owner_api, driver, run_tasks
):
    """ "A blocked climber keeps its dispatch running, so a Retry resumes the climb within
    it." """
    blocked, climbing = climbers(2)
    ladder = make_ladder(owner, versions(2), [blocked, climbing], retryCount=0)
    services.start_dispatch(ladder=ladder)
    dispatch_id = Dispatch.objects.get(ladder=ladder).dispatch_id
    work(
        driver,
        run_tasks,
        lambda job: "infrastructure" if job.combination_id == blocked.pk else PERFECT,
    )
    board = progress_of(ladder)
    assert climber_of(board, blocked.key)["status"] == "blocked"
    assert climber_of(board, climbing.key)["status"] == "completed"
    assert Dispatch.objects.get(ladder=ladder).status == "running"

    retry(owner_api, ladder, blocked.key)
    work(driver, run_tasks, PERFECT)
    board = progress_of(ladder)
    assert board["dispatch"]["id"] == dispatch_id
    assert board["dispatch"]["status"] == "finished"
    assert climber_of(board, blocked.key)["status"] == "completed"
    # The other climber's standing was not climbed again.
    assert [j.combination_id for j in ladder_jobs(ladder)].count(climbing.pk) == 2


def test_a_dispatch_whose_blocked_climbers_cannot_be_helped_is_ended_with_stop(
    owner, owner_api, driver, run_tasks
):
    """ "A dispatch whose blocked climbers cannot be helped is ended with Stop." """
    stuck = climbers(1)[0]
    ModelEntry.objects.filter(name=stuck.model).update(launchable=False)
    ladder = make_ladder(owner, versions(2), [stuck])
    services.start_dispatch(ladder=ladder)
    assert progress_of(ladder)["dispatch"]["status"] == "needsAttention"
    assert owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json").status_code == 200
    board = progress_of(ladder)
    assert board["dispatch"]["status"] == "stopped"
    assert [s["status"] for s in board["climbers"][0]["slots"]] == ["skipped", "skipped"]


def test_only_a_climber_blocked_as_failing_or_unlaunchable_can_be_retried(
    owner, owner_api, driver, run_tasks
):
    """Retry is the fix of two reasons: a running, failed or completed climber is refused."""
    running, failed, completed = climbers(3)
    ladder = make_ladder(owner, versions(1), [running, failed, completed])
    services.start_dispatch(ladder=ladder)
    jobs = {j.combination_id: j for j in queued(ladder)}
    push_run_of(driver, jobs[failed.pk], BROKEN)
    push_run_of(driver, jobs[completed.pk], PERFECT)
    run_tasks()
    for combo in (running, failed, completed):
        answer = retry(owner_api, ladder, combo.key)
        assert answer.status_code == 409, combo.key
        assert answer.json()["detail"]
    assert len(ladder_jobs(ladder)) == 3


def test_the_console_words_each_status_as_the_seed_does(owner, driver, run_tasks):
    """The console wording: "Running rung X", "Blocked at rung X: reason", "Failed at rung X"
    and "Completed"."""
    running, blocked, failed, completed = climbers(4)
    ModelEntry.objects.filter(name=blocked.model).update(launchable=False)
    ladder = make_ladder(owner, versions(2), [running, blocked, failed, completed])
    services.start_dispatch(ladder=ladder)
    jobs = {j.combination_id: j for j in queued(ladder)}
    push_run_of(driver, jobs[failed.pk], BROKEN)
    push_run_of(driver, jobs[completed.pk], PERFECT)
    run_tasks()
    push_run_of(driver, queued(ladder)[-1], PERFECT)  # the completing climber's rung two
    run_tasks()
    assert [c["status"] for c in progress_of(ladder)["climbers"]] == [
        "running",
        "blocked",
        "failed",
        "completed",
    ]
    page = text_of(Browser(owner).get(f"/ladders/{ladder.pk}/"))
    for wording in (
        "Running rung 1",
        "Blocked at rung 1: unlaunchable",
        "Failed at rung 1",
        "Completed",
    ):
        assert wording in page, wording
