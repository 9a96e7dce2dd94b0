"""``/api/webhooks/``: owners register endpoints (the secret shown once), read each one's
delivery log, ping and redeliver; anyone else's answers 404; bad input is a 400 naming the
field."""

import pytest

from loopweb.webhooks.models import Delivery, Event, Subscription
from tests.factories import UserFactory
from tests.webhooks.helpers import deliver_all, subscribe

pytestmark = pytest.mark.django_db

URL = "https://hooks.example.com/loopweb"


def test_registering_answers_the_secret_once_and_fills_in_defaults(owner_api, owner):
    response = owner_api.post("/api/webhooks/", {"url": URL}, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["secret"].startswith("whsec_") and len(body["secret"]) > 40
    assert body["url"] == URL and body["active"] is True and body["format"] == "json"
    assert body["events"] == [
        "dispatch.started",
        "dispatch.needs_attention",
        "dispatch.finished",
        "dispatch.stopped",
        "climber.blocked",
        "proposal.regressed",
        "proposal.held_costlier",
        "proposal.inconclusive",
        "review.backlog",
    ]
    assert body["owner"] == owner.username and body["failing"] is False
    assert body["deploymentWide"] is False
    assert Subscription.objects.get(pk=body["id"]).secret == body["secret"]
    again = owner_api.get(f"/api/webhooks/{body['id']}/").json()
    assert "secret" not in again and again["url"] == URL
    listing = owner_api.get("/api/webhooks/").json()
    assert listing["count"] == 1 and "secret" not in listing["results"][0]
    assert set(listing) == {"count", "next", "previous", "results"}


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"url": "ftp://hooks.example.com/x"}, "url", "invalid"),
        ({"url": "hooks.example.com/x"}, "url", "invalid"),
        ({"url": "http://hooks.example.com/a b"}, "url", "invalid"),
        ({"url": "http://user@hooks.example.com/"}, "url", "invalid"),
        ({"url": "http://hooks.example.com:99999/"}, "url", "invalid"),
        ({"url": "http://[::1]/"}, "url", "invalid"),
        ({"url": 5}, "url", "invalid"),
        ({"url": "http://10.1.2.3/hook"}, "url", "host_not_allowed"),
        ({"url": "http://192.168.0.9/hook"}, "url", "host_not_allowed"),
        ({"url": "http://169.254.169.254/latest"}, "url", "host_not_allowed"),
        ({"url": "http://localhost:8000/hook"}, "url", "host_not_allowed"),
        ({"url": "http://127.0.0.2/hook"}, "url", "host_not_allowed"),
        # The numeric spellings of 127.0.0.2 and 0.0.0.0 a resolver reads as those addresses.
        ({"url": "http://2130706434/hook"}, "url", "host_not_allowed"),
        ({"url": "http://0x7f000002/hook"}, "url", "host_not_allowed"),
        ({"url": "http://017700000002/hook"}, "url", "host_not_allowed"),
        ({"url": "http://127.2/hook"}, "url", "host_not_allowed"),
        ({"url": "http://0/hook"}, "url", "host_not_allowed"),
        ({"url": "http://10.1/hook"}, "url", "host_not_allowed"),
        ({"url": URL, "events": []}, "events", "min_length"),
        ({"url": URL, "events": ["dispatch.exploded"]}, "events.0", "invalid_choice"),
        ({"url": URL, "events": ["webhook.ping"]}, "events.0", "invalid_choice"),
        ({"url": URL, "events": ["climber.blocked", "climber.blocked"]}, "events", "unique"),
        ({"url": URL, "format": "xml"}, "format", "invalid_choice"),
        ({"url": URL, "active": "true"}, "active", "invalid"),
        ({}, "url", "required"),
    ],
)
def test_bad_input_is_a_400_naming_the_field_and_the_rule(owner_api, body, field, code):
    response = owner_api.post("/api/webhooks/", body, format="json")
    assert response.status_code == 400, response.json()
    answer = response.json()
    assert field in answer["errors"], answer
    assert answer["code"] == code
    assert not Subscription.objects.exists()


def test_hosts_the_deployment_lists_are_allowed(owner_api, settings):
    settings.LOOPWEB_WEBHOOK_ALLOWED_HOSTS = "10.0.0.0/8, hooks.internal, .corp"
    for url in ("http://10.1.2.3/hook", "http://hooks.internal/x", "https://ci.corp/h"):
        assert owner_api.post("/api/webhooks/", {"url": url}, format="json").status_code == 201
    assert owner_api.post("/api/webhooks/", {"url": "http://192.168.1.1/"}).status_code == 400


def test_only_staff_register_deployment_wide_webhooks(owner_api, token_client):
    body = {"url": URL, "deploymentWide": True}
    refused = owner_api.post("/api/webhooks/", body, format="json")
    assert refused.status_code == 403
    assert "staff" in refused.json()["detail"]
    staff = UserFactory(username="ops", is_staff=True)
    answer = token_client(staff).post("/api/webhooks/", body, format="json")
    assert answer.status_code == 201 and answer.json()["deploymentWide"] is True


def test_reviewers_and_drivers_register_nothing(reviewer_api, driver_api):
    for api in (reviewer_api, driver_api):
        assert api.post("/api/webhooks/", {"url": URL}, format="json").status_code == 403
        assert api.get("/api/webhooks/").status_code == 403


def test_another_owners_webhook_answers_404_everywhere(owner, outsider_api, anon_api):
    subscription = subscribe(owner, URL)
    attempt = Delivery.objects.create(
        subscription=subscription,
        event=Event.objects.create(
            type="dispatch.started", data={}, text="", created_at="2026-01-01T00:00:00Z"
        ),
        due_at="2026-01-01T00:00:00Z",
        status="failed",
    )
    base = f"/api/webhooks/{subscription.pk}"
    for method, path in [
        ("get", f"{base}/"),
        ("put", f"{base}/"),
        ("delete", f"{base}/"),
        ("get", f"{base}/deliveries"),
        ("post", f"{base}/ping"),
        ("post", f"{base}/deliveries/{attempt.pk}/redeliver"),
    ]:
        response = getattr(outsider_api, method)(path, {"url": URL}, format="json")
        assert response.status_code == 404, (method, path)
        assert response.json() == {"detail": "Not found."}
        assert getattr(anon_api, method)(path).status_code == 401
    assert outsider_api.get("/api/webhooks/").json()["count"] == 0
    assert Subscription.objects.filter(pk=subscription.pk).exists()


def test_staff_read_every_webhook(owner, token_client):
    subscribe(owner, URL)
    staff = UserFactory(username="ops", is_staff=True)
    assert token_client(staff).get("/api/webhooks/").json()["count"] == 1


def test_put_replaces_and_delete_removes(owner_api, owner):
    subscription = subscribe(owner, URL)
    body = {"url": URL + "/v2", "events": ["dispatch.finished"], "active": False, "format": "text"}
    answer = owner_api.put(f"/api/webhooks/{subscription.pk}/", body, format="json")
    assert answer.status_code == 200
    assert {k: answer.json()[k] for k in body} == body
    assert "secret" not in answer.json()
    subscription.refresh_from_db()
    assert (subscription.url, subscription.format, subscription.active) == (
        URL + "/v2",
        "text",
        False,
    )
    assert owner_api.put(f"/api/webhooks/{subscription.pk}/", {"url": "x"}).status_code == 400
    assert owner_api.delete(f"/api/webhooks/{subscription.pk}/").status_code == 204
    assert not Subscription.objects.exists()


def test_ping_shows_in_the_delivery_log_and_can_be_redelivered(owner_api, owner, receiver):
    subscription = subscribe(owner, receiver.url)
    pinged = owner_api.post(f"/api/webhooks/{subscription.pk}/ping")
    assert pinged.status_code == 202
    assert pinged.json()["status"] == "pending" and pinged.json()["type"] == "webhook.ping"
    assert receiver.requests == []  # the request only recorded it
    deliver_all()
    log = owner_api.get(f"/api/webhooks/{subscription.pk}/deliveries").json()
    [entry] = log["results"]
    assert {k: entry[k] for k in ("type", "status", "responseCode", "attempt")} == {
        "type": "webhook.ping",
        "status": "delivered",
        "responseCode": 200,
        "attempt": 1,
    }
    assert entry["event"] == receiver.requests[0].delivery
    assert entry["durationMs"] >= 0 and entry["deliveredAt"]
    again = owner_api.post(f"/api/webhooks/{subscription.pk}/deliveries/{entry['id']}/redeliver")
    assert again.status_code == 202 and again.json()["attempt"] == 2
    deliver_all()
    assert [r.delivery for r in receiver.requests] == [entry["event"]] * 2
    log = owner_api.get(f"/api/webhooks/{subscription.pk}/deliveries").json()
    assert [(e["attempt"], e["status"]) for e in log["results"]] == [
        (2, "delivered"),
        (1, "delivered"),
    ]
    other = subscribe(owner, receiver.url)
    assert (
        owner_api.post(f"/api/webhooks/{other.pk}/deliveries/{entry['id']}/redeliver").status_code
        == 404
    )


@pytest.mark.parametrize("attempts", [3, 40])
def test_the_delivery_log_costs_the_same_queries_however_long(
    owner_api, owner, attempts, django_assert_max_num_queries
):
    subscription = subscribe(owner, URL)
    for i in range(attempts):
        event = Event.objects.create(
            type="dispatch.finished", data={"i": i}, text="", created_at="2026-01-01T00:00:00Z"
        )
        Delivery.objects.create(
            subscription=subscription, event=event, due_at="2026-01-01T00:00:00Z"
        )
    # The token, the user's role, the subscription, the count and the page (events joined).
    with django_assert_max_num_queries(5):
        response = owner_api.get(f"/api/webhooks/{subscription.pk}/deliveries?pageSize=50")
    assert response.json()["count"] == attempts
