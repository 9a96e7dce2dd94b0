"""A long-running process settles its garbage collector once loaded (``loopweb.memory``): what
it holds then is frozen out of the collector's walks."""

import gc
import threading

import pytest
from django.db import connection

from ladders import evidence, progress, selectors, services, shared_progress
from ladders.models import Ladder
from loopweb import gunicorn_conf, memory
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work


@pytest.fixture
def collector():
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_settling_freezes_what_is_loaded(collector):
    gc.unfreeze()
    memory.settle()
    assert gc.get_freeze_count() > 0
    # Cycles made afterwards are still collected.
    cycle = []
    cycle.append(cycle)
    del cycle
    assert gc.collect() >= 1


def test_web_processes_and_task_workers_settle_once_loaded(collector, monkeypatch):
    from loopweb.ops.management.commands import run_worker

    settled = []
    monkeypatch.setattr(memory, "settle", lambda: settled.append(True))
    monkeypatch.setattr(run_worker.worker, "run", lambda **kwargs: None)
    gunicorn_conf.post_worker_init(worker=None)
    run_worker.Command().handle(interval=1.0, worker_id=None, metrics_port=None)
    assert settled == [True, True]


@pytest.fixture
def collecting():
    """The collector enabled for the test, as a process runs, and as it was afterwards."""
    enabled = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if enabled else gc.disable)()


def test_a_pause_holds_the_collector_until_the_last_pause_ends(collecting):
    with memory.collector_paused():
        assert not gc.isenabled()
        with memory.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause is still on
    assert gc.isenabled()


def test_pauses_in_two_threads_end_with_the_collector_on_whichever_ends_first(collecting):
    first_in, second_in, first_out = (threading.Event() for _ in range(3))
    seen = []

    def first():
        with memory.collector_paused():
            first_in.set()
            second_in.wait(5)
        first_out.set()

    def second():
        first_in.wait(5)
        with memory.collector_paused():
            second_in.set()
            first_out.wait(5)
            seen.append(gc.isenabled())  # the first thread's pause ended, this one's has not

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert seen == [False]
    assert gc.isenabled()


def test_pauses_that_overlap_without_end_turn_the_collector_on_again(collecting, monkeypatch):
    """A busy web process's threads may pause it in turn with never a moment none is under way:
    the collector is on again once it has been off for ``MAX_OFF`` seconds, so cycles made
    meanwhile are still collected, and stays on until no pause is under way."""
    clock = [100.0]
    monkeypatch.setattr(memory, "_now", lambda: clock[0])
    outer = memory.collector_paused()
    outer.__enter__()
    assert not gc.isenabled()
    with memory.collector_paused():  # begun and ended while the outer one holds it
        clock[0] += memory.MAX_OFF / 2
    assert not gc.isenabled()
    for _ in range(2):  # each pause ends while another is still under way
        inner = memory.collector_paused()
        inner.__enter__()
        outer.__exit__(None, None, None)
        outer = inner
        clock[0] += memory.MAX_OFF
    assert gc.isenabled()
    with memory.collector_paused():  # the overlap goes on: the collector stays on
        assert gc.isenabled()
    outer.__exit__(None, None, None)
    assert gc.isenabled()
    with memory.collector_paused():  # none was under way: a pause holds it again
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_leaves_a_collector_turned_off_off(collecting):
    gc.disable()
    with memory.collector_paused():
        pass
    assert not gc.isenabled()


def test_a_pause_ends_when_what_it_held_raises(collecting):
    with pytest.raises(RuntimeError), memory.collector_paused():
        raise RuntimeError
    assert gc.isenabled()


def test_a_launch_pass_a_stop_and_a_boards_computation_run_with_the_collector_paused(
    owner, driver, run_tasks, collecting, monkeypatch
):
    """A board's computation makes tens of thousands of objects and no garbage: the collector
    walking them again and again while they were made cost a 200 × 50 board's read a fifth of
    its time (docs/performance.md)."""
    collecting_while = []
    for module, name in [(evidence, "load"), (progress, "live_part")]:
        original = getattr(module, name)

        def spy(*args, original=original, **kwargs):
            collecting_while.append(gc.isenabled())
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)

    def computed() -> list[bool]:
        found = list(collecting_while)
        collecting_while.clear()
        assert found, "nothing was computed"
        return found

    ladder = make_ladder(owner, versions(2, prefix="gc"), climbers(3, prefix="gcc"))
    services.start_dispatch(ladder=ladder, run_pass=False)
    services.run_launch_pass(ladder_id=ladder.pk)
    assert not any(computed())
    work(driver, run_tasks, PERFECT, rounds=1)
    collecting_while.clear()
    body = selectors.ladder_progress(Ladder.objects.get(pk=ladder.pk))
    assert not any(computed())
    assert body["dispatch"]["slotCounts"]["passed"] == 3
    shared_progress.reset()
    assert len(shared_progress.read(ladder.pk).parts) == 3
    assert not any(computed())
    services.stop_dispatch(ladder=Ladder.objects.get(pk=ladder.pk), by=owner)
    assert not any(computed())  # the final standing
    assert gc.isenabled()


@pytest.mark.postgres
def test_a_pass_and_a_stop_wait_for_their_locks_with_the_collector_on(owner, collecting):
    """Only the computation is paused: a pass or a Stop waiting for the dispatch's lock (or a
    Stop for its jobs') pauses nothing."""
    locking_while = []

    def note_locks(execute, sql, params, many, context):
        if "FOR UPDATE" in sql or "FOR NO KEY UPDATE" in sql:
            locking_while.append(gc.isenabled())
        return execute(sql, params, many, context)

    ladder = make_ladder(owner, versions(2, prefix="gl"), climbers(2, prefix="glc"))
    services.start_dispatch(ladder=ladder, run_pass=False)
    with connection.execute_wrapper(note_locks):
        services.run_launch_pass(ladder_id=ladder.pk)
        assert locking_while == [True]
        services.stop_dispatch(ladder=Ladder.objects.get(pk=ladder.pk), by=owner)
    assert len(locking_while) == 3 and all(locking_while)  # the dispatch's, then its jobs'
