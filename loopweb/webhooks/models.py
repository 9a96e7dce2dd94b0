import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q


def mint_secret() -> str:
    return f"whsec_{secrets.token_urlsafe(32)}"


def mint_event_id() -> str:
    return f"evt_{secrets.token_hex(12)}"


class Format(models.TextChoices):
    JSON = "json"
    TEXT = "text"


class Subscription(models.Model):
    """An endpoint that wants to hear about some events: its owner's ladders and proposals, or
    (registered by staff) every owner's."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhooks"
    )
    url = models.CharField(max_length=2000)
    events = models.JSONField(default=list)
    active = models.BooleanField(default=True)
    format = models.CharField(max_length=8, choices=Format.choices, default=Format.JSON)
    deployment_wide = models.BooleanField(default=False)
    # The key of every signature. It must be kept to sign with, so it is stored as it is; the
    # API shows it once, when the subscription is created, and the admin never shows it.
    secret = models.CharField(max_length=80, default=mint_secret)
    # Events whose delivery gave up in a row; at LOOPWEB_WEBHOOK_FAILING_AFTER the subscription
    # is failing (one attempt per event, no retries) until a delivery succeeds.
    failure_streak = models.PositiveIntegerField(default=0)
    failing = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["owner", "active"], name="webhook_owner_active"),
            models.Index(
                fields=["active"],
                name="webhook_deployment_wide",
                condition=Q(deployment_wide=True),
            ),
        ]

    def __str__(self) -> str:
        return f"webhook {self.pk} → {self.url}"

    def wants(self, event_type: str) -> bool:
        return event_type in self.events


class Event(models.Model):
    """What happened, recorded in the transaction that made it happen (the outbox). Its
    ``event_id`` is the idempotency key a receiver sees on every attempt."""

    event_id = models.CharField(max_length=40, unique=True, default=mint_event_id)
    type = models.CharField(max_length=40)
    # Whose ladder or proposal it is about (the subscriptions it goes to are theirs and the
    # deployment-wide ones).
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    data = models.JSONField()
    # The same news as one line of chat (Slack's mrkdwn), for subscriptions of format "text".
    text = models.TextField()
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["created_at"], name="webhook_event_created")]

    def __str__(self) -> str:
        return f"{self.type} {self.event_id}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


class Delivery(models.Model):
    """One attempt to deliver an event to a subscription: the delivery log's row."""

    subscription = models.ForeignKey(
        Subscription, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(Event, on_delete=models.CASCADE, related_name="deliveries")
    attempt = models.PositiveSmallIntegerField(default=1)
    # A ping or a redelivery someone asked for: one attempt, never retried.
    manual = models.BooleanField(default=False)
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    due_at = models.DateTimeField()
    # While a sender holds the attempt; a sender that died leaves it to be taken again after.
    held_until = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    response_code = models.PositiveSmallIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    # Never more of the receiver's answer than this excerpt.
    response_excerpt = models.CharField(max_length=300, blank=True)
    error = models.CharField(max_length=200, blank=True)
    will_retry = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "deliveries"
        indexes = [
            models.Index(fields=["subscription", "-id"], name="webhook_delivery_log"),
            models.Index(
                fields=["due_at"], name="webhook_delivery_due", condition=Q(status="pending")
            ),
            models.Index(fields=["created_at"], name="webhook_delivery_created"),
        ]

    def __str__(self) -> str:
        return f"delivery {self.pk} of {self.event_id} (attempt {self.attempt}, {self.status})"
