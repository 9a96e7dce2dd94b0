"""Webhooks' reads."""

from django.db.models import QuerySet

from loopweb.webhooks.models import Delivery, Subscription


def subscriptions_for(user) -> QuerySet[Subscription]:
    """An owner's own subscriptions; staff see every one (deployment-wide ones included)."""
    subscriptions = Subscription.objects.select_related("owner")
    if user.is_staff:
        return subscriptions
    return subscriptions.filter(owner=user)


def delivery_log(subscription: Subscription) -> QuerySet[Delivery]:
    """Newest attempt first; two queries a page whatever its length (the page and a count)."""
    return (
        Delivery.objects.filter(subscription=subscription)
        .select_related("event")
        .defer("event__data", "event__text")
    )


def has_pending(subscription: Subscription) -> bool:
    return Delivery.objects.filter(subscription=subscription, status="pending").exists()
