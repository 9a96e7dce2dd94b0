"""review.backlog: sent once when a ladder's unreviewed runs reach the threshold its owner set,
again only after the backlog fell below it and came back."""

import pytest

from ladders import services as ladder_services
from loopweb.reviewing.models import ReviewSettings
from loopweb.webhooks.models import Event
from tests.ladders.builders import claim_all, climbers, make_ladder, push, versions
from tests.webhooks.helpers import subscribe

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def public_url(settings):
    settings.LOOPWEB_PUBLIC_URL = "https://loopweb.example"


def backlog_events() -> list[Event]:
    return list(Event.objects.filter(type="review.backlog").order_by("id"))


def ladder_of(owner, combos=4, runs=1):
    ladder = make_ladder(owner, versions(1), climbers(combos), runsPerCell=runs)
    ladder_services.start_dispatch(ladder=ladder)
    return ladder


def set_threshold(api, ladder, value, *, expect=200):
    response = api.put(
        f"/api/ladders/{ladder.pk}/backlog", {"backlogThreshold": value}, format="json"
    )
    assert response.status_code == expect, response.json()
    return response.json()


def test_the_event_is_sent_once_when_the_backlog_reaches_the_threshold(
    owner, owner_api, driver, run_tasks
):
    subscribe(owner, "https://hooks.example/loopweb", events=["review.backlog"])
    ladder = ladder_of(owner, combos=4)
    settings_now = set_threshold(owner_api, ladder, 3)
    assert settings_now == {"backlogThreshold": 3, "backlog": 0, "over": False}
    run_tasks()
    runs = [push(driver, job) for job in claim_all(driver)]
    assert len(runs) == 4
    [event] = backlog_events()  # the third run crossed; the fourth sent nothing more
    assert event.data["waiting"] == 3 and event.data["threshold"] == 3
    assert event.data["ladder"]["id"] == ladder.pk
    assert event.data["url"] == f"https://loopweb.example/ladders/{ladder.pk}/queue/"
    assert "3 run(s) waiting for review" in event.text
    assert owner_api.get(f"/api/ladders/{ladder.pk}/backlog").json() == {
        "backlogThreshold": 3,
        "backlog": 4,
        "over": True,
    }


def test_reviews_that_bring_it_below_the_threshold_rearm_the_event(
    owner, owner_api, driver, run_tasks
):
    subscribe(owner, "https://hooks.example/loopweb", events=["review.backlog"])
    ladder = ladder_of(owner, combos=4, runs=2)
    set_threshold(owner_api, ladder, 3)
    run_tasks()
    jobs = claim_all(driver)
    runs = [push(driver, job) for job in jobs[:3]]
    assert len(backlog_events()) == 1
    for run in runs[:2]:  # through the API, as a reviewer would: the hook fires
        response = owner_api.post(
            f"/api/runs/{run.pk}/reviews", {"aestheticRating": 4, "writeup": ""}, format="json"
        )
        assert response.status_code == 201, response.json()
    assert ReviewSettings.objects.get(ladder=ladder).backlog_over is False
    push(driver, jobs[3])
    assert len(backlog_events()) == 1  # 2 waiting
    push(driver, jobs[4])
    assert len(backlog_events()) == 2  # 3 waiting again: a second crossing


def test_setting_a_threshold_the_backlog_already_stands_past_is_a_crossing(
    owner, owner_api, driver, run_tasks
):
    subscribe(owner, "https://hooks.example/loopweb", events=["review.backlog"])
    ladder = ladder_of(owner, combos=3)
    run_tasks()
    for job in claim_all(driver):
        push(driver, job)
    assert backlog_events() == []
    assert set_threshold(owner_api, ladder, 2)["over"] is True
    assert len(backlog_events()) == 1
    set_threshold(owner_api, ladder, 1)  # still past it: no new crossing
    assert len(backlog_events()) == 1
    set_threshold(owner_api, ladder, None)
    set_threshold(owner_api, ladder, 3)  # off, then on again at a level it stands at
    assert len(backlog_events()) == 2


def test_no_threshold_no_event_and_nobody_listening_records_nothing(
    owner, owner_api, driver, run_tasks
):
    ladder = ladder_of(owner, combos=2)
    set_threshold(owner_api, ladder, 1)  # nobody subscribed
    run_tasks()
    for job in claim_all(driver):
        push(driver, job)
    assert backlog_events() == []
    assert ReviewSettings.objects.get(ladder=ladder).backlog_over is True


@pytest.mark.parametrize("value", [0, -1, "3", 2.5, True])
def test_a_threshold_is_a_whole_number_of_at_least_one_or_null(owner, owner_api, value):
    ladder = ladder_of(owner, combos=1)
    body = set_threshold(owner_api, ladder, value, expect=400)
    assert "backlogThreshold" in body["errors"]


def test_only_the_owner_sets_the_threshold(owner, reviewer, reviewer_api):
    ladder = make_ladder(owner, versions(1), climbers(1), reviewers=[reviewer.pk])
    response = reviewer_api.put(
        f"/api/ladders/{ladder.pk}/backlog", {"backlogThreshold": 2}, format="json"
    )
    assert response.status_code == 403
    assert not ReviewSettings.objects.filter(ladder=ladder).exists()
