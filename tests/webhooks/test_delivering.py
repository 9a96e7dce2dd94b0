"""Delivery done properly, against a real HTTP receiver on 127.0.0.1: signed, retried with
backoff on 5xx, 408, 429 and timeouts (never on other 4xx), given up after a bounded number of
attempts, a subscription failing after repeated give-ups, and redelivery."""

import socket
import threading
import time
from datetime import timedelta

import pytest

from loopweb.webhooks import sender, services
from loopweb.webhooks.models import Subscription
from tests.webhooks.helpers import announce, deliver_all, log_of, subscribe
from tests.webhooks.receiver import HANG

pytestmark = pytest.mark.django_db


def test_a_ping_is_delivered_once_signed_with_a_timestamp_and_the_event_id(owner, receiver):
    subscription = subscribe(owner, receiver.url)
    services.ping(subscription=subscription)
    assert receiver.requests == []  # recorded, not sent: the worker sends
    deliver_all()
    [request] = receiver.requests
    assert request.path == "/hooks"
    assert request.signed_with(subscription.secret)
    assert not request.signed_with("another secret")
    assert abs(int(request.headers["x-loopweb-timestamp"]) - time.time()) < 60
    body = request.json
    assert set(body) == {"id", "type", "createdAt", "data"}
    assert body["type"] == request.event == "webhook.ping"
    assert body["id"] == request.delivery and body["id"].startswith("evt_")
    assert body["data"]["webhook"]["id"] == subscription.pk
    assert body["data"]["url"] == f"https://loopweb.example/settings/webhooks/{subscription.pk}/"
    [attempt] = log_of(subscription)
    assert (attempt.status, attempt.response_code, attempt.attempt) == ("delivered", 200, 1)
    assert attempt.duration_ms is not None and attempt.delivered_at is not None
    assert attempt.response_excerpt == '{"ok": true}'


def test_a_500_is_retried_with_exponential_backoff_under_the_same_event_id(owner, receiver):
    receiver.script = [500, 503, 200]
    subscription = subscribe(owner, receiver.url)
    announce(owner, "dispatch.started", {"n": 1}, "started")
    tasks = deliver_all()
    assert [r.headers["x-loopweb-delivery"] for r in receiver.requests] == [
        receiver.requests[0].delivery
    ] * 3
    assert all(r.signed_with(subscription.secret) for r in receiver.requests)
    assert len({r.body for r in receiver.requests}) == 1  # the same body on every attempt
    log = log_of(subscription)
    assert [(a.attempt, a.status, a.response_code, a.will_retry) for a in log] == [
        (1, "failed", 500, True),
        (2, "failed", 503, True),
        (3, "delivered", 200, False),
    ]
    # Each retry is due base × 2^(n-1) after the attempt before it (base 30 s here), and its
    # task was deferred to that moment, not run at once.
    assert log[1].due_at - log[0].delivered_at == timedelta(seconds=30)
    assert log[2].due_at - log[1].delivered_at == timedelta(seconds=60)
    deferred = [t.run_after for t in tasks]
    assert deferred == [log[1].due_at, log[2].due_at]


def test_a_receiver_that_hangs_times_out_and_is_tried_again(owner, receiver, settings):
    receiver.script = [HANG, 200]
    subscription = subscribe(owner, receiver.url)
    services.ping(subscription=subscription)  # a ping is one attempt: use an event instead
    announce(owner, "dispatch.finished")
    started = time.monotonic()
    deliver_all()
    elapsed = time.monotonic() - started
    event_attempts = [a for a in log_of(subscription) if a.event.type == "dispatch.finished"]
    ping = next(a for a in log_of(subscription) if a.event.type == "webhook.ping")
    # The ping went first and hung: timed out, and not retried (a ping is one attempt).
    assert (ping.status, ping.error, ping.will_retry) == ("failed", "timed out", False)
    assert settings.LOOPWEB_WEBHOOK_TIMEOUT * 1000 <= ping.duration_ms < 3000
    assert [(a.attempt, a.status) for a in event_attempts] == [(1, "delivered")]
    assert elapsed < 5


def test_a_timeout_of_an_event_is_retried(owner, receiver):
    receiver.script = [HANG, HANG, 200]
    subscription = subscribe(owner, receiver.url)
    announce(owner, "dispatch.stopped", {}, "stopped")
    deliver_all()
    assert [(a.attempt, a.status, a.error or None) for a in log_of(subscription)] == [
        (1, "failed", "timed out"),
        (2, "failed", "timed out"),
        (3, "delivered", None),
    ]
    assert len({r.delivery for r in receiver.requests}) == 1


@pytest.mark.parametrize(
    ("code", "retried"),
    [(400, False), (404, False), (410, False), (408, True), (429, True), (302, False)],
)
def test_which_answers_are_retried(owner, receiver, code, retried):
    receiver.script = [code]
    subscription = subscribe(owner, receiver.url)
    announce(owner, "climber.blocked", {}, "blocked")
    deliver_all()
    log = log_of(subscription)
    assert log[0].response_code == code and log[0].status == "failed"
    assert log[0].will_retry is retried
    assert len(log) == (2 if retried else 1)
    assert len(receiver.requests) == len(log)


def test_retries_give_up_after_the_limit_and_repeated_give_ups_mark_the_subscription_failing(
    owner, receiver, settings
):
    receiver.default = 500
    subscription = subscribe(owner, receiver.url)

    def event():
        announce(owner, "dispatch.finished")
        deliver_all()

    event()
    assert len(receiver.requests) == settings.LOOPWEB_WEBHOOK_MAX_ATTEMPTS == 4
    assert [a.will_retry for a in log_of(subscription)] == [True, True, True, False]
    subscription.refresh_from_db()
    assert (subscription.failure_streak, subscription.failing) == (1, False)

    event()  # the second event in a row that gives up: failing (LOOPWEB_WEBHOOK_FAILING_AFTER)
    subscription.refresh_from_db()
    assert (subscription.failure_streak, subscription.failing) == (2, True)
    assert len(receiver.requests) == 8

    event()  # while failing, an event gets one attempt
    assert len(receiver.requests) == 9
    subscription.refresh_from_db()
    assert subscription.failing and subscription.failure_streak == 3

    receiver.default = 200  # fixed: a ping that gets through clears it
    services.ping(subscription=subscription)
    deliver_all()
    subscription.refresh_from_db()
    assert (subscription.failure_streak, subscription.failing) == (0, False)


def test_redeliver_sends_the_same_event_again_as_one_more_attempt(owner, receiver):
    receiver.script = [400]
    subscription = subscribe(owner, receiver.url)
    announce(owner, "proposal.regressed", {"proposal": {"id": 7}}, "regressed")
    deliver_all()
    [failed] = log_of(subscription)
    assert (failed.status, failed.will_retry) == ("failed", False)
    again = services.redeliver(delivery=failed)
    assert (again.attempt, again.manual, again.status) == (2, True, "pending")
    deliver_all()
    first, second = receiver.requests
    assert second.delivery == first.delivery and second.body == first.body
    assert second.signed_with(subscription.secret)
    assert [(a.attempt, a.status) for a in log_of(subscription)] == [
        (1, "failed"),
        (2, "delivered"),
    ]


def test_the_text_format_posts_a_chat_message(owner, receiver):
    subscription = subscribe(owner, receiver.url, format="text")
    announce(owner, "dispatch.finished", {"a": 1}, "✓ *Climb* finished")
    deliver_all()
    [request] = receiver.requests
    assert request.json == {"text": "✓ *Climb* finished"}
    assert request.signed_with(subscription.secret)
    assert request.event == "dispatch.finished"


def test_only_a_short_excerpt_of_an_answer_is_kept(owner, receiver):
    receiver.answer_body = "x" * 50_000
    subscription = subscribe(owner, receiver.url)
    services.ping(subscription=subscription)
    deliver_all()
    [attempt] = log_of(subscription)
    assert attempt.status == "delivered" and attempt.response_excerpt == "x" * 300


def test_an_address_the_deployment_does_not_allow_is_refused_at_each_delivery(
    owner, receiver, settings
):
    subscription = subscribe(owner, receiver.url)
    settings.LOOPWEB_WEBHOOK_ALLOWED_HOSTS = ""  # the deployment no longer allows loopback
    announce(owner, "dispatch.finished")
    deliver_all()
    [attempt] = log_of(subscription)
    assert attempt.status == "failed" and not attempt.will_retry
    assert "does not allow" in attempt.error
    assert receiver.requests == []


def test_a_connection_refused_is_retried(owner, settings):
    subscription = subscribe(owner, "http://127.0.0.1:9/hooks")  # nothing listens on discard
    announce(owner, "dispatch.finished")
    deliver_all()
    log = log_of(subscription)
    assert len(log) == settings.LOOPWEB_WEBHOOK_MAX_ATTEMPTS
    assert all(a.status == "failed" and "Refused" in a.error for a in log)


def test_an_inactive_subscription_is_sent_nothing_but_pings(owner, receiver):
    subscription = subscribe(owner, receiver.url, active=False)
    announce(owner, "dispatch.finished")
    assert log_of(subscription) == []
    services.ping(subscription=subscription)
    deliver_all()
    assert [r.event for r in receiver.requests] == ["webhook.ping"]


def test_an_attempt_deactivated_before_it_is_sent_is_dropped(owner, receiver):
    subscription = subscribe(owner, receiver.url)
    announce(owner, "dispatch.finished")
    Subscription.objects.filter(pk=subscription.pk).update(active=False)
    deliver_all()
    [attempt] = log_of(subscription)
    assert attempt.status == "failed" and attempt.error == "the subscription is not active"
    assert receiver.requests == []


def test_an_attempt_is_sent_by_one_sender_only(owner, receiver):
    subscription = subscribe(owner, receiver.url)
    delivery = services.ping(subscription=subscription)
    assert services.send(delivery_id=delivery.pk).startswith("200")
    assert services.send(delivery_id=delivery.pk) == "not pending"
    assert len(receiver.requests) == 1


def test_a_name_that_resolves_slowly_times_out_within_the_timeout(monkeypatch):
    # The whole exchange is cut off after the timeout, resolving the name included: a resolver
    # that hangs must not hold the delivery (and its sender's thread) past it.
    released = threading.Event()

    def hanging_getaddrinfo(*args, **kwargs):
        released.wait(10)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(sender.socket, "getaddrinfo", hanging_getaddrinfo)
    started = time.monotonic()
    try:
        result = sender.post("http://slow-dns.example/hooks", b"{}", {}, timeout=0.3)
    finally:
        released.set()
    assert (result.answer.error, result.error) == ("timeout", "timed out")
    assert time.monotonic() - started < 3  # not the resolver's 10 s
    assert 300 <= result.duration_ms < 3000


def test_a_name_resolved_within_the_timeout_is_delivered_to(monkeypatch, receiver, settings):
    # Looked up on a thread of its own, then connected to the very address it resolved to.
    settings.LOOPWEB_WEBHOOK_ALLOWED_HOSTS = "hooks.example"
    host, port = receiver.server.server_address[:2]
    real = socket.getaddrinfo

    def resolver(name, *args, **kwargs):
        if name != "hooks.example":  # the connection's own look-up of the address
            return real(name, *args, **kwargs)
        time.sleep(0.05)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(sender.socket, "getaddrinfo", resolver)
    result = sender.post(f"http://hooks.example:{port}/hooks", b"{}", {}, timeout=2)
    assert (result.answer.code, result.error) == (200, "")
    [request] = receiver.requests
    assert request.headers["host"] == f"hooks.example:{port}"
