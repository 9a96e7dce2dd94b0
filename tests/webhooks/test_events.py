"""Each event, announced by the engine or the verify gate where it happens, is delivered once to
the subscriptions that want it, with the data a receiver needs without calling back."""

import pytest
from django.db import transaction
from django_tasks_db.models import DBTaskResult

from ladders import services as ladder_services
from ladders.models import DispatchClimber
from ladders.passes import run_launch_pass
from loopweb.runs.models import Job
from loopweb.webhooks.models import Delivery, Event
from tests.evalsets.helpers import regressed_and_costlier, verify
from tests.factories import UserFactory
from tests.ladders.builders import (
    BROKEN,
    claim_all,
    climbers,
    fail,
    make_ladder,
    progress_of,
    push,
    versions,
    work,
)
from tests.webhooks.helpers import deliver_all, subscribe

pytestmark = pytest.mark.django_db

LADDER_EVENTS = {
    "dispatch.started",
    "dispatch.needs_attention",
    "dispatch.stopped",
    "dispatch.finished",
    "climber.blocked",
}


def by_type(receiver) -> dict[str, list]:
    received: dict[str, list] = {}
    for request in receiver.requests:
        received.setdefault(request.event, []).append(request)
    return received


def test_every_event_of_a_climb_and_of_the_gate_is_delivered_once_and_signed(
    owner, driver, run_tasks, receiver
):
    subscription = subscribe(owner, receiver.url)
    blocked = make_ladder(owner, versions(2), climbers(2), retryCount=0, name="Platformer")
    ladder_services.start_dispatch(ladder=blocked, by=owner)
    run_tasks()
    for job in claim_all(driver):
        fail(driver, job, "infrastructure")  # both climbers block, failing
    Job.objects.filter(failure="infrastructure").update(failure_detail="the host ran out of disk")
    run_tasks()
    ladder_services.stop_dispatch(ladder=blocked, by=owner)

    finishing = make_ladder(owner, versions(1, prefix="easy"), climbers(1, prefix="e"))
    ladder_services.start_dispatch(ladder=finishing, by=owner)
    work(driver, run_tasks)

    regressed, costlier = regressed_and_costlier(owner)
    verify(regressed)  # measured already: no second draft, no second event
    deliver_all()

    received = by_type(receiver)
    assert {k: len(v) for k, v in received.items()} == {
        "dispatch.started": 2,
        "climber.blocked": 2,
        "dispatch.needs_attention": 1,
        "dispatch.stopped": 1,
        "dispatch.finished": 1,
        "proposal.regressed": 1,
        "proposal.held_costlier": 1,
    }
    assert all(r.signed_with(subscription.secret) for r in receiver.requests)
    assert len({r.delivery for r in receiver.requests}) == len(receiver.requests)
    for request in receiver.requests:
        body = request.json
        assert body["type"] == request.event and body["id"] == request.delivery
        assert body["data"]["url"].startswith("https://loopweb.example/")

    started = received["dispatch.started"][0].json["data"]
    assert started["ladder"] == {
        "id": blocked.pk,
        "name": "Platformer",
        "owner": owner.username,
        "url": f"https://loopweb.example/ladders/{blocked.pk}/",
    }
    assert started["startedBy"] == owner.username
    assert started["dispatch"]["climbers"] == 2 and started["dispatch"]["rungs"] == 2

    attention = received["dispatch.needs_attention"][0].json["data"]
    assert attention["blocked"] == 2
    climber = attention["climbers"][0]
    assert climber["reason"] == "failing"
    assert climber["rung"]["number"] == 1 and climber["rung"]["case"] == "step-1"
    assert climber["failure"]["failure"] == "infrastructure"
    assert climber["failure"]["detail"] == "the host ran out of disk"
    assert climber["failure"]["attempt"] == 1 and climber["failure"]["run"] is None
    one = received["climber.blocked"][0].json["data"]["climber"]
    assert one["reason"] == "failing" and one["failure"]["detail"] == "the host ran out of disk"

    stopped = received["dispatch.stopped"][0].json["data"]
    assert stopped["stoppedBy"] == owner.username
    assert stopped["cancelRunning"] is False and stopped["cancelled"] == 0
    assert stopped["dispatch"]["status"] == "stopped"
    assert {c["status"] for c in stopped["climbers"]} == {"stopped"}
    assert {c["blockedReason"] for c in stopped["climbers"]} == {None}

    finished = received["dispatch.finished"][0].json["data"]
    assert finished["ladder"]["id"] == finishing.pk
    assert finished["slotCounts"]["passed"] == 1
    assert [(c["status"], c["reached"]) for c in finished["climbers"]] == [("completed", 1)]

    reverted = received["proposal.regressed"][0].json["data"]
    assert reverted["proposal"]["id"] == regressed.pk
    assert reverted["proposal"]["url"] == f"https://loopweb.example/proposals/{regressed.pk}/"
    assert reverted["revertDraft"]["severity"] == "high"
    assert reverted["result"]["verdict"] == "regressed"
    assert (reverted["result"]["baseline"], reverted["result"]["current"]) == (10, 1)
    flagged = received["proposal.held_costlier"][0].json["data"]
    assert flagged["proposal"]["id"] == costlier.pk
    assert flagged["result"]["cost"]["read"] == "breached"
    assert "usd" in flagged["advisoryFlag"]["reason"]


def test_a_second_block_while_the_dispatch_needs_attention_is_a_climber_event_only(
    owner, driver, run_tasks, receiver
):
    subscribe(owner, receiver.url, events=["climber.blocked", "dispatch.needs_attention"])
    ladder = make_ladder(owner, versions(1), climbers(3), retryCount=0)
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    run_tasks()
    first, second, third = claim_all(driver)
    fail(driver, first, "infrastructure")
    fail(driver, second, "infrastructure")
    run_tasks()
    deliver_all()
    assert progress_of(ladder)["dispatch"]["status"] == "running"  # the third is in flight
    assert [r.event for r in receiver.requests] == ["climber.blocked", "climber.blocked"]
    push(driver, third, record=BROKEN)
    run_tasks()
    deliver_all()
    assert [r.event for r in receiver.requests] == [
        "climber.blocked",
        "climber.blocked",
        "dispatch.needs_attention",
    ]
    # Retry one: the dispatch reads Running again, and its block comes back to Needs attention.
    row = DispatchClimber.objects.filter(dispatch__ladder=ladder).exclude(blocked="").first()
    ladder_services.retry_climber(ladder=ladder, combination_key=row.combination_key, by=owner)
    run_tasks()
    assert progress_of(ladder)["dispatch"]["status"] == "running"
    fail(driver, claim_all(driver)[0], "infrastructure")
    run_tasks()
    deliver_all()
    assert [r.event for r in receiver.requests[3:]] == [
        "climber.blocked",
        "dispatch.needs_attention",
    ]


def test_needs_attention_is_sent_when_the_dispatch_comes_to_read_needs_attention(
    owner, driver, run_tasks, receiver
):
    """Seed 004, Needs attention: a running dispatch reads it while none of the jobs it launched
    is in flight, every climber is completed, failed or blocked, and at least one is blocked."""
    subscribe(owner, receiver.url, events=["climber.blocked", "dispatch.needs_attention"])
    ladder = make_ladder(owner, versions(1), climbers(2), retryCount=0)
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    run_tasks()
    failing, climbing = claim_all(driver)
    fail(driver, failing, "infrastructure")
    run_tasks()
    deliver_all()
    assert progress_of(ladder)["dispatch"]["status"] == "running"
    assert [r.event for r in receiver.requests] == ["climber.blocked"]

    push(driver, climbing)
    run_tasks()
    deliver_all()
    assert progress_of(ladder)["dispatch"]["status"] == "needsAttention"
    assert [r.event for r in receiver.requests] == ["climber.blocked", "dispatch.needs_attention"]
    attention = receiver.requests[1].json["data"]
    assert attention["blocked"] == 1
    assert [c["reason"] for c in attention["climbers"]] == ["failing"]
    assert attention["climbers"][0]["failure"]["failure"] == "infrastructure"


def test_needs_attention_is_sent_once_per_entry_into_the_reading(
    owner, driver, run_tasks, receiver
):
    subscribe(owner, receiver.url, events=["dispatch.needs_attention"])
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=0)
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    run_tasks()
    fail(driver, claim_all(driver)[0], "infrastructure")
    run_tasks()
    run_launch_pass(ladder_id=ladder.pk)  # a pass that changes nothing announces nothing
    run_launch_pass(ladder_id=ladder.pk)
    deliver_all()
    assert [r.event for r in receiver.requests] == ["dispatch.needs_attention"]

    # It left the reading (Retry) and came back to it: sent again.
    ladder_services.retry_blocked(ladder=ladder, by=owner)
    run_tasks()
    assert progress_of(ladder)["dispatch"]["status"] == "running"
    fail(driver, claim_all(driver)[0], "infrastructure")
    run_tasks()
    deliver_all()
    assert [r.event for r in receiver.requests] == ["dispatch.needs_attention"] * 2

    # A new Run after a Stop starts from Running: its first entry is announced too.
    ladder_services.stop_dispatch(ladder=ladder, by=owner)
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    run_tasks()
    fail(driver, claim_all(driver)[0], "infrastructure")
    run_tasks()
    deliver_all()
    assert [r.event for r in receiver.requests] == ["dispatch.needs_attention"] * 3


def test_subscriptions_hear_only_their_owners_events_and_the_types_they_list(
    owner, outsider, driver, run_tasks, receiver
):
    staff = UserFactory(username="ops", is_staff=True)
    mine = subscribe(owner, receiver.url, events=["dispatch.started"])
    theirs = subscribe(outsider, receiver.url)
    everyone = subscribe(staff, receiver.url, events=["dispatch.started"], deployment_wide=True)
    ladder = make_ladder(owner, versions(1), climbers(1))
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    ladder_services.stop_dispatch(ladder=ladder, by=owner)
    deliver_all()
    heard = sorted((d.subscription_id, d.event.type) for d in Delivery.objects.all())
    assert heard == sorted([(mine.pk, "dispatch.started"), (everyone.pk, "dispatch.started")])
    assert not Delivery.objects.filter(subscription=theirs).exists()


def test_with_no_subscription_nothing_is_recorded(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1), climbers(1))
    ladder_services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks)
    assert not Event.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_event_rolls_back_with_the_change_that_caused_it(owner, receiver):
    subscribe(owner, receiver.url)
    ladder = make_ladder(owner, versions(1), climbers(1))
    with pytest.raises(RuntimeError), transaction.atomic():
        ladder_services.start_dispatch(ladder=ladder, by=owner, run_pass=False)
        assert Event.objects.filter(type="dispatch.started").exists()
        raise RuntimeError("the Run fails after announcing")
    assert not Event.objects.exists() and not Delivery.objects.exists()
    assert not DBTaskResult.objects.filter(queue_name="webhooks").exists()
