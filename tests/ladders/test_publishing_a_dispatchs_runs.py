"""Seed 004, "Publishing a dispatch's runs": which runs a dispatch publishes, and which it leaves
as they are."""

import pytest

from ladders import services
from loopweb.runs import services as run_services
from loopweb.runs.models import Run
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    foreign_job,
    progress_of,
    push,
    versions,
    work,
)
from tests.runs.helpers import at, hand_job, outside_run
from tests.support.ladders import start

MODEL_FAILURES = ["catastrophic", "timedOut", "harnessError", "limitExceeded", "hung"]


def published(run) -> bool:
    return Run.objects.get(pk=run.pk).published


def test_a_run_the_dispatch_launches_publishes_itself_when_it_completes(
    owner, driver, outsider_api, run_tasks
):
    """ "A rung is a validator-rated case, so a run a dispatch launches publishes itself when it
    completes." — published by the push that completes it, and then readable by anyone signed
    in."""
    ladder = start(owner, versions(2), climbers(2))
    run_tasks()
    first, second = claim_all(driver)
    run = push(driver, first, record=PERFECT)
    assert published(run)
    assert outsider_api.get(f"/api/runs/{run.pk}/").json()["published"] is True
    push(driver, second, record=PERFECT)
    work(driver, run_tasks, BROKEN)  # rung two: broken runs are published too
    runs = Run.objects.filter(job__origin__startswith=f"ladder:{ladder.pk}/")
    assert runs.count() == 4
    assert all(r.published for r in runs)


@pytest.mark.parametrize("launcher", ["outside", "hand", "plan"])
def test_a_pass_publishes_a_completed_slot_run_another_launch_produced(
    owner, outsider, driver, launcher
):
    """ "Every launch pass of a running dispatch also applies that rule to the slot runs it reads,
    so a completed run the dispatch counts is published even when another launch produced it and
    left it unpublished." """
    [step] = versions(1)
    [combo] = climbers(1)
    if launcher == "outside":
        run = outside_run(outsider, step, combo, record=BROKEN)
    else:
        if launcher == "hand":
            job = hand_job(outsider, step, combo)
        else:
            job = foreign_job(outsider, step, combo, origin="plan:3/c9")
        claim_all(driver)
        run = push(driver, job, record=PERFECT)
    assert not published(run)
    ladder = start(owner, [step], [combo])
    assert progress_of(ladder)["climbers"][0]["slots"][0]["tally"]["counted"] == 1
    assert published(run)


def test_a_run_beyond_a_slots_target_is_left_as_it_is(owner):
    """ "A run beyond a slot's target ... [is] left as [it is]." """
    [step] = versions(1)
    [combo] = climbers(1)
    first = outside_run(owner, step, combo, record=PERFECT, finished_at=at(-20))
    beyond = outside_run(owner, step, combo, record=PERFECT, finished_at=at(-10))
    start(owner, [step], [combo])
    assert published(first)
    assert not published(beyond)


def test_a_run_of_a_rung_the_climber_has_not_reached_is_left_as_it_is(owner, driver, run_tasks):
    """ "...a run of a rung the climber has not reached ... [is] left as [it is]." — until the
    climber reaches it."""
    steps = versions(2)
    [combo] = climbers(1)
    ahead = outside_run(owner, steps[1], combo, record=PERFECT)
    ladder = start(owner, steps, [combo])
    services.run_launch_pass(ladder_id=ladder.pk)
    assert not published(ahead)
    work(driver, run_tasks, PERFECT)  # rung one passes; rung two reads the run
    assert published(ahead)


def test_a_run_of_a_rung_beyond_a_failed_one_is_never_published(owner, driver, run_tasks):
    """ "...a run of a rung the climber has not reached ... [is] left as [it is]." """
    steps = versions(2)
    [combo] = climbers(1)
    beyond = outside_run(owner, steps[1], combo, record=PERFECT)
    ladder = start(owner, steps, [combo])
    work(driver, run_tasks, BROKEN)
    assert progress_of(ladder)["climbers"][0]["status"] == "failed"
    assert not published(beyond)


@pytest.mark.parametrize("outcome", MODEL_FAILURES)
def test_a_run_that_ended_on_the_models_own_failure_is_left_as_it_is(
    owner, driver, run_tasks, outcome
):
    """ "...and a run that ended on the model's own failure [is] left as [it is]." — though the
    gate read it."""
    ladder = start(owner, versions(1), climbers(1), retryCount=0)
    [job] = claim_all(driver)
    run = push(driver, job, outcome=outcome, record={})
    run_tasks()
    assert progress_of(ladder)["climbers"][0]["tally"]["counted"] == 1
    assert not published(run)


def test_only_a_running_dispatchs_passes_publish(owner):
    """ "Every launch pass of a running dispatch also applies that rule" — a stopped dispatch runs
    no pass, so a run its slot would read stays as it is."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo])
    services.stop_dispatch(ladder=ladder)
    run = outside_run(owner, step, combo, record=PERFECT)
    assert services.run_launch_pass(ladder_id=ladder.pk) is None
    assert not published(run)


@pytest.mark.parametrize("stop", [False, True], ids=["running", "after a stop"])
def test_a_run_the_dispatch_launched_is_published_in_the_push_that_completes_it(
    owner, driver, stop
):
    """ "a run a dispatch launches publishes itself when it completes" — in the push itself,
    before any pass, and also when the dispatch was stopped while the run was under way."""
    ladder = start(owner, versions(1), climbers(1))
    [job] = claim_all(driver)
    run_services.report_status(job_id=job.pk, driver=driver, status="running")
    if stop:
        services.stop_dispatch(ladder=ladder)

    run = push(driver, job, record=PERFECT)

    assert run.published is True
    assert published(run)


def test_a_run_the_dispatch_launched_that_ends_on_a_model_failure_stays_unpublished(owner, driver):
    start(owner, versions(1), climbers(1), retryCount=0)
    [job] = claim_all(driver)
    run = push(driver, job, outcome="timedOut", record={})
    assert not published(run)
