"""A slow or failing receiver never slows a push, a pass, a Stop or the board: events are only
recorded in those transactions, and the worker's delivery thread (a queue of its own) is the
only thing that waits on the receiver."""

import threading
import time

import pytest
from django.utils import timezone

from ladders import services as ladder_services
from loopweb.ops.worker import Deliveries
from loopweb.runs import services as run_services
from loopweb.webhooks.models import Delivery
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions
from tests.tasks import run_queued_tasks
from tests.webhooks.helpers import subscribe
from tests.webhooks.receiver import HANG

pytestmark = pytest.mark.django_db(transaction=True)

#: How long the receiver keeps each attempt waiting (the webhook timeout, seconds).
HANG_SECONDS = 3.0
#: A generous bound for one push, pass, Stop or board read on a busy 2-core machine.
BOUND = 1.5


def timed(action, status: int | None = None) -> float:
    started = time.monotonic()
    answer = action()
    took = time.monotonic() - started
    if status is not None:
        assert answer.status_code == status, answer.content
    return took


def test_pushes_passes_a_stop_and_the_board_do_not_wait_for_a_hanging_receiver(
    owner, driver, owner_api, driver_api, receiver, settings, capsys
):
    settings.LOOPWEB_WEBHOOK_TIMEOUT = HANG_SECONDS
    receiver.default = HANG
    subscribe(owner, receiver.url)
    ladder = make_ladder(owner, versions(2), climbers(4))
    assert owner_api.post(f"/api/ladders/{ladder.pk}/run").status_code == 200
    run_queued_tasks()  # the launch pass; the delivery queue is left to the worker's thread
    assert Delivery.objects.filter(event__type="dispatch.started", status="pending").exists()

    stop = threading.Event()
    deliveries = Deliveries("test-worker", stop, interval=0.05)
    deliveries.start()
    try:
        assert receiver.heard.wait(10), "the delivery thread never reached the receiver"
        figures = {"push": [], "pass": [], "board": []}
        jobs = run_services.claim_jobs(driver=driver, limit=100)
        for job in jobs:
            body = {
                "job": job.pk,
                "outcome": "completed",
                "record": PERFECT,
                "finishedAt": timezone.now().isoformat(),
            }
            figures["push"].append(
                timed(lambda b=body: driver_api.post("/api/runs/", b, format="json"), 201)
            )
            figures["pass"].append(
                timed(lambda: ladder_services.run_launch_pass(ladder_id=ladder.pk))
            )
            figures["board"].append(
                timed(lambda: owner_api.get(f"/api/ladders/{ladder.pk}/progress"), 200)
            )
        figures["stop"] = [
            timed(lambda: owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json"), 200)
        ]
        # All of that happened while the receiver held the first attempt.
        still_waiting = Delivery.objects.filter(
            event__type="dispatch.started", delivered_at__isnull=True
        ).exists()
    finally:
        deliveries.halt()
        stop.set()
        receiver.release.set()
        deliveries.join(timeout=HANG_SECONDS + 5)
    assert still_waiting
    worst = {name: max(values) for name, values in figures.items()}
    with capsys.disabled():
        print(
            f"\nwhile a receiver hung for {HANG_SECONDS:.1f} s: "
            + ", ".join(
                f"{name} ×{len(values)} worst {worst[name] * 1000:.0f} ms"
                for name, values in figures.items()
            )
        )
    assert all(value < BOUND for value in worst.values()), worst
    assert Delivery.objects.filter(event__type="dispatch.stopped").exists()
