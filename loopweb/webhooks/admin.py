"""Webhooks in the admin: subscriptions (registered, edited and deleted through the services,
with the API's own URL rule; the secret is shown once, after adding), and the delivery log,
read-only, with a redeliver action."""

from django import forms
from django.contrib import admin, messages

from loopweb.runs.admin import ReadOnlyAdmin
from loopweb.webhooks import services
from loopweb.webhooks.events import EVENTS
from loopweb.webhooks.models import Delivery, Subscription
from loopweb.webhooks.targets import Allowlist, url_problem


class SubscriptionForm(forms.ModelForm):
    events = forms.MultipleChoiceField(
        choices=[(name, f"{name}: {text}") for name, text in EVENTS.items()],
        widget=forms.CheckboxSelectMultiple,
    )

    class Meta:
        model = Subscription
        fields = ["owner", "url", "events", "active", "format", "deployment_wide"]

    def clean_url(self):
        url = self.cleaned_data["url"].strip()
        problem = url_problem(url, Allowlist.from_settings())
        if problem is not None:
            raise forms.ValidationError(problem[1], code=problem[0])
        return url


@admin.register(Subscription)
class SubscriptionAdmin(admin.ModelAdmin):
    form = SubscriptionForm
    list_display = ["id", "url", "owner", "format", "active", "deployment_wide", "failing"]
    list_filter = ["active", "failing", "deployment_wide", "format"]
    list_select_related = ["owner"]
    search_fields = ["url", "owner__username"]
    readonly_fields = ["failure_streak", "failing", "created_at", "updated_at", "log"]
    actions = ["send_ping"]

    @admin.display(description="delivery log")
    def log(self, subscription):
        from django.urls import reverse
        from django.utils.html import format_html

        if subscription.pk is None:
            return "—"
        url = (
            reverse("admin:webhooks_delivery_changelist")
            + f"?subscription__id__exact={subscription.pk}"
        )
        return format_html('<a href="{}">Every attempt of this webhook</a>', url)

    def save_model(self, request, obj, form, change):
        if change:
            services.update_subscription(
                subscription=obj, **{name: form.cleaned_data[name] for name in form.changed_data}
            )
            return
        created = services.create_subscription(
            owner=obj.owner,
            url=obj.url,
            events=obj.events,
            active=obj.active,
            format=obj.format,
            deployment_wide=obj.deployment_wide,
        )
        obj.pk = created.pk
        obj.secret = created.secret
        self.message_user(
            request,
            f"The secret of webhook {created.pk} is {created.secret} — copy it now, it is not "
            "shown again.",
            messages.WARNING,
        )

    def delete_model(self, request, obj):
        services.delete_subscription(subscription=obj)

    def delete_queryset(self, request, queryset):
        for subscription in queryset:
            services.delete_subscription(subscription=subscription)

    def get_deleted_objects(self, objs, request):
        """A webhook's delivery log goes with it, as the API's delete takes it: deleting one
        needs no permission to delete deliveries, which the log never deletes one by one."""
        deleted, counts, perms_needed, protected = super().get_deleted_objects(objs, request)
        perms_needed.discard(Delivery._meta.verbose_name)
        return deleted, counts, perms_needed, protected

    @admin.action(description="Send a ping to the selected webhooks")
    def send_ping(self, request, queryset):
        for subscription in queryset:
            services.ping(subscription=subscription)
        self.message_user(request, f"{queryset.count()} ping(s) queued.")


@admin.register(Delivery)
class DeliveryAdmin(ReadOnlyAdmin):
    """The delivery log: the sender writes it; a redelivery is a new attempt, not an edit."""

    list_display = [
        "id",
        "subscription",
        "event_type",
        "event_id_text",
        "attempt",
        "status",
        "response_code",
        "duration_ms",
        "delivered_at",
    ]
    list_filter = ["status", "manual", "event__type"]
    list_select_related = ["subscription", "event"]
    search_fields = ["event__event_id", "subscription__url"]
    date_hierarchy = "created_at"
    actions = ["redeliver"]
    fields = [
        "subscription",
        "event_id_text",
        "event_type",
        "attempt",
        "manual",
        "status",
        "created_at",
        "due_at",
        "held_until",
        "delivered_at",
        "response_code",
        "duration_ms",
        "error",
        "response_excerpt",
        "will_retry",
        "payload",
    ]
    hidden = ["event"]  # shown as its id and type

    @admin.display(description="type", ordering="event__type")
    def event_type(self, delivery):
        return delivery.event.type

    @admin.display(description="event")
    def event_id_text(self, delivery):
        return delivery.event.event_id

    @admin.display(description="payload")
    def payload(self, delivery):
        return services.body_of(delivery.event, delivery.subscription.format).decode()

    @admin.action(description="Redeliver the selected deliveries")
    def redeliver(self, request, queryset):
        for delivery in queryset.select_related("subscription"):
            services.redeliver(delivery=delivery)
        self.message_user(request, f"{queryset.count()} redelivery(ies) queued.")
