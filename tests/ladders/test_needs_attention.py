"""Seed 004, "Needs attention"."""

from ladders import services
from ladders.models import Dispatch
from loopweb.runs.models import ModelEntry
from tests.console.helpers import Browser, text_of
from tests.ladders.builders import (
    PERFECT,
    climber_of,
    climbers,
    fail_attempt,
    ladder_jobs,
    make_ladder,
    outside,
    progress_of,
    push_run_of,
    queued,
    set_status,
    versions,
    work,
)


def status_of(api, ladder) -> str:
    return api.get(f"/api/ladders/{ladder.pk}/progress").json()["dispatch"]["status"]


def summary_status(api, ladder) -> str:
    rows = api.get("/api/ladders/summary").json()["results"]
    return next(row["status"] for row in rows if row["id"] == ladder.pk)


def one_blocked(owner, driver, run_tasks):
    """A two-rung dispatch whose only climber is blocked as failing on its first rung."""
    steps = versions(2)
    combo = climbers(1)[0]
    ladder = make_ladder(owner, steps, [combo], retryCount=0)
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    fail_attempt(driver, job, "infrastructure")
    run_tasks()
    ladder.steps, ladder.combo = steps, combo
    return ladder


def test_a_dispatch_with_nothing_in_flight_and_a_blocked_climber_needs_attention(
    owner, owner_api, driver, run_tasks
):
    """ "A running dispatch reads Needs attention while all of the following hold: none of the
    jobs it launched is in flight; every climber is completed, failed, or blocked; at least one
    climber is blocked." """
    blocked, done, failed = climbers(3)
    ModelEntry.objects.filter(name=blocked.model).update(launchable=False)
    ladder = make_ladder(owner, versions(1), [blocked, done, failed])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: PERFECT if job.combination_id == done.pk else {})
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["blocked", "completed", "failed"]
    assert board["dispatch"]["runs"]["inFlight"] == 0
    assert status_of(owner_api, ladder) == "needsAttention"
    assert board["ladder"]["status"] == "needsAttention"
    assert summary_status(owner_api, ladder) == "needsAttention"


def test_a_job_of_the_dispatch_in_flight_keeps_it_running(owner, owner_api, driver, run_tasks):
    """ "none of the jobs it launched is in flight": every climber is blocked or done, but an
    early-stopped rung's job still runs, so the dispatch reads Running until it ends."""
    blocked, decided = climbers(2)
    ModelEntry.objects.filter(name=blocked.model).update(launchable=False)
    ladder = make_ladder(
        owner, versions(1), [blocked, decided], runsPerCell=2, gate={"earlyStop": True}
    )
    services.start_dispatch(ladder=ladder)
    deciding, straggler = queued(ladder)
    set_status(driver, straggler, "running")
    push_run_of(driver, deciding, PERFECT)
    run_tasks()
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["blocked", "completed"]
    assert board["dispatch"]["runs"]["inFlight"] == 1
    assert status_of(owner_api, ladder) == "running"
    push_run_of(driver, straggler, PERFECT)
    run_tasks()
    assert status_of(owner_api, ladder) == "needsAttention"


def test_a_running_climber_keeps_the_dispatch_running(owner, owner_api, driver, run_tasks):
    """ "every climber is completed, failed, or blocked": a climber waiting for room it will
    never get (a limit of 0) is running, so the dispatch reads Running."""
    blocked, waiting = climbers(2)
    ModelEntry.objects.filter(name=blocked.model).update(launchable=False)
    ladder = make_ladder(owner, versions(1), [blocked, waiting], runsInFlightLimit=0)
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["blocked", "running"]
    assert board["dispatch"]["runs"]["inFlight"] == 0
    assert status_of(owner_api, ladder) == "running"


def test_without_a_blocked_climber_a_settled_dispatch_finishes(owner, owner_api, driver, run_tasks):
    """ "at least one climber is blocked": completed and failed climbers alone finish it."""
    ladder = make_ladder(owner, versions(1), climbers(2))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: PERFECT if job.combination.model == "m1" else {})
    assert status_of(owner_api, ladder) == "finished"


def test_nothing_the_dispatch_does_by_itself_moves_it_from_needs_attention(
    owner, owner_api, driver, run_tasks
):
    """ "Nothing the dispatch does by itself moves it from there, so it is waiting on its
    owner." """
    ladder = one_blocked(owner, driver, run_tasks)
    assert status_of(owner_api, ladder) == "needsAttention"
    for _ in range(3):
        assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0
    services.launch_passes_for_running()
    run_tasks()
    assert status_of(owner_api, ladder) == "needsAttention"
    assert len(ladder_jobs(ladder)) == 1


def test_needs_attention_changes_nothing_else_about_the_running_dispatch(
    owner, owner_api, driver, run_tasks
):
    """ "Needs attention is a reading of a running dispatch and changes nothing else about it:
    Run stays unavailable, Stop ends it" """
    ladder = one_blocked(owner, driver, run_tasks)
    assert status_of(owner_api, ladder) == "needsAttention"
    assert Dispatch.objects.get(ladder=ladder).status == "running"
    assert owner_api.post(f"/api/ladders/{ladder.pk}/run").status_code == 409
    stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json")
    assert stopped.status_code == 200
    assert status_of(owner_api, ladder) == "stopped"
    assert summary_status(owner_api, ladder) == "stopped"


def test_a_retry_resumes_the_climb_and_it_reads_running_again(owner, owner_api, driver, run_tasks):
    """ "... and a climber's Retry ... resumes the climb, after which it reads Running
    again." """
    ladder = one_blocked(owner, driver, run_tasks)
    key = progress_of(ladder)["climbers"][0]["key"]
    answer = owner_api.post(
        f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": key}, format="json"
    )
    assert answer.json()["dispatch"]["status"] == "running"
    assert status_of(owner_api, ladder) == summary_status(owner_api, ladder) == "running"
    assert len(queued(ladder)) == 1


def test_a_run_arriving_for_a_rung_slot_resumes_the_climb(owner, owner_api, driver, run_tasks):
    """ "... or a run arriving for one of its rung slots resumes the climb, after which it reads
    Running again." """
    ladder = one_blocked(owner, driver, run_tasks)
    assert status_of(owner_api, ladder) == "needsAttention"
    outside(driver, ladder.steps[0], ladder.combo, PERFECT)
    run_tasks()
    board = progress_of(ladder)
    assert climber_of(board, ladder.combo.key)["slots"][0]["status"] == "passed"
    assert status_of(owner_api, ladder) == "running"
    assert [j.case for j in queued(ladder)] == ["step-2"]


def test_the_reading_is_derived_whenever_the_dispatch_status_is_reported(
    owner, owner_api, driver, run_tasks
):
    """ "The backend derives the reading whenever it reports the dispatch's status": on the
    progress board, in the summary, and in the answers of Run and Retry."""
    stuck = climbers(1)[0]
    ModelEntry.objects.filter(name=stuck.model).update(launchable=False)
    ladder = make_ladder(owner, versions(1), [stuck])
    started = owner_api.post(f"/api/ladders/{ladder.pk}/run").json()
    assert started["dispatch"]["status"] == started["ladder"]["status"] == "needsAttention"
    assert summary_status(owner_api, ladder) == "needsAttention"
    answer = owner_api.post(
        f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": stuck.key}, format="json"
    )
    assert answer.json()["dispatch"]["status"] == "needsAttention"  # still not launchable
    assert Dispatch.objects.get(ladder=ladder).status == "running"


def test_the_console_reads_needs_attention_and_running_again_after_a_retry(
    owner, driver, run_tasks
):
    """ "A running dispatch reads Needs attention ... after which it reads Running again", as the
    console's board shows it."""
    ladder = one_blocked(owner, driver, run_tasks)
    browser = Browser(owner)
    assert "Needs attention" in text_of(browser.get(f"/ladders/{ladder.pk}/"))
    services.retry_climber(ladder=ladder, combination_key=ladder.combo.key)
    page = text_of(browser.get(f"/ladders/{ladder.pk}/"))
    assert "Needs attention" not in page
    assert "Running rung 1" in page
