"""SPEC §5, "Read-your-writes ... on every web process": two web servers on one database, each
keeping its own shared boards. A write served by one is seen by the very next read served by the
other, for a push, a review, a job's end, a Retry and a Stop."""

import pytest
from django.utils import timezone

from ladders import services
from loopweb.runs.models import ApiToken
from tests.ladders.builders import PERFECT, climbers, make_ladder, queued, versions
from tests.ladders.servers import web_processes

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.xdist_group("live")]


@pytest.fixture
def servers():
    with web_processes(2) as pair:
        yield pair


def test_a_write_through_one_process_is_seen_by_the_next_read_through_the_other(
    servers, owner, driver
):
    a, b = servers
    owner_token = ApiToken.objects.issue(owner)[1]
    driver_token = ApiToken.objects.issue(driver)[1]
    ladder = make_ladder(owner, versions(2), climbers(2), retryCount=0)
    services.start_dispatch(ladder=ladder)
    progress = f"/api/ladders/{ladder.pk}/progress"
    first, second = queued(ladder)
    for server in servers:  # each process now keeps the board
        board = server.call(owner_token, progress)
        assert board["dispatch"]["runs"]["inFlight"] == 2
    a.call(driver_token, "/api/driver/claim", {"max": 10})

    # A push through A, read through B.
    run = a.call(
        driver_token,
        "/api/runs/",
        {
            "job": first.pk,
            "outcome": "completed",
            "record": PERFECT,
            "finishedAt": timezone.now().isoformat(),
        },
    )
    board = b.call(owner_token, progress)
    assert board["climbers"][0]["slots"][0]["status"] == "passed"
    assert board["dispatch"]["runsUnreviewed"] == 1

    # A review through B, read through A.
    b.call(owner_token, f"/api/runs/{run['id']}/reviews", {"aestheticRating": 5, "writeup": ""})
    assert a.call(owner_token, progress)["dispatch"]["runsUnreviewed"] == 0

    # A job's end through A, read through B: the climber blocks as failing.
    a.call(driver_token, f"/api/driver/jobs/{second.pk}/fail", {"failure": "infrastructure"})
    climber = b.call(owner_token, progress)["climbers"][1]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")

    # A Retry through B, read through A.
    b.call(owner_token, f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": climber["key"]})
    board = a.call(owner_token, progress)
    assert board["climbers"][1]["status"] == "running"
    assert board["climbers"][1]["tally"]["inFlight"] == 1

    # A Stop through A, read through B.
    a.call(owner_token, f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": False})
    board = b.call(owner_token, progress)
    assert board["dispatch"]["status"] == "stopped"
    assert board["dispatch"]["runs"]["inFlight"] == 0


def _waiting(board: dict) -> list[str]:
    return [c["label"] for c in board["climbers"] if any("waitingFor" in s for s in c["slots"])]


def test_a_budget_saved_through_one_process_is_seen_by_the_next_read_through_the_other(
    servers, owner, driver, staff
):
    """What a board's slots wait on follows a budget saved in another process at once: its
    version, a read since it and a whole read."""
    a, b = servers
    owner_token = ApiToken.objects.issue(owner)[1]
    staff_token = ApiToken.objects.issue(staff)[1]
    ladder = make_ladder(owner, versions(1), climbers(3))
    services.start_dispatch(ladder=ladder)
    b.call(ApiToken.objects.issue(driver)[1], "/api/driver/claim", {"max": 1})
    progress = f"/api/ladders/{ladder.pk}/progress"
    first = b.request(owner_token, progress)  # B has found no budget, and no slot waiting
    version = first.json()["version"]
    assert not _waiting(first.json())

    a.call(staff_token, "/api/budgets/", {"provider": "acme", "maxInFlight": 1})

    again = b.request(owner_token, progress, headers={"If-None-Match": first.headers["ETag"]})
    assert again.status == 200
    assert len(_waiting(again.json())) == 2
    assert len(_waiting(b.call(owner_token, f"{progress}?since={version}"))) == 2
