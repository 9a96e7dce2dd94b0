"""Seed 004, "A rung must be validator-rated"."""

import pytest

from ladders.models import Dispatch
from loopweb.runs.models import Case, CaseVersion, Job
from tests.factories import CaseFactory, CaseVersionFactory
from tests.ladders.builders import (
    api_ladder,
    climbers,
    config,
    queued,
    rung,
    versions,
)

KINDS = {
    # kind: (how to make the version, the field the error names, words the message must hold)
    "legacy": (
        lambda: CaseVersionFactory(case=CaseFactory(slug="old-jump"), legacy=True),
        "version",
        ("legacy", "reviewer"),
    ),
    "performance": (
        lambda: CaseVersionFactory(case=CaseFactory(slug="fps", kind="performance")),
        "case",
        ("performance", "own scale", "no functional rating"),
    ),
    "game jam": (
        lambda: CaseVersionFactory(case=CaseFactory(slug="jam", kind="gameJam")),
        "case",
        ("game jam", "category scale", "no domain ratings"),
    ),
}


def assert_refused(answer, index: int, field: str, words) -> None:
    assert answer.status_code == 400, answer.json()
    [message] = answer.json()["errors"][f"rungs.{index}.{field}"]
    for word in (*words, "validator-rated", "coverage plan"):
        assert word in message, (word, message)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_is_refused_when_the_ladder_is_saved_with_an_explicit_message(owner_api, kind):
    """ "Three kinds of case version are rejected when a ladder is saved ... each with an
    explicit message ... All three belong in a coverage plan, and the error says so." """
    make, field, words = KINDS[kind]
    [fine] = versions(1)
    bad = make()
    created = owner_api.post("/api/ladders/", config(rungs=[rung(fine), rung(bad)]), format="json")
    assert_refused(created, 1, field, words)

    body = api_ladder(owner_api, rungs=[rung(fine)])
    edited = config(rungs=[{**body["rungs"][0]}, rung(bad)])
    assert_refused(
        owner_api.put(f"/api/ladders/{body['id']}/", edited, format="json"), 1, field, words
    )
    stored = owner_api.get(f"/api/ladders/{body['id']}/").json()
    assert [r["case"] for r in stored["rungs"]] == ["step-1"]


def test_every_refused_rung_is_named(owner_api):
    """Each refused rung gets its own message, under its own index."""
    bad = [make() for make, _, _ in KINDS.values()]
    answer = owner_api.post("/api/ladders/", config(rungs=[rung(v) for v in bad]), format="json")
    assert answer.status_code == 400
    assert set(answer.json()["errors"]) == {"rungs.0.version", "rungs.1.case", "rungs.2.case"}


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_kind_is_refused_again_when_the_ladder_is_run(owner_api, kind):
    """ "... and again when it is run": a rung that became one of the three kinds after the
    ladder was saved stops the Run, and nothing is dispatched or launched."""
    make, field, words = KINDS[kind]
    bad = make()
    version_was = CaseVersion.objects.get(pk=bad.pk)
    case_was = version_was.case.kind
    # Saved while it was a validator-rated version ...
    CaseVersion.objects.filter(pk=bad.pk).update(legacy=False)
    Case.objects.filter(pk=bad.case_id).update(kind="functional")
    body = api_ladder(owner_api, rungs=[rung(bad)], combinations=[climbers(1)[0].pk])
    # ... and run after it became one of the three kinds.
    CaseVersion.objects.filter(pk=bad.pk).update(legacy=version_was.legacy)
    Case.objects.filter(pk=bad.case_id).update(kind=case_was)
    assert_refused(owner_api.post(f"/api/ladders/{body['id']}/run"), 0, field, words)
    assert not Dispatch.objects.exists()
    assert Job.objects.count() == 0


def test_a_rung_pinned_to_a_version_the_backend_has_not_ingested_is_allowed(owner_api):
    """ "A rung pinned to a version the backend has not ingested ... is allowed." """
    CaseVersionFactory(case=CaseFactory(slug="jump"), version="1")
    future = {"case": "jump", "version": "7", "variant": "default", "engine": None, "runs": None}
    body = api_ladder(owner_api, rungs=[future], combinations=[climbers(1)[0].pk])
    started = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert started.status_code == 200, started.json()
    assert [(j.case, j.version) for j in queued()] == [("jump", "7")]


def test_a_rung_of_a_case_the_backend_has_never_ingested_is_allowed(owner_api):
    """A case of which no version is ingested is a version the backend has not ingested: the
    driver reports it better than an author-time check can."""
    unknown = {"case": "brand-new", "version": "1", "variant": "default", "engine": None}
    body = api_ladder(owner_api, rungs=[unknown], combinations=[climbers(1)[0].pk])
    started = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert started.status_code == 200, started.json()
    assert [(j.case, j.version) for j in queued()] == [("brand-new", "1")]


def test_a_rung_pinned_to_an_engine_the_version_does_not_declare_is_allowed(owner_api):
    """ "... or to an engine the pinned version does not declare, is allowed. The driver reports
    that far better than an author-time check can." """
    version = CaseVersionFactory(case=CaseFactory(slug="jump"), engines=["godot"])
    body = api_ladder(
        owner_api, rungs=[rung(version, engine="unity")], combinations=[climbers(1)[0].pk]
    )
    started = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert started.status_code == 200, started.json()
    assert [j.engine for j in queued()] == ["unity"]
