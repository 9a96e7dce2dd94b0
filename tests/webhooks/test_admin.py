"""Webhooks in the admin: subscriptions (the secret shown once after adding, never on the
page), the delivery log and its redeliver action."""

import pytest
from django.test import Client

from loopweb.webhooks import services
from loopweb.webhooks.models import Delivery, Subscription
from tests.webhooks.helpers import deliver_all, log_of, subscribe

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client_(staff):
    client = Client()
    client.force_login(staff)
    return client


def test_pages_render_and_the_secret_is_never_on_them(admin_client_, owner, receiver):
    subscription = subscribe(owner, receiver.url)
    services.ping(subscription=subscription)
    deliver_all()
    delivery = Delivery.objects.get()
    for path in (
        "/admin/webhooks/subscription/",
        f"/admin/webhooks/subscription/{subscription.pk}/change/",
        "/admin/webhooks/delivery/?q=evt",
        f"/admin/webhooks/delivery/{delivery.pk}/change/",
    ):
        page = admin_client_.get(path)
        assert page.status_code == 200, path
        assert subscription.secret not in page.content.decode()
    detail = admin_client_.get(f"/admin/webhooks/delivery/{delivery.pk}/change/").content.decode()
    assert delivery.event.event_id in detail and "webhook.ping" in detail


def test_staff_add_a_webhook_and_are_told_its_secret_once(admin_client_, owner):
    answer = admin_client_.post(
        "/admin/webhooks/subscription/add/",
        {
            "owner": owner.pk,
            "url": "https://hooks.example.com/x",
            "events": ["dispatch.finished", "dispatch.stopped"],
            "active": "on",
            "format": "json",
        },
        follow=True,
    )
    assert answer.status_code == 200
    subscription = Subscription.objects.get()
    assert subscription.events == ["dispatch.finished", "dispatch.stopped"]
    assert subscription.secret in answer.content.decode()
    refused = admin_client_.post(
        "/admin/webhooks/subscription/add/",
        {
            "owner": owner.pk,
            "url": "http://10.0.0.1/",
            "events": ["dispatch.finished"],
            "format": "json",
        },
    )
    assert refused.status_code == 200 and "loopback or private" in refused.content.decode()
    assert Subscription.objects.count() == 1


def test_the_redeliver_and_ping_actions(admin_client_, owner, receiver):
    receiver.script = [500]
    subscription = subscribe(owner, receiver.url)
    services.ping(subscription=subscription)
    deliver_all()
    [failed] = log_of(subscription)
    assert failed.status == "failed"
    admin_client_.post(
        "/admin/webhooks/delivery/",
        {"action": "redeliver", "_selected_action": [failed.pk]},
    )
    admin_client_.post(
        "/admin/webhooks/subscription/",
        {"action": "send_ping", "_selected_action": [subscription.pk]},
    )
    deliver_all()
    assert [(a.event.type, a.attempt, a.status) for a in log_of(subscription)] == [
        ("webhook.ping", 1, "failed"),
        ("webhook.ping", 2, "delivered"),
        ("webhook.ping", 1, "delivered"),
    ]
