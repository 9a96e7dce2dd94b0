"""The console's webhook settings: register an endpoint (the secret shown once), edit it, ping
it and read its delivery log, redeliver, rotate the secret, delete; the same rules as the API."""

import pytest

from loopweb.webhooks.events import EVENTS
from loopweb.webhooks.models import Subscription
from tests.console.helpers import Browser, text_of
from tests.factories import UserFactory
from tests.webhooks.helpers import deliver_all, log_of, subscribe

pytestmark = pytest.mark.django_db

ALL = list(EVENTS)


def form(url: str, events=ALL, **extra) -> dict:
    return {"url": url, "events": events, "format": "json", "active": "on", **extra}


def test_an_owner_registers_a_webhook_and_sees_its_secret_once(owner, receiver):
    browser = Browser(owner)
    page = browser.get("/settings/webhooks/")
    assert page.status_code == 200 and "Add a webhook" in text_of(page)
    answer = browser.submit("/settings/webhooks/", form(receiver.url))
    subscription = Subscription.objects.get()
    assert answer.status_code == 302 and answer.url == f"/settings/webhooks/{subscription.pk}/"
    shown = browser.get(answer.url)
    assert subscription.secret in shown.content.decode()
    assert "it is not shown again" in text_of(shown)
    again = browser.get(answer.url)
    assert subscription.secret not in again.content.decode()
    assert (subscription.owner, subscription.events, subscription.active) == (owner, ALL, True)
    listing = text_of(browser.get("/settings/webhooks/"))
    assert receiver.url in listing and "9 events" in listing


def test_a_bad_url_is_shown_beside_the_field_and_nothing_is_saved(owner):
    browser = Browser(owner)
    answer = browser.submit("/settings/webhooks/", form("http://10.0.0.1/x"))
    assert answer.status_code == 400
    assert "loopback or private address" in text_of(answer)
    assert 'aria-invalid="true"' in answer.content.decode()
    answer = browser.submit("/settings/webhooks/", form("https://ok.example/x", events=[]))
    assert answer.status_code == 400 and "events" in answer.content.decode()
    assert not Subscription.objects.exists()


def test_a_ping_lands_in_the_delivery_log_which_polls_while_it_is_pending(owner, receiver):
    subscription = subscribe(owner, receiver.url)
    browser = Browser(owner)
    answer = browser.submit(f"/settings/webhooks/{subscription.pk}/ping")
    assert answer.status_code == 302
    page = browser.get(f"/settings/webhooks/{subscription.pk}/")
    assert 'hx-trigger="every 2s"' in page.content.decode()
    assert "pending" in text_of(page)
    deliver_all()
    log = browser.get(f"/settings/webhooks/{subscription.pk}/log")
    assert 'hx-trigger="every 2s"' not in log.content.decode()
    assert "webhook.ping" in text_of(log) and "delivered" in text_of(log)
    [attempt] = log_of(subscription)
    browser.submit(f"/settings/webhooks/{subscription.pk}/deliveries/{attempt.pk}/redeliver")
    deliver_all()
    assert [a.attempt for a in log_of(subscription)] == [1, 2]
    assert len(receiver.requests) == 2


def test_edit_rotate_and_delete(owner):
    subscription = subscribe(owner, "https://ok.example/a")
    browser = Browser(owner)
    answer = browser.submit(
        f"/settings/webhooks/{subscription.pk}/",
        {"url": "https://ok.example/b", "events": ["dispatch.finished"], "format": "text"},
    )
    assert answer.status_code == 302
    subscription.refresh_from_db()
    assert (subscription.url, subscription.events, subscription.active, subscription.format) == (
        "https://ok.example/b",
        ["dispatch.finished"],
        False,
        "text",
    )
    old = subscription.secret
    browser.submit(f"/settings/webhooks/{subscription.pk}/rotate")
    subscription.refresh_from_db()
    assert subscription.secret != old
    assert (
        subscription.secret
        in browser.get(f"/settings/webhooks/{subscription.pk}/").content.decode()
    )
    browser.submit(f"/settings/webhooks/{subscription.pk}/delete")
    assert not Subscription.objects.exists()


def test_another_owners_webhook_is_a_404_and_a_reviewer_registers_nothing(
    owner, outsider, reviewer
):
    subscription = subscribe(owner, "https://ok.example/a")
    outsider_browser = Browser(outsider)
    for path in ("/", "/log"):
        assert (
            outsider_browser.get(f"/settings/webhooks/{subscription.pk}{path}").status_code == 404
        )
    for action in ("ping", "rotate", "delete"):
        answer = outsider_browser.submit(f"/settings/webhooks/{subscription.pk}/{action}")
        assert answer.status_code == 404
    assert (
        outsider_browser.submit(
            f"/settings/webhooks/{subscription.pk}/", form("https://evil.example/")
        ).status_code
        == 404
    )
    reviewer_browser = Browser(reviewer)
    assert "Only owners register webhooks" in text_of(reviewer_browser.get("/settings/webhooks/"))
    assert (
        reviewer_browser.submit("/settings/webhooks/", form("https://ok.example/")).status_code
        == 403
    )
    subscription.refresh_from_db()
    assert subscription.url == "https://ok.example/a"


def test_only_staff_tick_deployment_wide(owner):
    browser = Browser(owner)
    assert "Deployment-wide" not in text_of(browser.get("/settings/webhooks/"))
    answer = browser.submit("/settings/webhooks/", form("https://ok.example/", deploymentWide="on"))
    assert answer.status_code == 403
    staff = UserFactory(username="ops", is_staff=True)
    staff_browser = Browser(staff)
    staff_browser.submit("/settings/webhooks/", form("https://ok.example/", deploymentWide="on"))
    assert Subscription.objects.get().deployment_wide


def test_posts_without_the_csrf_token_are_refused(owner):
    browser = Browser(owner)
    assert browser.post("/settings/webhooks/", form("https://ok.example/")).status_code == 403
    assert not Subscription.objects.exists()
