"""A record and a line of activity are written while their dispatch is locked (the locks go
ladder, then dispatch): writing them must never wait on the ladder's row, which a Run or an edit
holds while it waits for the dispatch. Checked on PostgreSQL with a thread holding that row."""

import contextlib
import threading

import pytest
from django.db import transaction

from ladders import services
from ladders.models import Ladder
from loopweb.history.models import Activity, DispatchRecord
from tests.ladders.builders import climbers, make_ladder, outside, versions
from tests.support.threads import Background

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@contextlib.contextmanager
def ladder_row_held(ladder):
    """Another connection holds the ladder's row, as Run and an edit do first, for the block."""
    held, release = threading.Event(), threading.Event()

    def hold():
        with transaction.atomic():
            Ladder.objects.select_for_update().get(pk=ladder.pk)
            held.set()
            release.wait(30)

    holder = Background(hold)
    assert held.wait(10)
    try:
        yield
    finally:
        release.set()
        holder.join()


def finished_beside(ladder, work) -> bool:
    """Whether ``work`` finishes (in a thread) while the ladder's row is held."""
    with ladder_row_held(ladder):
        background = Background(work)
        finished = background.finished(10)
    background.join()  # the row released: it finishes now if it had waited
    return finished


@pytest.mark.parametrize("ending", ["stop", "finish"])
def test_ending_a_dispatch_never_waits_on_the_ladders_row(owner, driver, run_tasks, ending):
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = make_ladder(owner, [step], [combo])
    if ending == "finish":
        outside(driver, step, combo)  # the first pass decides the rung and finishes
    services.start_dispatch(ladder=ladder, by=owner, run_pass=False)

    if ending == "stop":
        ended = finished_beside(ladder, lambda: services.stop_dispatch(ladder=ladder, by=owner))
    else:
        ended = finished_beside(ladder, lambda: services.run_launch_pass(ladder_id=ladder.pk))
    assert ended, "ending the dispatch waited for the ladder's row"
    # Its record is written by the task the ending queued, which takes no ladder row either.
    assert finished_beside(ladder, run_tasks)
    assert DispatchRecord.objects.filter(ladder=ladder).count() == 1


def test_a_retry_writes_its_line_without_waiting_on_the_ladders_row(owner, driver, run_tasks):
    from tests.ladders.builders import work

    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=0)
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, lambda job: "infrastructure")
    key = ladder.dispatch.climbers.get().combination_key
    retried = finished_beside(
        ladder,
        lambda: services.retry_climber(
            ladder=ladder, combination_key=key, by=owner, run_pass=False
        ),
    )
    assert retried, "a Retry waited for the ladder's row"
    assert Activity.objects.filter(ladder=ladder, action="retry").count() == 1
