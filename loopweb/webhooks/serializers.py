"""The webhooks API's shapes (API.md, "Live reads, history, webhooks and operations")."""

from rest_framework import serializers

from loopweb.runs.api import fields as f
from loopweb.webhooks.events import EVENTS
from loopweb.webhooks.models import Delivery, DeliveryStatus, Format, Subscription
from loopweb.webhooks.targets import MAX_URL_LENGTH, URL_PATTERN, Allowlist, url_problem


class SubscriptionInput(serializers.Serializer):
    """POST and PUT: the whole subscription. Omitted, ``events`` is every event, ``active``
    true and ``format`` json."""

    url = f.RegexField(
        URL_PATTERN,
        max_length=MAX_URL_LENGTH,
        error_messages={
            "invalid": "Enter an http:// or https:// URL with a host name or IPv4 address, "
            "and no spaces."
        },
    )
    events = f.ListField(
        child=f.ChoiceField(choices=list(EVENTS)),
        min_length=1,
        unique=True,
        unique_message="An event is listed twice.",
        required=False,
    )
    active = f.BooleanField(required=False, default=True)
    format = f.ChoiceField(choices=Format.choices, required=False, default=Format.JSON)
    deploymentWide = f.BooleanField(  # noqa: N815 - the API's camelCase
        required=False,
        default=False,
        help_text="Every owner's events, not just yours: staff only (403 for anyone else).",
    )

    def validate_url(self, value):
        problem = url_problem(value, Allowlist.from_settings())
        if problem is not None:
            code, message = problem
            raise serializers.ValidationError(message, code=code)
        return value

    def validate(self, attrs):
        attrs.setdefault("events", list(EVENTS))
        return attrs

    def as_fields(self) -> dict:
        data = self.validated_data
        return {
            "url": data["url"],
            "events": data["events"],
            "active": data["active"],
            "format": data["format"],
            "deployment_wide": data["deploymentWide"],
        }


class SubscriptionSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    events = serializers.ListField(child=serializers.CharField())
    deploymentWide = serializers.BooleanField(source="deployment_wide")  # noqa: N815
    failureStreak = serializers.IntegerField(source="failure_streak")  # noqa: N815
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815
    updatedAt = serializers.DateTimeField(source="updated_at")  # noqa: N815

    class Meta:
        model = Subscription
        fields = [
            "id",
            "url",
            "events",
            "active",
            "format",
            "deploymentWide",
            "owner",
            "failing",
            "failureStreak",
            "createdAt",
            "updatedAt",
        ]
        read_only_fields = fields


class CreatedSubscriptionSerializer(SubscriptionSerializer):
    """The answer to POST: the only time the secret is shown."""

    secret = serializers.CharField(
        help_text="The signing key: shown once, in this answer. Keep it with the receiver."
    )

    class Meta(SubscriptionSerializer.Meta):
        fields = [*SubscriptionSerializer.Meta.fields, "secret"]
        read_only_fields = fields


class DeliverySerializer(serializers.ModelSerializer):
    event = serializers.CharField(source="event.event_id", help_text="the event's id")
    type = serializers.CharField(source="event.type")
    status = serializers.ChoiceField(choices=DeliveryStatus.choices)
    responseCode = serializers.IntegerField(source="response_code", allow_null=True)  # noqa: N815
    durationMs = serializers.IntegerField(source="duration_ms", allow_null=True)  # noqa: N815
    deliveredAt = serializers.DateTimeField(  # noqa: N815
        source="delivered_at", allow_null=True, help_text="when the attempt was made"
    )
    dueAt = serializers.DateTimeField(source="due_at")  # noqa: N815
    willRetry = serializers.BooleanField(source="will_retry")  # noqa: N815
    responseExcerpt = serializers.CharField(  # noqa: N815
        source="response_excerpt", help_text="at most the first 300 characters of the answer"
    )

    class Meta:
        model = Delivery
        fields = [
            "id",
            "event",
            "type",
            "status",
            "responseCode",
            "durationMs",
            "attempt",
            "deliveredAt",
            "dueAt",
            "manual",
            "willRetry",
            "error",
            "responseExcerpt",
        ]
        read_only_fields = fields
