"""Two pushes at once bring a ladder's backlog to its threshold: exactly one review.backlog.
Each push counts the backlog under a lock on the ladder's review settings, so the second counts
after the first committed (on PostgreSQL, with threads)."""

import contextlib
import threading

import pytest
from django.db import connection

from ladders import services as ladder_services
from loopweb.reviewing import selectors
from loopweb.reviewing import services as reviewing_services
from loopweb.webhooks.models import Event
from tests.ladders.builders import claim_all, climbers, make_ladder, push, versions
from tests.tasks import run_queued_tasks
from tests.webhooks.helpers import subscribe

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("threshold", [1, 2])
def test_two_pushes_at_once_send_one_backlog_event(owner, driver, monkeypatch, threshold):
    subscribe(owner, "https://hooks.example/loopweb", events=["review.backlog"])
    ladder = make_ladder(owner, versions(1), climbers(2))
    ladder_services.start_dispatch(ladder=ladder)
    reviewing_services.save_settings(ladder=ladder, backlog_threshold=threshold)
    run_queued_tasks()
    jobs = claim_all(driver)
    assert len(jobs) == 2

    # Both pushes reach the count together if nothing holds one back (the barrier gives up
    # after a second when the other is held at the lock).
    barrier = threading.Barrier(2, timeout=1)
    counted = selectors.backlog

    def count_together(ladder):
        with contextlib.suppress(threading.BrokenBarrierError):
            barrier.wait()
        return counted(ladder)

    monkeypatch.setattr(selectors, "backlog", count_together)
    errors = []

    def push_at_once(job):
        try:
            push(driver, job)
        except Exception as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=push_at_once, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert errors == []
    assert Event.objects.filter(type="review.backlog").count() == 1
