"""The console's webhook settings: register endpoints, read each one's delivery log, ping,
redeliver. Posted forms are read into the API's shape and checked by the API's serializer, so
the browser and REST clients share one rule set; the writes are the API's services."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from ladders.access import creates_ladders
from loopweb.console.access import signed_in
from loopweb.runs.api.errors import flatten
from loopweb.webhooks import selectors, services
from loopweb.webhooks.events import EVENTS
from loopweb.webhooks.models import Format, Subscription
from loopweb.webhooks.serializers import SubscriptionInput

LOG_PAGE = 25


def _secret_key(pk: int) -> str:
    return f"webhook-secret-{pk}"


def _form_data(post) -> dict:
    """A posted form in the API's shape (a box left unticked is false)."""
    return {
        "url": post.get("url", "").strip(),
        "events": post.getlist("events"),
        "active": post.get("active") == "on",
        "format": post.get("format", Format.JSON),
        "deploymentWide": post.get("deploymentWide") == "on",
    }


def _form(data: dict | None = None, errors: dict | None = None) -> dict:
    data = data or {"url": "", "events": list(EVENTS), "active": True, "format": "json"}
    return {
        "data": data,
        "errors": errors or {},
        "events": [
            {"value": name, "text": text, "checked": name in data["events"]}
            for name, text in EVENTS.items()
        ],
    }


def _validated(request) -> tuple[dict, SubscriptionInput | None, dict]:
    data = _form_data(request.POST)
    body = SubscriptionInput(data=data)
    if body.is_valid():
        if data["deploymentWide"] and not request.user.is_staff:
            raise PermissionDenied("Only staff may register a deployment-wide webhook.")
        return data, body, {}
    return data, None, flatten(body.errors)


def _owned(request, pk: int) -> Subscription:
    return get_object_or_404(selectors.subscriptions_for(request.user), pk=pk)


def may_register(user) -> bool:
    """Webhooks announce their owner's ladders and proposals: whoever may own them registers."""
    return creates_ladders(user)


def _may_register(user) -> None:
    if not may_register(user):
        raise PermissionDenied("Only owners register webhooks.")


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def webhook_list(request):
    form = _form()
    if request.method == "POST":
        _may_register(request.user)
        data, body, errors = _validated(request)
        if body is not None:
            subscription = services.create_subscription(owner=request.user, **body.as_fields())
            request.session[_secret_key(subscription.pk)] = subscription.secret
            messages.success(request, f"Webhook registered: {subscription.url}")
            return redirect("webhooks_console:detail", pk=subscription.pk)
        form = _form(data, errors)
    page = Paginator(selectors.subscriptions_for(request.user), 50).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "console/webhooks/list.html",
        {
            "page": page,
            "form": form,
            "may_register": may_register(request.user),
            "nav": "webhooks",
        },
        status=400 if form["errors"] else 200,
    )


def _log_context(request, subscription: Subscription) -> dict:
    page = Paginator(selectors.delivery_log(subscription), LOG_PAGE).get_page(
        request.GET.get("page")
    )
    return {
        "subscription": subscription,
        "log": page,
        "polling": any(d.status == "pending" for d in page),
    }


@signed_in
@require_http_methods(["GET", "HEAD", "POST"])
def webhook_detail(request, pk: int):
    subscription = _owned(request, pk)
    form = _form(
        {
            "url": subscription.url,
            "events": subscription.events,
            "active": subscription.active,
            "format": subscription.format,
            "deploymentWide": subscription.deployment_wide,
        }
    )
    if request.method == "POST":
        data, body, errors = _validated(request)
        if body is not None:
            services.update_subscription(subscription=subscription, **body.as_fields())
            messages.success(request, "Webhook saved.")
            return redirect("webhooks_console:detail", pk=subscription.pk)
        form = _form(data, errors)
    context = {
        **_log_context(request, subscription),
        "form": form,
        "secret": request.session.pop(_secret_key(subscription.pk), None),
        "nav": "webhooks",
    }
    return render(
        request,
        "console/webhooks/detail.html",
        context,
        status=400 if form["errors"] else 200,
    )


@signed_in
@require_safe
def webhook_log(request, pk: int):
    """The delivery log alone, for the page to poll while an attempt is pending."""
    subscription = _owned(request, pk)
    return render(request, "console/webhooks/_deliveries.html", _log_context(request, subscription))


@signed_in
@require_POST
def webhook_ping(request, pk: int):
    subscription = _owned(request, pk)
    services.ping(subscription=subscription)
    messages.info(request, "Ping queued: it appears in the delivery log below once it is sent.")
    return redirect("webhooks_console:detail", pk=subscription.pk)


@signed_in
@require_POST
def webhook_redeliver(request, pk: int, delivery_id: int):
    subscription = _owned(request, pk)
    delivery = get_object_or_404(subscription.deliveries, pk=delivery_id)
    again = services.redeliver(delivery=delivery)
    messages.info(
        request, f"Redelivery of {delivery.event.event_id} queued (attempt {again.attempt})."
    )
    return redirect("webhooks_console:detail", pk=subscription.pk)


@signed_in
@require_POST
def webhook_rotate(request, pk: int):
    subscription = services.rotate_secret(subscription=_owned(request, pk))
    request.session[_secret_key(subscription.pk)] = subscription.secret
    messages.success(request, "A new secret is in force: update your receiver.")
    return redirect("webhooks_console:detail", pk=subscription.pk)


@signed_in
@require_POST
def webhook_delete(request, pk: int):
    subscription = _owned(request, pk)
    url = subscription.url
    services.delete_subscription(subscription=subscription)
    messages.success(request, f"Webhook deleted: {url}")
    return redirect("webhooks_console:list")
