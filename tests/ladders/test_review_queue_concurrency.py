"""Reviewers working one ladder's queue at once, on PostgreSQL, each thread with its own
connection: no run is ever reviewed beyond the ladder's number of reviews per run."""

import threading
from collections import Counter

import pytest
from django.core.exceptions import PermissionDenied
from django.db import close_old_connections, connection

from ladders import queue as review_queue
from ladders import services
from ladders.models import Ladder
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Review, Role
from tests.factories import UserFactory
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("concurrency"),
    pytest.mark.postgres,
]


def threaded(reviewers, body) -> list[BaseException]:
    errors: list[BaseException] = []

    def run(user):
        try:
            body(user)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(user,), daemon=True) for user in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


@pytest.fixture
def ladder(owner, driver, run_tasks):
    reviewers = [UserFactory(username=f"r{i}", role=Role.REVIEWER) for i in range(3)]
    ladder = make_ladder(owner, versions(1), climbers(6), reviewers=[u.pk for u in reviewers])
    Ladder.objects.filter(pk=ladder.pk).update(reviews_per_run=2)
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    return Ladder.objects.get(pk=ladder.pk), reviewers


def test_reviewers_posting_the_same_run_at_once_never_pass_its_number_of_reviews(ladder):
    ladder, reviewers = ladder
    runs = [e["run"] for e in review_queue.queue_for(ladder, ladder.owner)]
    barrier = threading.Barrier(len(reviewers))
    saved: Counter = Counter()
    lock = threading.Lock()

    def body(user):
        for run in runs:
            barrier.wait(timeout=60)
            try:
                review_queue.review(ladder, user, run, {"aesthetic_rating": 3})
            except Conflict:
                continue
            with lock:
                saved[run] += 1

    assert threaded(reviewers, body) == []
    counts = Counter(Review.objects.filter(run_id__in=runs).values_list("run_id", flat=True))
    assert counts == {run: 2 for run in runs}
    assert saved == counts


def test_reviewers_working_the_queue_by_reservations_share_the_runs_out(ladder):
    """Each reviewer opens the first run their queue lists and reviews it, as the console does,
    until their queue is empty: every run ends with its two reviews, none with three."""
    ladder, reviewers = ladder
    runs = [e["run"] for e in review_queue.queue_for(ladder, ladder.owner)]
    refused: Counter = Counter()

    def body(user):
        for _ in range(50):
            entries = review_queue.queue_for(ladder, user)
            if not entries:
                return
            run = entries[0]["run"]
            try:
                review_queue.reserve(ladder, user, run)
                review_queue.review(ladder, user, run, {"aesthetic_rating": 4})
            except (Conflict, PermissionDenied):
                refused[user.username] += 1
        raise AssertionError(f"{user} never saw an empty queue")

    assert threaded(reviewers, body) == []
    counts = Counter(Review.objects.filter(run_id__in=runs).values_list("run_id", flat=True))
    assert counts == {run: 2 for run in runs}
    per_reviewer = Counter(
        Review.objects.filter(run_id__in=runs).values_list("reviewer__username", flat=True)
    )
    assert sum(per_reviewer.values()) == 2 * len(runs)
