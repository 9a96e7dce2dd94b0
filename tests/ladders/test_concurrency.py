"""Launch passes, drivers and Stop racing on PostgreSQL, each thread with its own connection."""

import random
import re
import time
from collections import Counter

import pytest
from django.db import connection

from ladders import services
from ladders.models import Dispatch
from loopweb.runs import services as run_services
from loopweb.runs.errors import Conflict
from loopweb.runs.models import IN_FLIGHT, Job, Run
from tests.factories import UserFactory
from tests.ladders.builders import climbers, make_ladder, push, versions
from tests.support.threads import Background, Race

# PostgreSQL: many writers at once (SQLite runs one writer at a time, so a race there tests
# how long its lock is waited for, not the row locks this proves).
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("concurrency"),
    pytest.mark.postgres,
]


def drive(driver, rng: random.Random):
    jobs = run_services.claim_jobs(driver=driver, limit=2)
    if not jobs:
        time.sleep(0.005)
    for job in jobs:
        try:
            run_services.report_status(job_id=job.pk, driver=driver, status="running")
            if job.attempt == 1 and rng.random() < 0.2:
                run_services.fail_job(job_id=job.pk, driver=driver, failure="infrastructure")
            else:
                push(driver, job)
        except Conflict:
            pass  # cancelled under us by a Stop or an early decision


def launch(ladder_id):
    services.run_launch_pass(ladder_id=ladder_id)


def launches_per_slot(ladder):
    return Counter(
        Job.objects.filter(origin__startswith=f"ladder:{ladder.pk}/", attempt=1).values_list(
            "origin", "cell_key"
        )
    )


def jobs_of(ladder, slots) -> list:
    """The slots' jobs, to read a failure by."""
    return [
        list(
            Job.objects.filter(origin=origin, cell_key=cell_key)
            .order_by("id")
            .values_list("id", "attempt", "status", "retry_id", "failure", "finished_at")
        )
        for origin, cell_key in slots
    ]


def test_passes_and_drivers_never_launch_twice_or_past_a_target_or_the_limit(owner):
    drivers = [UserFactory(username=f"d{i}", role="driver") for i in range(3)]
    ladder = make_ladder(owner, versions(3), climbers(6), runsPerCell=2, runsInFlightLimit=5)
    services.start_dispatch(ladder=ladder)
    race = Race()
    seen_in_flight = []

    def watch():
        seen_in_flight.append(
            Job.objects.filter(
                origin__startswith=f"ladder:{ladder.pk}/", status__in=IN_FLIGHT
            ).count()
        )
        time.sleep(0.002)

    for i, driver in enumerate(drivers):
        race.spawn(drive, driver, random.Random(i))
    for _ in range(3):
        race.spawn(launch, ladder.pk)
    race.spawn(watch)
    deadline = time.monotonic() + 40
    while time.monotonic() < deadline and not race.stop.is_set():
        if Dispatch.objects.get(ladder=ladder).status == "finished":
            break
        time.sleep(0.1)
    race.join()

    assert Dispatch.objects.get(ladder=ladder).status == "finished"
    assert max(seen_in_flight) <= 5
    assert all(n <= 2 for n in launches_per_slot(ladder).values())


def test_stop_and_cancel_running_leaves_nothing_in_flight_under_a_race(owner):
    drivers = [UserFactory(username=f"s{i}", role="driver") for i in range(3)]
    ladder = make_ladder(owner, versions(6), climbers(8), runsPerCell=3, runsInFlightLimit=12)
    services.start_dispatch(ladder=ladder)
    race = Race()
    for i, driver in enumerate(drivers):
        race.spawn(drive, driver, random.Random(10 + i))
    for _ in range(2):
        race.spawn(launch, ladder.pk)
    # Stop mid-climb: once a dozen runs have landed (of the 144 the climb could take).
    deadline = time.monotonic() + 30
    while Run.objects.count() < 12 and time.monotonic() < deadline and not race.errors:
        time.sleep(0.02)
    cancelled = services.stop_dispatch(ladder=ladder, cancel_running=True)
    left = Job.objects.filter(origin__startswith=f"ladder:{ladder.pk}/", status__in=IN_FLIGHT)
    assert left.count() == 0
    time.sleep(0.5)
    race.join()
    assert cancelled >= 0
    assert left.count() == 0
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"
    over = {slot: n for slot, n in launches_per_slot(ladder).items() if n > 3}
    assert not over, jobs_of(ladder, over)


def push_from_another_connection(driver, job_id: int) -> None:
    """A driver's push, committed on a connection of its own before this returns (it must not
    wait on the pass)."""
    Background(lambda: push(driver, Job(pk=job_id))).join(timeout=30)


def test_a_pass_never_launches_past_a_target_when_pushes_land_between_its_reads(owner, monkeypatch):
    """A push ends its job and stores its counted run in one transaction. Here one commits right
    after each statement of the pass that reads counted runs (in its evidence, and when it
    re-reads a cell's room under the cells' locks, if it gets there): counted runs read in one
    statement and jobs in flight in another, a job pushed between them would be in neither, and
    the cell would seem to have room for a run more than it has. The evidence reads jobs before
    runs, so its standing is never short so (the push is counted twice, as in flight and as a
    run); the room is read in one statement."""
    driver = UserFactory(username="p0", role="driver")
    ladder = make_ladder(owner, versions(1), climbers(1), runsPerCell=3)
    services.start_dispatch(ladder=ladder)
    jobs = run_services.claim_jobs(driver=driver, limit=10)
    assert len(jobs) == 3
    for job in jobs:
        run_services.report_status(job_id=job.pk, driver=driver, status="running")
    pushes = iter(job.pk for job in jobs[:2])
    from_runs = re.compile(rf'\bFROM "?{Run._meta.db_table}"?\s', re.IGNORECASE)

    def push_after_reading_counted_runs(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        reads_counted_runs = bool(from_runs.search(sql)) and "counted" in sql
        job_id = next(pushes, None) if reads_counted_runs else None
        if job_id is not None:
            push_from_another_connection(driver, job_id)
        return result

    with connection.execute_wrapper(push_after_reading_counted_runs):
        services.run_launch_pass(ladder_id=ladder.pk)

    assert next(pushes, None) == jobs[1].pk, "the pass read no counted runs"
    assert Run.objects.filter(counted=True).count() == 1
    assert launches_per_slot(ladder) == {(jobs[0].origin, jobs[0].cell_key): 3}
