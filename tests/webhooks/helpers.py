"""Registering webhooks and running their deliveries in tests."""

from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from loopweb.webhooks import services
from loopweb.webhooks.events import EVENTS
from loopweb.webhooks.models import Delivery
from loopweb.webhooks.tasks import deliver
from tests.tasks import run_queued_tasks


def subscribe(owner, url, *, events=None, active=True, format="json", deployment_wide=False):
    return services.create_subscription(
        owner=owner,
        url=url,
        events=list(EVENTS) if events is None else events,
        active=active,
        format=format,
        deployment_wide=deployment_wide,
    )


def announce(owner, event_type: str, data: dict | None = None, text: str = "news") -> None:
    """Record an event of ``owner``'s, as a receiver of the engine's announcements does."""
    services.record(
        [services.News(event_type, data or {}, text)],
        owner_id=owner.pk,
        to=services.interested(owner_id=owner.pk),
    )


def deliver_all(limit: int = 100) -> list[DBTaskResult]:
    """Run every delivery task, bringing deferred ones forward (as if their moment had come).
    Returns the delivery tasks in the order they ran, each with the ``run_after`` it had."""
    ran = []
    for _ in range(limit):
        run_queued_tasks()
        waiting = list(
            DBTaskResult.objects.filter(task_path=deliver.module_path, status="READY").order_by(
                "run_after", "enqueued_at"
            )
        )
        if not waiting:
            return ran
        ran += waiting
        DBTaskResult.objects.filter(pk__in=[t.pk for t in waiting]).update(run_after=timezone.now())
    raise AssertionError("deliveries kept coming")


def log_of(subscription) -> list[Delivery]:
    """The subscription's attempts, oldest first."""
    return list(
        Delivery.objects.filter(subscription=subscription).select_related("event").order_by("id")
    )
