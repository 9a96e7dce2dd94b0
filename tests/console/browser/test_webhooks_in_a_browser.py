"""Webhooks in Chromium: an owner registers an endpoint (a real receiver on 127.0.0.1), copies
its secret, sends a ping, and watches the ping arrive in the delivery log without a reload."""

from pathlib import Path

import pytest
from playwright.sync_api import expect

from loopweb.webhooks.models import Subscription
from tests.webhooks import receiver as http_receiver
from tests.webhooks.helpers import deliver_all

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

SHOTS = Path(__file__).resolve().parents[3] / "var" / "screenshots"


@pytest.fixture
def receiver(settings):
    settings.LOOPWEB_WEBHOOK_ALLOWED_HOSTS = "127.0.0.1"
    settings.LOOPWEB_WEBHOOK_TIMEOUT = 2
    server = http_receiver.start()
    yield server
    http_receiver.stop(server)


def test_an_owner_registers_a_webhook_and_sees_a_ping_in_its_delivery_log(
    open_page, owner, receiver
):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page = open_page(owner)
    page.goto("/")
    page.get_by_role("link", name="Webhooks").click()
    expect(page.get_by_role("heading", name="Webhooks", exact=True)).to_be_visible()

    page.get_by_label("Payload URL").fill("ftp://nowhere")
    page.get_by_role("button", name="Add webhook").click()
    expect(page.locator("#url-error")).to_contain_text("http:// or https://")

    page.get_by_label("Payload URL").fill(receiver.url)
    page.get_by_label("dispatch.started").uncheck()
    page.get_by_role("button", name="Add webhook").click()
    secret = page.locator("#webhook-secret")
    expect(secret).to_be_visible()
    subscription = Subscription.objects.get()
    expect(secret).to_have_text(subscription.secret)
    assert "dispatch.started" not in subscription.events
    expect(page.get_by_text("Nothing sent yet.")).to_be_visible()
    page.screenshot(path=str(SHOTS / "webhooks-registered.png"), full_page=True)

    page.get_by_role("button", name="Send a ping").click()
    row = page.locator("#delivery-log tbody tr[data-type='webhook.ping']")
    expect(row).to_have_attribute("data-status", "pending")
    expect(page.locator("#webhook-secret")).to_have_count(0)  # shown once
    page.evaluate("window.sameDocument = true")

    deliver_all()  # the task worker sends it; the log polls while an attempt is pending
    expect(row).to_have_attribute("data-status", "delivered")
    expect(row).to_contain_text("200")
    assert page.evaluate("window.sameDocument") is True  # no reload: the log was swapped in
    [request] = receiver.requests
    assert request.event == "webhook.ping" and request.signed_with(subscription.secret)
    page.screenshot(path=str(SHOTS / "webhooks-ping-delivered.png"), full_page=True)
