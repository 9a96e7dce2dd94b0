"""Seed 000: a late event about a commit is appended to its runs with its own observed_at."""

import datetime as dt

import pytest

from signals_app.models import Signal
from tests.signals.conftest import DROP, FINISHED, assert_400, iso, signal, signals_url

pytestmark = pytest.mark.django_db

URL = "/api/signals/events"


def late_event(**fields) -> dict:
    body = {
        "commit": "abc123",
        "name": "revert",
        "value": "PR-77",
        "observed_at": iso(FINISHED + dt.timedelta(days=2)),
        "tier": "verified",
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not DROP}


NO_EVENTS_RULE = {
    "name": "tests",
    "description": "tests pass",
    "requires": ["tests"],
    "score": None,
    "excludes_events": [],
    "window_days": 14,
    "ext": None,
}


def send(client, body):
    return client.post(URL, body, format="json")


def test_an_event_is_appended_to_every_run_whose_commit_or_merge_artifact_matches(
    driver_api, make_run
):
    by_commit = make_run(commit="abc123")
    by_merge = make_run(merge_artifact="abc123")
    other = make_run(commit="def456", merge_artifact="abc1234")
    response = send(driver_api, late_event())
    assert response.status_code == 201
    assert sorted(response.json()["matched"]) == sorted([by_commit.pk, by_merge.pk])
    assert not other.signals.exists()
    stored = by_commit.signals.get()
    assert (stored.kind, stored.name, stored.value, stored.tier) == (
        "event",
        "revert",
        "PR-77",
        "verified",
    )
    assert stored.observed_at == FINISHED + dt.timedelta(days=2)
    assert stored.source == "event"


def test_an_event_is_appended_whatever_the_runs_date(driver_api, make_run, owner_api):
    run = make_run(commit="abc123", finished_at=FINISHED - dt.timedelta(days=100))
    assert send(driver_api, late_event()).json()["matched"] == [run.pk]
    outcome = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert outcome["parts"][-1]["state"] == "pass"  # outside the window when read


def test_a_late_revert_inside_the_window_fails_a_passing_run(driver_api, owner_api, make_run):
    run = make_run(commit="abc123")
    owner_api.post(signals_url(run), signal(id="t"), format="json")
    assert owner_api.get(f"/api/runs/{run.pk}/outcome").json()["result"] == "success"
    send(driver_api, late_event(id="revert-77"))
    outcome = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert outcome["result"] == "failure"
    assert outcome["parts"][-1] == {
        "part": "excludes_events",
        "name": "revert",
        "state": "fail",
        "signal": "revert-77",
        "reason": "revert PR-77 observed 2.0 days after the run's end",
    }


def test_no_matching_run_matches_nothing(driver_api, make_run):
    make_run(commit="def456")
    response = send(driver_api, late_event())
    assert (response.status_code, response.json()) == (200, {"matched": []})
    assert not Signal.objects.exists()


def test_only_runs_the_caller_may_see_are_matched(owner_api, outsider_api, make_run, outsider):
    mine = make_run(commit="abc123")
    theirs = make_run(who=outsider, commit="abc123")
    assert send(outsider_api, late_event()).json()["matched"] == [theirs.pk]
    assert not mine.signals.exists()
    assert send(owner_api, late_event()).json()["matched"] == [mine.pk]


def test_reviewers_do_not_post_events(reviewer_api, make_run):
    make_run(commit="abc123", published=True)
    assert send(reviewer_api, late_event()).status_code == 403
    assert not Signal.objects.exists()


def test_sending_the_same_event_again_appends_nothing(driver_api, make_run):
    run = make_run(commit="abc123")
    send(driver_api, late_event())
    again = send(driver_api, late_event())
    assert (again.status_code, again.json()) == (200, {"matched": [run.pk]})
    assert run.signals.count() == 1
    assert run.signals.get().signal_id.startswith("event:")


def test_a_second_different_event_about_the_commit_is_appended(driver_api, make_run):
    run = make_run(commit="abc123")
    send(driver_api, late_event())
    send(driver_api, late_event(name="incident", value="INC-9"))
    assert run.signals.count() == 2


def test_an_event_id_already_used_for_another_signal_is_refused_everywhere(
    driver_api, owner_api, make_run
):
    first, second = make_run(commit="abc123"), make_run(commit="abc123")
    owner_api.post(signals_url(second), signal(id="r1"), format="json")
    assert_400(send(driver_api, late_event(id="r1")), "id", "unique")
    assert not first.signals.exists()


def test_a_run_where_the_name_has_another_kind_refuses_the_whole_request(
    driver_api, owner_api, make_run
):
    clean = make_run(commit="abc123")
    # Its rule excludes no event, so a verdict may be named "revert" on it.
    clash = make_run(merge_artifact="abc123", acceptance_rule=NO_EVENTS_RULE)
    owner_api.post(signals_url(clash), signal(id="v", name="revert"), format="json")
    body = assert_400(send(driver_api, late_event()), "name", "E195")
    assert f"run {clash.pk}" in body["errors"]["name"][0]
    assert not clean.signals.exists()
    assert clash.signals.count() == 1


@pytest.mark.parametrize(
    ("fields", "field", "code"),
    [
        ({"commit": DROP}, "commit", "required"),
        ({"commit": ""}, "commit", "blank"),
        ({"commit": "c" * 201}, "commit", "max_length"),
        ({"name": DROP}, "name", "required"),
        ({"value": DROP}, "value", "required"),
        ({"value": None}, "value", "E195"),
        ({"value": 3}, "value", "E195"),
        ({"observed_at": DROP}, "observed_at", "required"),
        ({"observed_at": "2026-03-03 10:00"}, "observed_at", "invalid"),
        ({"tier": DROP}, "tier", "required"),
        ({"tier": "sure"}, "tier", "invalid_choice"),
        ({"kind": "verdict"}, "kind", "E195"),
        ({"ext": 1}, "ext", "invalid"),
        ({"id": "i" * 201}, "id", "max_length"),
        ({"run": 4}, "run", "unknown_field"),
    ],
)
def test_every_field_rule_answers_400_naming_its_field(driver_api, make_run, fields, field, code):
    make_run(commit="abc123")
    assert_400(send(driver_api, late_event(**fields)), field, code)
    assert not Signal.objects.exists()


def test_kind_event_may_be_given(driver_api, make_run):
    run = make_run(commit="abc123")
    assert send(driver_api, late_event(kind="event")).json()["matched"] == [run.pk]


def test_a_late_event_body_is_an_object(driver_api):
    assert_400(driver_api.post(URL, "[]", content_type="application/json"), "body")
