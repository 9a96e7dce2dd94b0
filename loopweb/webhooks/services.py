"""Webhooks' writes: subscriptions, the outbox, and sending.

An event is recorded in the transaction that causes it (``record``): the event row, one
delivery row per subscription that wants it, and the delivery task, all committing or rolling
back with the change. The task worker sends (``send``), outside any transaction; the outcome
and the next attempt are written in one transaction afterwards.
"""

import json
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db import DatabaseBackend
from django_tasks_db.models import DBTaskResult

from loopweb.webhooks import payloads, policy, sender
from loopweb.webhooks.events import PING
from loopweb.webhooks.models import Delivery, DeliveryStatus, Event, Subscription
from loopweb.webhooks.tasks import deliver

#: How long past the timeout a sender's hold on an attempt lasts before another may take it.
HOLD_GRACE = timedelta(seconds=30)


def timeout() -> float:
    return float(settings.LOOPWEB_WEBHOOK_TIMEOUT)


# Subscriptions --------------------------------------------------------------------------------


def create_subscription(
    *, owner, url: str, events: list[str], active: bool, format: str, deployment_wide: bool
) -> Subscription:
    """Register an endpoint; its ``secret`` is minted here and shown once by the caller."""
    with transaction.atomic():
        return Subscription.objects.create(
            owner=owner,
            url=url,
            events=events,
            active=active,
            format=format,
            deployment_wide=deployment_wide,
        )


def update_subscription(*, subscription: Subscription, **fields) -> Subscription:
    with transaction.atomic():
        for name, value in fields.items():
            setattr(subscription, name, value)
        subscription.save()
    return subscription


def delete_subscription(*, subscription: Subscription) -> None:
    with transaction.atomic():
        subscription.delete()


def rotate_secret(*, subscription: Subscription) -> Subscription:
    from loopweb.webhooks.models import mint_secret

    return update_subscription(subscription=subscription, secret=mint_secret())


# The outbox -----------------------------------------------------------------------------------


def interested(*, owner_id: int | None = None, ladder_id: int | None = None) -> list[Subscription]:
    """Active subscriptions that hear about an owner's (or a ladder's owner's) ladders and
    proposals, and the deployment-wide ones: one query."""
    from ladders.models import Ladder

    scope = Q(deployment_wide=True)
    if owner_id is not None:
        scope |= Q(owner_id=owner_id)
    if ladder_id is not None:
        scope |= Q(owner_id__in=Ladder.objects.filter(pk=ladder_id).values("owner_id"))
    return list(Subscription.objects.filter(scope, active=True).only("id", "events"))


@dataclass(frozen=True, slots=True)
class News:
    type: str
    data: dict
    text: str


def record(news: list[News], *, owner_id: int | None, to: list[Subscription]) -> list[Event]:
    """Record events in the caller's transaction, with a delivery for each subscription of
    ``to`` that wants its type, and queue those deliveries."""
    now = timezone.now()
    events, deliveries = [], []
    for item in news:
        wanting = [s for s in to if s.wants(item.type)]
        if not wanting:
            continue
        event = Event.objects.create(
            type=item.type, owner_id=owner_id, data=item.data, text=item.text, created_at=now
        )
        events.append(event)
        deliveries += [Delivery(subscription=s, event=event, due_at=now) for s in wanting]
    if deliveries:
        schedule(Delivery.objects.bulk_create(deliveries))
    return events


def schedule(deliveries: list[Delivery]) -> None:
    """Queue each delivery for its due moment, in the caller's transaction. Without the
    database task backend (the immediate one would send inside the request), the worker's
    ``webhooks`` chore sends them when due."""
    backend = deliver.get_backend()
    if not isinstance(backend, DatabaseBackend):
        return
    now = timezone.now()
    for delivery in deliveries:
        task = deliver
        if delivery.due_at > now and backend.supports_defer:
            task = deliver.using(run_after=delivery.due_at)
        task.enqueue(delivery.pk)


def ping(*, subscription: Subscription) -> Delivery:
    """A test event for this subscription alone: one attempt, whatever it lists or its state."""
    data, text = payloads.ping(subscription)
    now = timezone.now()
    with transaction.atomic():
        event = Event.objects.create(
            type=PING, owner_id=subscription.owner_id, data=data, text=text, created_at=now
        )
        delivery = Delivery.objects.create(
            subscription=subscription, event=event, due_at=now, manual=True
        )
        schedule([delivery])
    return delivery


def redeliver(*, delivery: Delivery) -> Delivery:
    """Send a delivery's event again, now: one attempt, numbered after the last one."""
    with transaction.atomic():
        # Two redeliveries pressed at once would number the same attempt.
        Subscription.objects.select_for_update(no_key=True).filter(
            pk=delivery.subscription_id
        ).first()
        last = (
            Delivery.objects.filter(
                subscription_id=delivery.subscription_id, event_id=delivery.event_id
            )
            .order_by("-attempt")
            .values_list("attempt", flat=True)
            .first()
        )
        again = Delivery.objects.create(
            subscription_id=delivery.subscription_id,
            event_id=delivery.event_id,
            attempt=(last or 0) + 1,
            manual=True,
            due_at=timezone.now(),
        )
        schedule([again])
    return again


# Sending --------------------------------------------------------------------------------------


def body_of(event: Event, format: str) -> bytes:
    if format == "text":
        document = {"text": event.text}
    else:
        document = {
            "id": event.event_id,
            "type": event.type,
            "createdAt": event.created_at.isoformat(),
            "data": event.data,
        }
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode()


def headers_of(event: Event, secret: str, body: bytes, timestamp: int) -> dict[str, str]:
    return {
        "X-Loopweb-Event": event.type,
        "X-Loopweb-Delivery": event.event_id,
        "X-Loopweb-Timestamp": str(timestamp),
        "X-Loopweb-Signature": sender.signature(secret, timestamp, body),
    }


def hold(delivery_id: int, now) -> bool:
    """Take a pending attempt for sending (compare-and-set): of two workers given the same
    task, one sends; an attempt whose sender died is taken again once its hold runs out."""
    return bool(
        Delivery.objects.filter(pk=delivery_id, status=DeliveryStatus.PENDING)
        .filter(Q(held_until__isnull=True) | Q(held_until__lt=now))
        .update(held_until=now + timedelta(seconds=timeout()) + HOLD_GRACE)
    )


def send(*, delivery_id: int) -> str:
    """Make one attempt (the task's body). No transaction is open while the request is out."""
    now = timezone.now()
    if not hold(delivery_id, now):
        return "not pending"
    delivery = Delivery.objects.select_related("subscription", "event").get(pk=delivery_id)
    subscription, event = delivery.subscription, delivery.event
    if not delivery.manual and not subscription.active:
        _finish(delivery, None, error="the subscription is not active", at=now)
        return "inactive"
    body = body_of(event, subscription.format)
    timestamp = int(now.timestamp())
    result = sender.post(
        subscription.url,
        body,
        headers_of(event, subscription.secret, body, timestamp),
        timeout=timeout(),
    )
    _finish(delivery, result, at=now)
    return f"{result.answer.code or result.answer.error} in {result.duration_ms} ms"


def _finish(delivery: Delivery, result: sender.Result | None, *, at, error: str = "") -> None:
    """Write how the attempt went, the next attempt if there is one, and the subscription's
    health, in one transaction."""
    subscription = delivery.subscription
    answer = result.answer if result else policy.Answer(error=policy.REFUSED)
    delay = policy.next_delay(
        answer,
        attempt=delivery.attempt,
        max_attempts=settings.LOOPWEB_WEBHOOK_MAX_ATTEMPTS,
        base=settings.LOOPWEB_WEBHOOK_RETRY_BASE,
        single=delivery.manual or subscription.failing,
    )
    with transaction.atomic():
        written = Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.PENDING).update(
            status=DeliveryStatus.DELIVERED if answer.succeeded else DeliveryStatus.FAILED,
            delivered_at=at,
            response_code=answer.code,
            duration_ms=result.duration_ms if result else None,
            response_excerpt=result.excerpt if result else "",
            error=(result.error if result else error)
            or ("" if answer.succeeded else f"HTTP {answer.code}"),
            will_retry=delay is not None,
            held_until=None,
        )
        if not written:
            return  # recorded by another sender that took the attempt after our hold ran out
        if delay is not None:
            following = Delivery.objects.create(
                subscription=subscription,
                event_id=delivery.event_id,
                attempt=delivery.attempt + 1,
                due_at=at + timedelta(seconds=delay),
            )
            schedule([following])
        if result is not None:  # an attempt dropped unsent says nothing of the receiver
            _note_health(subscription, answer, given_up=delay is None and not delivery.manual)


def _note_health(subscription: Subscription, answer: policy.Answer, *, given_up: bool) -> None:
    """A success clears a failing subscription; an event whose delivery gave up adds to its
    streak, and enough in a row mark it failing."""
    # The streak is read and written under the row's lock: two deliveries giving up together
    # must both count.
    row = Subscription.objects.select_for_update(no_key=True).filter(pk=subscription.pk).first()
    if row is None:
        return
    if answer.succeeded:
        if row.failure_streak or row.failing:
            Subscription.objects.filter(pk=row.pk).update(failure_streak=0, failing=False)
        return
    if given_up:
        streak = row.failure_streak + 1
        Subscription.objects.filter(pk=row.pk).update(
            failure_streak=streak,
            failing=row.failing or streak >= settings.LOOPWEB_WEBHOOK_FAILING_AFTER,
        )


# Chores ---------------------------------------------------------------------------------------


#: An attempt this long past due, not held, has lost its task (its sender died holding it).
LOST_AFTER = timedelta(minutes=5)


def sweep(*, now=None) -> int:
    """Attempts no task is going to send. With the database task backend: queue a task again
    for those long overdue whose task is gone (a sender died holding it); the delivery
    thread sends them. Without it: send the due ones here, a few per run, since nothing else
    will. Returns how many it handled."""
    now = now or timezone.now()
    database = isinstance(deliver.get_backend(), DatabaseBackend)
    due = Delivery.objects.filter(
        Q(held_until__isnull=True) | Q(held_until__lt=now),
        status=DeliveryStatus.PENDING,
        due_at__lte=now - LOST_AFTER if database else now,
    ).order_by("due_at")
    if not database:
        return sum(
            send(delivery_id=pk) != "not pending" for pk in due.values_list("id", flat=True)[:10]
        )
    lost = [pk for pk in due.values_list("id", flat=True)[:100] if not _queued(pk)]
    for pk in lost:
        deliver.enqueue(pk)
    return len(lost)


def _queued(delivery_id: int) -> bool:
    return DBTaskResult.objects.filter(
        task_path=deliver.module_path,
        status__in=[TaskResultStatus.READY, TaskResultStatus.RUNNING],
        args_kwargs__args__0=delivery_id,
    ).exists()


def prune(*, now=None) -> int:
    """Drop events (and their deliveries) older than ``LOOPWEB_WEBHOOK_KEEP_DAYS``."""
    now = now or timezone.now()
    cutoff = now - timedelta(days=settings.LOOPWEB_WEBHOOK_KEEP_DAYS)
    old = Event.objects.filter(created_at__lt=cutoff).exclude(
        deliveries__status=DeliveryStatus.PENDING
    )
    deleted, _ = Delivery.objects.filter(event__in=old).delete()
    Event.objects.filter(created_at__lt=cutoff, deliveries__isnull=True).delete()
    return deleted
