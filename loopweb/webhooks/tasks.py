"""Deliveries run in the task worker, on a queue of their own (``webhooks``): the worker gives
it a thread of its own, so a receiver that hangs never holds up a launch pass."""

from django.tasks import task

QUEUE = "webhooks"


@task(queue_name=QUEUE)
def deliver(delivery_id: int) -> str:
    from loopweb.webhooks.services import send

    return send(delivery_id=delivery_id)
