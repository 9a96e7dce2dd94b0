"""API.md "Provider budgets", under concurrency: 32 drivers claiming and finishing the jobs of
two ladders on one provider whose budget allows 5 in flight, on PostgreSQL with a connection
each. At no claim are more than 5 of the provider's jobs in flight (read from the job rows),
and both ladders climb side by side."""

import threading
import time

import pytest

from ladders import services
from ladders.models import Dispatch
from loopweb.runs import services as run_services
from loopweb.runs.errors import Conflict
from tests.budgets.helpers import budget, leased
from tests.factories import UserFactory
from tests.ladders.builders import climbers, make_ladder, push, versions
from tests.support.threads import Race

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("concurrency"),
    pytest.mark.postgres,
]

DRIVERS = 32
CAP = 5


def test_32_drivers_never_hold_more_than_the_cap_and_both_ladders_climb(owner):
    budget(provider="acme", max_in_flight=CAP)
    ladders = [
        make_ladder(owner, versions(3, prefix=f"l{i}"), climbers(6, prefix=f"l{i}-m"))
        for i in range(2)
    ]
    for ladder in ladders:
        services.start_dispatch(ladder=ladder)
    drivers = [UserFactory(username=f"bd{i}", role="driver") for i in range(DRIVERS)]
    race = Race()
    seen: list[int] = []
    claimed: list[str] = []
    lock = threading.Lock()

    def drive(driver):
        jobs = run_services.claim_jobs(driver=driver, limit=2)
        # Every claim has committed here; a budget's jobs in flight only grow by claims.
        now_in_flight = leased("acme")
        with lock:
            seen.append(now_in_flight)
            claimed.extend(job.origin.split("/")[0] for job in jobs)
        if not jobs:
            time.sleep(0.005)
        for job in jobs:
            try:
                run_services.report_status(job_id=job.pk, driver=driver, status="running")
                time.sleep(0.002)
                push(driver, job)
            except Conflict:
                pass

    def launch(ladder_id):
        services.run_launch_pass(ladder_id=ladder_id)
        time.sleep(0.01)

    for driver in drivers:
        race.spawn(drive, driver)
    for ladder in ladders:
        race.spawn(launch, ladder.pk)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and not race.stop.is_set():
        statuses = set(Dispatch.objects.filter(ladder__in=ladders).values_list("status", flat=True))
        if statuses == {"finished"}:
            break
        time.sleep(0.1)
    race.join()

    assert set(Dispatch.objects.filter(ladder__in=ladders).values_list("status", flat=True)) == {
        "finished"
    }
    assert len(claimed) >= 2 * 6 * 3  # every slot of both ladders was claimed
    assert max(seen) <= CAP
    assert max(seen) == CAP  # the cap was reached, so it was what held the drivers back
    # Both climbed side by side: each had a fair share of the first half of the claims.
    first = [f"ladder:{ladder.pk}" for ladder in ladders]
    half = claimed[: len(claimed) // 2]
    assert all(half.count(name) >= len(half) // 3 for name in first), claimed
