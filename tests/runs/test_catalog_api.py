"""SPEC §2 and API "Catalog": cases and versions, models, gg configurations, combinations and
coverage groups."""

import datetime as dt

import pytest
from django.utils import timezone

from loopweb.runs.models import Case, CaseVersion, Combination, CoverageGroup, GGConfiguration
from tests.factories import (
    CaseFactory,
    CaseVersionFactory,
    CombinationFactory,
    CoverageGroupFactory,
    GGConfigurationFactory,
    ModelEntryFactory,
)
from tests.runs.helpers import assert_field_error

pytestmark = pytest.mark.django_db


# Cases and versions


def test_an_owner_adds_a_case_and_everyone_signed_in_lists_it(owner_api, reviewer_api):
    response = owner_api.post(
        "/api/cases/", {"slug": "jump-1", "title": "Jump", "kind": "functional"}, format="json"
    )

    assert response.status_code == 201, response.content
    listed = reviewer_api.get("/api/cases/").json()
    assert listed["count"] == 1
    assert listed["results"][0]["slug"] == "jump-1"
    assert listed["results"][0]["kind"] == "functional"


@pytest.mark.parametrize(
    ("field", "body"),
    [
        ("kind", {"slug": "a", "title": "A", "kind": "speedrun"}),
        ("slug", {"slug": "not a slug", "title": "A", "kind": "functional"}),
        ("title", {"slug": "a", "kind": "functional"}),
    ],
)
def test_a_case_with_a_bad_field_is_refused_naming_it(owner_api, field, body):
    assert_field_error(owner_api.post("/api/cases/", body, format="json"), field)


def test_a_case_slug_is_unique(owner_api):
    CaseFactory(slug="jump-1")

    response = owner_api.post(
        "/api/cases/", {"slug": "jump-1", "title": "Again", "kind": "gameJam"}, format="json"
    )

    assert_field_error(response, "slug")


def test_reviewers_and_drivers_read_the_catalog_but_do_not_write_it(reviewer_api, driver_api):
    body = {"slug": "a", "title": "A", "kind": "functional"}
    for api in (reviewer_api, driver_api):
        assert api.get("/api/cases/").status_code == 200
        assert api.post("/api/cases/", body, format="json").status_code == 403
        assert (
            api.post("/api/models/", {"name": "m", "provider": "p"}, format="json").status_code
            == 403
        )


def test_a_case_is_read_with_its_versions_newest_first(reviewer_api):
    case = CaseFactory(slug="jump-1")
    now = timezone.now()
    CaseVersionFactory(case=case, version="1", ingested_at=now - dt.timedelta(days=2))
    CaseVersionFactory(case=case, version="2", ingested_at=now - dt.timedelta(days=1), legacy=True)

    data = reviewer_api.get("/api/cases/jump-1/").json()

    assert [v["version"] for v in data["versions"]] == ["2", "1"]
    assert data["versions"][0]["legacy"] is True
    assert data["versions"][1]["checklist"][0] == {
        "id": "starts",
        "text": "The game starts",
        "critical": True,
    }
    assert reviewer_api.get("/api/cases/nope/").status_code == 404


def test_an_owner_ingests_a_version_with_its_variants_engines_and_checklist(owner_api):
    CaseFactory(slug="jump-1")

    response = owner_api.post(
        "/api/cases/jump-1/versions/",
        {
            "version": "3",
            "variants": ["default", "hard"],
            "engines": ["godot"],
            "checklist": [{"id": "starts", "text": "Starts", "critical": True}, {"id": "jump"}],
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["version"], data["legacy"], data["variants"], data["engines"]) == (
        "3",
        False,
        ["default", "hard"],
        ["godot"],
    )
    assert data["checklist"] == [
        {"id": "starts", "text": "Starts", "critical": True},
        {"id": "jump", "text": "", "critical": False},
    ]
    assert data["ingestedAt"]
    listed = owner_api.get("/api/cases/jump-1/versions/").json()
    assert [v["version"] for v in listed["results"]] == ["3"]


def test_a_version_declares_the_default_variant_when_it_names_none(owner_api):
    CaseFactory(slug="jump-1")

    data = owner_api.post("/api/cases/jump-1/versions/", {"version": "1"}, format="json").json()

    assert data["variants"] == ["default"]
    assert data["engines"] == []


def test_ingesting_a_version_again_re_ingests_it(owner_api):
    CaseFactory(slug="jump-1")
    owner_api.post("/api/cases/jump-1/versions/", {"version": "1"}, format="json")

    owner_api.post("/api/cases/jump-1/versions/", {"version": "1", "legacy": True}, format="json")

    assert CaseVersion.objects.get().legacy is True


@pytest.mark.parametrize(
    ("field", "body"),
    [
        ("version", {"version": "1 2"}),
        ("version", {}),
        ("variants.0", {"version": "1", "variants": ["a/b"]}),
        ("engines.0", {"version": "1", "engines": ["a::b"]}),
        ("checklist.1.id", {"version": "1", "checklist": [{"id": "a"}, {"id": "a"}]}),
        ("checklist.0.id", {"version": "1", "checklist": [{"text": "no id"}]}),
        ("checklist.0.critical", {"version": "1", "checklist": [{"id": "a", "critical": "yes"}]}),
        ("checklist.0", {"version": "1", "checklist": ["not an item"]}),
        ("ingestedAt", {"version": "1", "ingestedAt": "yesterday"}),
    ],
)
def test_a_bad_version_is_refused_naming_the_field(owner_api, field, body):
    CaseFactory(slug="jump-1")

    assert_field_error(owner_api.post("/api/cases/jump-1/versions/", body, format="json"), field)
    assert CaseVersion.objects.count() == 0


# Model catalog entries


def test_an_owner_adds_a_model_and_fixes_it_with_patch(owner_api):
    created = owner_api.post(
        "/api/models/", {"name": "gpt-x", "provider": "acme"}, format="json"
    ).json()
    assert created["launchable"] is True

    response = owner_api.patch(
        f"/api/models/{created['id']}/", {"launchable": False, "provider": "acme2"}, format="json"
    )

    assert response.status_code == 200, response.content
    assert response.json() == {
        "id": created["id"],
        "name": "gpt-x",
        "provider": "acme2",
        "launchable": False,
    }
    assert owner_api.put(f"/api/models/{created['id']}/", created, format="json").status_code == 405


def test_a_model_name_is_unique(owner_api):
    ModelEntryFactory(name="gpt-x")

    response = owner_api.post("/api/models/", {"name": "gpt-x", "provider": "b"}, format="json")

    assert_field_error(response, "name")


# gg configurations


def test_gg_configurations_are_created_replaced_and_deleted(owner_api):
    created = owner_api.post(
        "/api/gg-configurations/", {"name": "pair", "roles": ["planner", "coder"]}, format="json"
    )
    assert created.status_code == 201, created.content
    pk = created.json()["id"]

    replaced = owner_api.put(
        f"/api/gg-configurations/{pk}/", {"name": "trio", "roles": ["a", "b", "c"]}, format="json"
    )
    assert replaced.json() == {"id": pk, "name": "trio", "roles": ["a", "b", "c"]}

    assert owner_api.delete(f"/api/gg-configurations/{pk}/").status_code == 204
    assert not GGConfiguration.objects.exists()


@pytest.mark.parametrize(
    ("field", "roles"),
    [("roles", []), ("roles", ["a", "a"]), ("roles.0", ["has space"]), ("roles", "planner")],
)
def test_a_gg_configuration_needs_distinct_simple_roles(owner_api, field, roles):
    response = owner_api.post(
        "/api/gg-configurations/", {"name": "x", "roles": roles}, format="json"
    )

    assert_field_error(response, field)


# Combinations


def test_a_harness_combination_gets_its_key_and_label(owner_api, reviewer_api):
    response = owner_api.post(
        "/api/combinations/",
        {"kind": "harness", "harness": "aider", "model": "gpt-x", "provider": "acme"},
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["key"], data["label"]) == ("aider|gpt-x|acme", "gpt-x via aider (acme)")
    assert reviewer_api.get(f"/api/combinations/{data['id']}/").json() == data


def test_a_gg_combination_gets_its_key_with_roles_sorted_and_its_label(owner_api):
    configuration = GGConfigurationFactory(name="pair", roles=["planner", "coder"])

    response = owner_api.post(
        "/api/combinations/",
        {
            "kind": "gg",
            "configuration": configuration.pk,
            "bindings": {"planner": "big", "coder": "small"},
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert data["key"] == f"gg:{configuration.pk}|coder=small,planner=big"
    assert data["label"] == "pair (coder: small, planner: big)"
    assert (data["configuration"], data["bindings"]) == (
        configuration.pk,
        {"planner": "big", "coder": "small"},
    )


def test_a_combination_that_exists_is_refused_with_its_id(owner_api):
    existing = CombinationFactory(harness="aider", model="gpt-x", provider="acme")

    response = owner_api.post(
        "/api/combinations/",
        {"kind": "harness", "harness": "aider", "model": "gpt-x", "provider": "acme"},
        format="json",
    )

    body = assert_field_error(response, "key")
    assert f"id {existing.pk}" in body["errors"]["key"][0]


@pytest.mark.parametrize(
    ("field", "body"),
    [
        ("kind", {"kind": "solo", "harness": "a", "model": "m", "provider": "p"}),
        ("harness", {"kind": "harness", "model": "m", "provider": "p"}),
        ("model", {"kind": "harness", "harness": "a", "provider": "p"}),
        ("provider", {"kind": "harness", "harness": "a", "model": "m"}),
        ("harness", {"kind": "harness", "harness": "a|b", "model": "m", "provider": "p"}),
        ("provider", {"kind": "harness", "harness": "a", "model": "m", "provider": "p|q"}),
        ("harness", {"kind": "harness", "harness": "gg:1", "model": "m", "provider": "p"}),
        ("configuration", {"kind": "gg", "configuration": 999999, "bindings": {}}),
        ("configuration", {"kind": "gg", "bindings": {}}),
    ],
)
def test_a_bad_combination_is_refused_naming_the_field(owner_api, field, body):
    assert_field_error(owner_api.post("/api/combinations/", body, format="json"), field)
    assert Combination.objects.count() == 0


@pytest.mark.parametrize(
    "bindings",
    [{"planner": "big"}, {"planner": "big", "coder": "small", "extra": "x"}, {}, ["big"]],
)
def test_a_gg_combination_binds_exactly_one_model_to_each_role(owner_api, bindings):
    configuration = GGConfigurationFactory(roles=["planner", "coder"])

    response = owner_api.post(
        "/api/combinations/",
        {"kind": "gg", "configuration": configuration.pk, "bindings": bindings},
        format="json",
    )

    assert_field_error(response, "bindings")


def test_a_gg_combination_whose_keys_would_not_fit_is_refused(owner_api):
    configuration = GGConfigurationFactory(roles=[f"role{i}" for i in range(20)])
    bindings = {f"role{i}": f"model-{i}-" + "m" * 150 for i in range(20)}

    response = owner_api.post(
        "/api/combinations/",
        {"kind": "gg", "configuration": configuration.pk, "bindings": bindings},
        format="json",
    )

    assert_field_error(response, "bindings")


# Coverage groups


def test_an_owner_saves_a_group_whose_members_keep_their_order(owner, owner_api):
    a, b, c = (CombinationFactory() for _ in range(3))

    response = owner_api.post(
        "/api/groups/",
        {"name": "front", "kind": "combo", "members": [c.pk, a.pk, b.pk]},
        format="json",
    )

    assert response.status_code == 201, response.content
    data = response.json()
    assert (data["kind"], data["members"]) == ("combo", [c.pk, a.pk, b.pk])
    assert owner_api.get(f"/api/groups/{data['id']}/").json()["members"] == [c.pk, a.pk, b.pk]
    assert CoverageGroup.objects.get().owner == owner


def test_an_owner_reorders_and_renames_a_group_with_put(owner_api, owner):
    a, b = CombinationFactory(), CombinationFactory()
    group = CoverageGroupFactory(owner=owner, combinations=[a, b])

    response = owner_api.put(
        f"/api/groups/{group.pk}/", {"name": "renamed", "members": [b.pk, a.pk]}, format="json"
    )

    assert response.status_code == 200, response.content
    assert response.json()["members"] == [b.pk, a.pk]
    assert response.json()["name"] == "renamed"


def test_an_owner_lists_and_deletes_only_their_groups(owner, owner_api, outsider):
    mine = CoverageGroupFactory(owner=owner)
    CoverageGroupFactory(owner=outsider)

    listed = owner_api.get("/api/groups/").json()
    assert [g["id"] for g in listed["results"]] == [mine.pk]
    assert owner_api.delete(f"/api/groups/{mine.pk}/").status_code == 204
    assert CoverageGroup.objects.count() == 1


@pytest.mark.parametrize(
    ("field", "members"),
    [("members", [999999]), ("members", "dup"), ("members.0", ["x"]), ("members.0", [0])],
)
def test_a_group_names_its_bad_members(owner_api, field, members):
    combination = CombinationFactory()
    if members == "dup":
        members = [combination.pk, combination.pk]

    response = owner_api.post("/api/groups/", {"name": "g", "members": members}, format="json")

    assert_field_error(response, field)


def test_a_group_kind_is_combo(owner_api):
    response = owner_api.post("/api/groups/", {"name": "g", "kind": "plan"}, format="json")

    assert_field_error(response, "kind")


def test_reviewers_have_no_groups(reviewer_api):
    assert reviewer_api.get("/api/groups/").status_code == 403


def test_cases_are_listed_by_slug(reviewer_api):
    for slug in ("b", "c", "a"):
        Case.objects.create(slug=slug, title=slug, kind="functional")

    assert [c["slug"] for c in reviewer_api.get("/api/cases/").json()["results"]] == ["a", "b", "c"]
