"""Fault: the queue lost its passes (the worker was down, or its tasks were dropped). At start-up
``manage.py launch_passes`` runs one pass for every running dispatch, which recovers each of them
from the state in the database alone; a stopped dispatch is left alone; running it again changes
nothing."""

import io

import pytest
from django.core.management import call_command
from django.tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from ladders import services
from ladders.tasks import launch_pass
from loopweb.runs.models import JobStatus
from tests.ladders.builders import (
    PERFECT,
    claim_all,
    climbers,
    dispatch_of,
    ladder_jobs,
    make_ladder,
    push,
    versions,
)

pytestmark = pytest.mark.django_db


def lose_every_queued_task():
    DBTaskResult.objects.all().delete()


def launch_passes() -> str:
    out = io.StringIO()
    call_command("launch_passes", stdout=out)
    return out.getvalue()


def test_launch_passes_at_start_up_recovers_every_running_dispatch(
    owner, outsider, driver, run_tasks
):
    steps = versions(2)
    never_launched = make_ladder(owner, steps, climbers(2, "a"))
    services.start_dispatch(ladder=never_launched, run_pass=False)

    mid_climb = make_ladder(owner, steps, climbers(1, "b"))
    services.start_dispatch(ladder=mid_climb)
    one_rung = make_ladder(owner, steps[:1], climbers(1, "c"))
    services.start_dispatch(ladder=one_rung)
    limited = make_ladder(outsider, steps, climbers(3, "e"), runsInFlightLimit=1)
    services.start_dispatch(ladder=limited, run_pass=False)
    stopped = make_ladder(owner, steps, climbers(1, "d"))
    services.start_dispatch(ladder=stopped, run_pass=False)
    services.stop_dispatch(ladder=stopped)
    # A driver finishes the first jobs, but the passes their endings queued are lost.
    for job in claim_all(driver):
        push(driver, job, record=PERFECT)
    lose_every_queued_task()
    # And a pass a killed worker was running is left marked running.
    interrupted = launch_pass.enqueue(never_launched.pk)
    DBTaskResult.objects.filter(pk=interrupted.id).update(status=TaskResultStatus.RUNNING)

    out = launch_passes()

    assert "ran launch passes for 4 running dispatch(es)" in out
    assert len(ladder_jobs(never_launched, status=JobStatus.QUEUED)) == 2
    assert len(ladder_jobs(mid_climb, status=JobStatus.QUEUED)) == 1  # the second rung
    assert dispatch_of(one_rung).status == "finished"
    assert len(ladder_jobs(limited, status=JobStatus.QUEUED)) == 1  # under its limit of 1
    assert ladder_jobs(stopped) == []
    assert dispatch_of(stopped).status == "stopped"
    assert DBTaskResult.objects.get(pk=interrupted.id).status == TaskResultStatus.READY

    before = {ladder.pk: ladder_jobs(ladder) for ladder in (never_launched, mid_climb, limited)}
    launch_passes()
    run_tasks()
    after = {ladder.pk: ladder_jobs(ladder) for ladder in (never_launched, mid_climb, limited)}
    assert after == before
    assert DBTaskResult.objects.get(pk=interrupted.id).status == TaskResultStatus.SUCCESSFUL
