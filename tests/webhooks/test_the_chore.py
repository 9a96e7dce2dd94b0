"""The worker's ``webhooks`` chore: attempts no task will send (their sender died holding them),
and the delivery log's pruning."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from loopweb.ops.chores import CHORES
from loopweb.webhooks import services
from loopweb.webhooks.models import Delivery, Event
from loopweb.webhooks.tasks import deliver
from tests.webhooks.helpers import deliver_all, log_of, subscribe

pytestmark = pytest.mark.django_db


def test_an_attempt_whose_sender_died_is_queued_again_once_its_hold_runs_out(owner, receiver):
    subscription = subscribe(owner, receiver.url)
    delivery = services.ping(subscription=subscription)
    # A sender held it and died: its task is gone, the hold ran out long ago.
    DBTaskResult.objects.filter(task_path=deliver.module_path).delete()
    long_ago = timezone.now() - timedelta(minutes=10)
    Delivery.objects.filter(pk=delivery.pk).update(due_at=long_ago, held_until=long_ago)
    assert CHORES["webhooks"]().startswith("handled 1 ")
    assert services.sweep() == 0  # queued once, not again while its task waits
    deliver_all()
    assert [(a.status, a.attempt) for a in log_of(subscription)] == [("delivered", 1)]
    assert len(receiver.requests) == 1


def test_an_attempt_still_held_or_recently_due_is_left_to_its_task(owner, receiver):
    subscription = subscribe(owner, receiver.url)
    delivery = services.ping(subscription=subscription)
    DBTaskResult.objects.filter(task_path=deliver.module_path).delete()
    assert services.sweep() == 0  # due just now: its task may simply be behind others
    Delivery.objects.filter(pk=delivery.pk).update(
        due_at=timezone.now() - timedelta(minutes=10),
        held_until=timezone.now() + timedelta(seconds=30),
    )
    assert services.sweep() == 0  # a sender holds it


def test_without_the_database_task_backend_the_chore_sends(owner, receiver, settings):
    subscription = subscribe(owner, receiver.url)
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
    services.ping(subscription=subscription)
    assert not receiver.requests  # not inside the request that asked for it
    assert services.sweep() == 1
    assert [r.event for r in receiver.requests] == ["webhook.ping"]


def test_the_log_is_kept_for_its_days(owner, receiver, settings):
    subscription = subscribe(owner, receiver.url)
    services.ping(subscription=subscription)
    deliver_all()
    services.ping(subscription=subscription)
    old = timezone.now() - timedelta(days=settings.LOOPWEB_WEBHOOK_KEEP_DAYS + 1)
    Event.objects.update(created_at=old)
    assert services.prune() == 1  # the delivered one; the pending one waits for its attempt
    assert [a.status for a in log_of(subscription)] == ["pending"]
