"""A long-running process settles its garbage collector once loaded (``loopweb.memory``): what
it holds then is frozen out of the collector's walks."""

import gc

import pytest

from loopweb import gunicorn_conf, memory


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
