"""Checklist overrides and the stored rating (seed 004: "The run's stored rating folds in every
reviewer's checklist overrides, so the gate never reads it").

A reviewer eligible to review a run (SPEC §1) overrides any item of its case version's checklist,
pass or fail, with a note. The run's stored rating is the validators' rating (SPEC §4) of the
run record with the latest override of each item folded in, whoever made it; the validator
rating stays the validators' own. The gate reads only the validator rating:
tests/ladders/test_checklist_overrides_never_reach_the_gate.py.
"""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.models import Q

from loopweb.runs import access
from loopweb.runs.errors import NotReviewable
from loopweb.runs.models import ChecklistOverride, Run
from loopweb.runs.overrides import override_item
from loopweb.runs.validators import fold, rate
from tests.factories import CHECKLIST, CaseVersionFactory
from tests.runs.helpers import finish, hand_job, outside_run

pytestmark = pytest.mark.django_db

ALL = {"starts", "jump", "score", "music", "pause"}


def record(passed: set[str], build: str = "ok") -> dict:
    return {
        "checklist": {item["id"]: item["id"] in passed for item in CHECKLIST},
        "toolchain": {"build": build, "loaded": True},
    }


# The bands of SPEC §4 over the factories' five-item checklist (starts and jump critical), each
# case moved across a band by overrides.
REFERENCE = [
    # (passed in the record, overrides, validator rating, stored rating)
    (ALL - {"pause"}, {"pause": True}, "great", "flawless"),
    (ALL, {"jump": False}, "flawless", "scuffed"),  # 80 % but a critical item failed
    (ALL, {"pause": False}, "flawless", "great"),  # 80 %, criticals pass
    ({"starts", "jump", "score"}, {"music": True}, "passable", "great"),  # 60 % -> 80 %
    ({"starts", "jump"}, {"score": True}, "scuffed", "passable"),  # 40 % -> 60 %
    ({"starts", "jump", "score"}, {"score": False}, "passable", "scuffed"),  # 60 % -> 40 %
    (set(), {"music": True}, "broken", "scuffed"),  # one item passed
    (ALL, {i: False for i in ALL}, "flawless", "broken"),  # none passed
    (ALL - {"pause"}, {"pause": False}, "great", "great"),  # agreeing changes nothing
]


@pytest.mark.parametrize(("passed", "overrides", "validator", "stored"), REFERENCE)
def test_folding_overrides_into_a_record_moves_its_rating_across_the_bands(
    passed, overrides, validator, stored
):
    assert rate(record(passed), CHECKLIST) == validator
    assert rate(fold(record(passed), overrides), CHECKLIST) == stored


def test_folding_leaves_the_record_it_read_alone():
    original = record({"starts"})
    folded = fold(original, {"jump": True})
    assert original["checklist"]["jump"] is False
    assert folded["checklist"] == {**original["checklist"], "jump": True}


def test_an_override_of_an_item_the_record_does_not_mention_counts():
    assert rate(fold({"checklist": {}}, dict.fromkeys(ALL, True)), CHECKLIST) == "flawless"
    assert rate(fold({}, {"starts": True}), CHECKLIST) == "scuffed"


def test_the_toolchain_gate_still_comes_first():
    failed = record(ALL, build="failed")
    assert rate(fold(failed, dict.fromkeys(ALL, True)), CHECKLIST) == "broken"


# The service ----------------------------------------------------------------------------------


@pytest.fixture
def run(owner, driver, version, combination) -> Run:
    """The owner's run of jump-1@3, rated great: every item but pause passed."""
    return finish(driver, hand_job(owner, version, combination), record=record(ALL - {"pause"}))


@pytest.fixture
def shared(reviewer):
    """A higher layer (a ladder shared with the reviewer) lets the reviewer review every run."""
    access.register_run_visibility(lambda user: Q() if user.pk == reviewer.pk else Q(pk=None))


def stored(run: Run) -> tuple[str | None, str | None]:
    run.refresh_from_db()
    return run.validator_rating, run.stored_rating


def test_a_new_run_stores_its_validator_rating(run):
    assert stored(run) == ("great", "great")


@pytest.mark.parametrize(("passed", "overrides", "validator", "expected"), REFERENCE)
def test_the_stored_rating_folds_in_the_overrides(
    owner, driver, version, combination, passed, overrides, validator, expected
):
    run = finish(driver, hand_job(owner, version, combination), record=record(passed))
    for item, passes in overrides.items():
        override_item(run=run, reviewer=owner, item=item, passed=passes, note="checked by hand")
    assert stored(run) == (validator, expected)


def test_the_latest_override_of_an_item_stands_whoever_made_it(run, owner, reviewer, shared):
    override_item(run=run, reviewer=owner, item="pause", passed=True, note="it pauses")
    assert stored(run) == ("great", "flawless")

    override_item(run=run, reviewer=reviewer, item="pause", passed=False, note="only once")
    assert stored(run) == ("great", "great")

    override_item(run=run, reviewer=owner, item="pause", passed=True, note="twice now")
    assert stored(run) == ("great", "flawless")
    assert list(run.overrides.values_list("reviewer__username", "passed")) == [
        ("olive", True),
        ("rita", False),
        ("olive", True),
    ]


def test_overrides_of_different_items_by_different_reviewers_all_fold_in(
    run, owner, reviewer, shared
):
    override_item(run=run, reviewer=owner, item="pause", passed=True, note="")
    override_item(run=run, reviewer=reviewer, item="jump", passed=False, note="falls through")
    assert stored(run) == ("great", "scuffed")  # 80 %, a critical item failed


def test_a_repush_rewrites_the_validator_rating_and_keeps_the_overrides(run, owner):
    from loopweb.runs import services
    from tests.runs.helpers import at

    override_item(run=run, reviewer=owner, item="pause", passed=True, note="it pauses")
    assert stored(run) == ("great", "flawless")

    services.repush_run(
        run=run, outcome="completed", record=record(ALL - {"pause", "music"}), finished_at=at(1)
    )
    assert stored(run) == ("passable", "great")  # pause still overridden: 80 %

    services.repush_run(
        run=run, outcome="completed", record=record(ALL, "failed"), finished_at=at(2)
    )
    assert stored(run) == ("broken", "broken")
    assert run.overrides.count() == 1


def test_a_run_the_validators_do_not_rate_stores_no_rating_either(owner, driver, combination):
    legacy = CaseVersionFactory(case__slug="old-1", legacy=True)
    run = finish(driver, hand_job(owner, legacy, combination))
    override_item(run=run, reviewer=owner, item="jump", passed=False, note="")
    assert stored(run) == (None, None)


def test_a_run_of_a_version_not_ingested_has_no_item_to_override(
    owner, driver, version, combination
):
    from loopweb.runs.models import CaseVersion

    run = outside_run(owner, version, combination)
    CaseVersion.objects.filter(pk=version.pk).delete()
    with pytest.raises(ValidationError) as raised:
        override_item(run=run, reviewer=owner, item="jump", passed=True, note="")
    assert "item" in raised.value.message_dict
    assert not ChecklistOverride.objects.exists()


def test_an_item_not_in_the_checklist_is_refused_and_nothing_is_recorded(run, owner):
    with pytest.raises(ValidationError) as raised:
        override_item(run=run, reviewer=owner, item="fly", passed=True, note="")
    assert raised.value.message_dict["item"] == [
        "jump-1@3 has no checklist item fly; its items are starts, jump, score, music and pause."
    ]
    assert stored(run) == ("great", "great")
    assert not ChecklistOverride.objects.exists()


def test_only_someone_who_may_review_the_run_overrides_it(run, reviewer, outsider, staff):
    Run.objects.filter(pk=run.pk).update(published=True)  # everyone reads it
    for user in (reviewer, outsider, staff):
        with pytest.raises(NotReviewable):
            override_item(run=run, reviewer=user, item="pause", passed=True, note="")
    assert stored(run) == ("great", "great")
    assert not ChecklistOverride.objects.exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_concurrent_overrides_of_one_run_all_reach_its_stored_rating(
    owner, driver, version, combination
):
    """Each override recomputes the stored rating from the overrides it reads: without the row
    lock, the later commit could store a rating that misses the other's override."""
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    run = finish(driver, hand_job(owner, version, combination), record=record(set()))
    barrier = threading.Barrier(len(ALL))
    errors = []

    def override(item):
        try:
            barrier.wait()
            override_item(run=run, reviewer=owner, item=item, passed=True, note="")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=override, args=(item,)) for item in sorted(ALL)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert stored(run) == ("broken", "flawless")


# The API --------------------------------------------------------------------------------------


def url(run: Run) -> str:
    return f"/api/runs/{run.pk}/overrides"


def test_posting_an_override_answers_it_with_both_ratings(run, owner_api):
    response = owner_api.post(
        url(run), {"item": "pause", "passed": True, "note": "pauses fine"}, format="json"
    )
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["validatorRating"] == "great"
    assert body["storedRating"] == "flawless"
    assert body["override"] == {
        "id": body["override"]["id"],
        "item": "pause",
        "passed": True,
        "note": "pauses fine",
        "reviewer": "olive",
        "createdAt": body["override"]["createdAt"],
        "current": True,
    }


def test_the_run_shows_both_ratings_and_who_overrode_what(run, owner_api, reviewer, shared):
    from tests.conftest import _token_client

    owner_api.post(url(run), {"item": "pause", "passed": True, "note": "ok"}, format="json")
    _token_client(reviewer).post(
        url(run), {"item": "pause", "passed": False, "note": "no"}, format="json"
    )
    owner_api.post(url(run), {"item": "score", "passed": False, "note": "zero"}, format="json")

    shown = owner_api.get(f"/api/runs/{run.pk}/").json()
    assert shown["validatorRating"] == "great"
    assert shown["storedRating"] == "passable"  # 60 %, criticals pass
    assert [(o["item"], o["passed"], o["reviewer"]) for o in shown["overrides"]] == [
        ("pause", False, "rita"),
        ("score", False, "olive"),
    ]

    history = owner_api.get(url(run)).json()
    assert [(o["item"], o["reviewer"], o["current"]) for o in history["results"]] == [
        ("pause", "olive", False),
        ("pause", "rita", True),
        ("score", "olive", True),
    ]


def test_the_runs_list_shows_the_stored_rating_of_each_run(run, owner_api):
    owner_api.post(url(run), {"item": "pause", "passed": True}, format="json")
    [listed] = owner_api.get("/api/runs/").json()["results"]
    assert (listed["validatorRating"], listed["storedRating"]) == ("great", "flawless")
    assert [o["item"] for o in listed["overrides"]] == ["pause"]


@pytest.mark.parametrize(
    ("body", "field", "code"),
    [
        ({"passed": True}, "item", "required"),
        ({"item": "fly", "passed": True}, "item", "does_not_exist"),
        ({"item": "", "passed": True}, "item", "blank"),
        ({"item": "pause"}, "passed", "required"),
        ({"item": "pause", "passed": "yes"}, "passed", "invalid"),
        ({"item": "pause", "passed": None}, "passed", "null"),
        ({"item": "pause", "passed": True, "note": "x" * 2001}, "note", "max_length"),
        ({"item": "pause", "passed": True, "note": 7}, "note", "invalid"),
    ],
)
def test_a_bad_override_is_a_400_naming_its_field(run, owner_api, body, field, code):
    response = owner_api.post(url(run), body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()
    assert list(errors["errors"]) == [field], errors
    assert errors["code"] == code
    assert errors["detail"].startswith(f"{field}: ")
    assert not ChecklistOverride.objects.exists()


def test_an_outsider_is_told_the_run_does_not_exist(run, outsider_api):
    for response in (
        outsider_api.get(url(run)),
        outsider_api.post(url(run), {"item": "pause", "passed": True}, format="json"),
    ):
        assert response.status_code == 404
    assert not ChecklistOverride.objects.exists()


def test_a_reader_of_a_published_run_sees_its_overrides_but_cannot_override(
    run, owner_api, outsider_api, reviewer_api
):
    owner_api.post(url(run), {"item": "pause", "passed": True}, format="json")
    Run.objects.filter(pk=run.pk).update(published=True)

    assert [o["item"] for o in outsider_api.get(url(run)).json()["results"]] == ["pause"]
    for api in (outsider_api, reviewer_api):
        response = api.post(url(run), {"item": "jump", "passed": False}, format="json")
        assert response.status_code == 404
    assert stored(run) == ("great", "flawless")


def test_a_driver_reads_overrides_but_never_writes_them(run, driver_api):
    assert driver_api.get(url(run)).status_code == 200
    response = driver_api.post(url(run), {"item": "pause", "passed": True}, format="json")
    assert response.status_code == 403
    assert not ChecklistOverride.objects.exists()


def test_listing_runs_with_overrides_costs_the_same_queries_however_many(
    owner, owner_api, driver, version, combination, django_assert_max_num_queries
):
    """Queries: the token, the runs' count, the page of runs (with their review count), and the
    overrides of the page's runs with their reviewers."""

    def overridden_run():
        run = finish(driver, hand_job(owner, version, combination))
        for item in ("pause", "jump"):
            override_item(run=run, reviewer=owner, item=item, passed=False, note="")

    overridden_run()
    with django_assert_max_num_queries(5):
        assert owner_api.get("/api/runs/").status_code == 200
    for _ in range(4):
        overridden_run()
    with django_assert_max_num_queries(5):
        assert len(owner_api.get("/api/runs/").json()["results"]) == 5


def test_the_admin_shows_a_runs_overrides_read_only(run, owner, staff):
    from django.test import Client

    override_item(run=run, reviewer=owner, item="pause", passed=True, note="pauses on P")
    browser = Client()
    browser.force_login(staff)

    html = browser.get(f"/admin/runs/run/{run.pk}/change/").content.decode()

    assert "pauses on P" in html
    assert "field-stored_rating" in html
    assert 'name="overrides-0-item"' not in html  # shown, not editable
