"""SPEC §1: catalog entries are shared — owners and staff create them and everyone uses them —
but only an entry's creator or staff may change or delete it, and an entry something uses cannot
be deleted (409 naming what uses it). An entry created before creators were recorded has none:
only staff may change or delete it."""

import threading

import pytest
from django.db import transaction
from django.urls import reverse

from loopweb.runs.models import Case, CaseVersion, Combination, GGConfiguration, ModelEntry
from tests.console.helpers import Browser
from tests.factories import CaseFactory, GGConfigurationFactory, ModelEntryFactory
from tests.support.threads import Background

pytestmark = pytest.mark.django_db

CHECKLIST = [{"id": "starts", "text": "The game starts", "critical": True}]


@pytest.fixture
def staff_api(staff, token_client):
    return token_client(staff)


def created(client, url: str, body: dict) -> dict:
    response = client.post(url, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def alices_configuration(owner_api) -> GGConfiguration:
    body = {"name": "planner+coder", "roles": ["planner", "coder"]}
    return GGConfiguration.objects.get(pk=created(owner_api, "/api/gg-configurations/", body)["id"])


def alices_model(owner_api) -> ModelEntry:
    body = {"name": "gpt-x", "provider": "acme"}
    return ModelEntry.objects.get(pk=created(owner_api, "/api/models/", body)["id"])


def gg_combination_of(client, configuration) -> dict:
    body = {
        "kind": "gg",
        "configuration": configuration.pk,
        "bindings": {"planner": "gpt-x", "coder": "gpt-y"},
    }
    return created(client, "/api/combinations/", body)


def assert_refused_to(response, what: str) -> None:
    assert response.status_code == 403, response.content
    detail = response.json()["detail"]
    assert what in detail and "creator" in detail and "staff" in detail, detail


# Who may change an entry ------------------------------------------------------------------------


def test_another_owner_cannot_rename_or_delete_a_gg_configuration_they_did_not_create(
    owner_api, outsider_api
):
    configuration = alices_configuration(owner_api)
    url = f"/api/gg-configurations/{configuration.pk}/"

    renamed = outsider_api.put(url, {"name": "mine now", "roles": ["solo"]}, format="json")
    deleted = outsider_api.delete(url)

    assert_refused_to(renamed, f"gg configuration {configuration.pk}")
    assert_refused_to(deleted, f"gg configuration {configuration.pk}")
    configuration.refresh_from_db()
    assert (configuration.name, configuration.roles) == ("planner+coder", ["planner", "coder"])


def test_another_owner_is_refused_before_their_body_is_read(owner_api, outsider_api):
    configuration = alices_configuration(owner_api)

    response = outsider_api.put(
        f"/api/gg-configurations/{configuration.pk}/", {"roles": "not a list"}, format="json"
    )

    assert response.status_code == 403, response.content


def test_another_owner_cannot_make_a_model_entry_unlaunchable(owner_api, outsider_api):
    entry = alices_model(owner_api)

    response = outsider_api.patch(f"/api/models/{entry.pk}/", {"launchable": False}, format="json")

    assert_refused_to(response, "model entry 'gpt-x'")
    entry.refresh_from_db()
    assert entry.launchable is True


def test_another_owner_cannot_re_ingest_a_case_version_but_may_add_a_new_one(
    owner_api, outsider_api
):
    created(owner_api, "/api/cases/", {"slug": "jump-1", "title": "Jump", "kind": "functional"})
    url = "/api/cases/jump-1/versions/"
    created(owner_api, url, {"version": "1", "checklist": CHECKLIST})

    rewritten = outsider_api.post(url, {"version": "1", "checklist": []}, format="json")
    added = outsider_api.post(url, {"version": "2", "checklist": []}, format="json")

    assert_refused_to(rewritten, "case version jump-1@1")
    assert CaseVersion.objects.get(case__slug="jump-1", version="1").checklist == CHECKLIST
    assert added.status_code == 201, added.content


def test_model_entries_and_combinations_have_no_delete_or_replace(owner_api):
    entry = alices_model(owner_api)
    combination = created(
        owner_api,
        "/api/combinations/",
        {"kind": "harness", "harness": "aider", "model": "gpt-x", "provider": "acme"},
    )

    assert owner_api.delete(f"/api/models/{entry.pk}/").status_code == 405
    for method in ("put", "patch", "delete"):
        response = getattr(owner_api, method)(
            f"/api/combinations/{combination['id']}/", {}, format="json"
        )
        assert response.status_code == 405, (method, response.content)
    assert ModelEntry.objects.filter(pk=entry.pk).exists()
    assert Combination.objects.filter(pk=combination["id"]).exists()


def test_the_creator_changes_and_deletes_their_own_entries(owner_api):
    configuration = alices_configuration(owner_api)
    entry = alices_model(owner_api)
    created(owner_api, "/api/cases/", {"slug": "jump-1", "title": "Jump", "kind": "functional"})
    versions = "/api/cases/jump-1/versions/"
    created(owner_api, versions, {"version": "1", "checklist": CHECKLIST})
    url = f"/api/gg-configurations/{configuration.pk}/"

    renamed = owner_api.put(url, {"name": "duo", "roles": ["planner"]}, format="json")
    patched = owner_api.patch(f"/api/models/{entry.pk}/", {"launchable": False}, format="json")
    reingested = owner_api.post(versions, {"version": "1", "checklist": []}, format="json")

    assert renamed.status_code == 200, renamed.content
    assert patched.status_code == 200, patched.content
    assert reingested.status_code == 201, reingested.content
    assert CaseVersion.objects.get(case__slug="jump-1", version="1").checklist == []
    assert owner_api.delete(url).status_code == 204
    assert not GGConfiguration.objects.filter(pk=configuration.pk).exists()


def test_staff_change_and_delete_any_owners_entries(owner_api, staff_api):
    configuration = alices_configuration(owner_api)
    entry = alices_model(owner_api)
    url = f"/api/gg-configurations/{configuration.pk}/"

    renamed = staff_api.put(url, {"name": "duo", "roles": ["planner"]}, format="json")
    patched = staff_api.patch(f"/api/models/{entry.pk}/", {"launchable": False}, format="json")

    assert renamed.status_code == 200, renamed.content
    assert patched.status_code == 200, patched.content
    assert staff_api.delete(url).status_code == 204


def test_an_entry_with_no_recorded_creator_is_changed_by_staff_only(owner_api, staff_api):
    configuration = GGConfigurationFactory(created_by=None)
    entry = ModelEntryFactory(name="legacy-model", created_by=None)
    url = f"/api/gg-configurations/{configuration.pk}/"

    refused = owner_api.patch(f"/api/models/{entry.pk}/", {"launchable": False}, format="json")
    refused_delete = owner_api.delete(url)

    assert refused.status_code == 403, refused.content
    assert "no recorded creator" in refused.json()["detail"]
    assert refused_delete.status_code == 403, refused_delete.content
    patched = staff_api.patch(f"/api/models/{entry.pk}/", {"launchable": False}, format="json")
    assert patched.status_code == 200, patched.content
    assert staff_api.delete(url).status_code == 204


# What uses an entry ------------------------------------------------------------------------------


def test_a_gg_configuration_another_owners_combination_uses_cannot_be_deleted(
    owner_api, outsider_api
):
    configuration = alices_configuration(owner_api)
    combination = gg_combination_of(outsider_api, configuration)

    response = owner_api.delete(f"/api/gg-configurations/{configuration.pk}/")

    assert response.status_code == 409, response.content
    detail = response.json()["detail"]
    assert f"used by combination {combination['id']} (planner+coder (" in detail, detail
    assert GGConfiguration.objects.filter(pk=configuration.pk).exists()


def test_a_gg_configuration_only_its_creators_combination_uses_cannot_be_deleted_either(
    owner_api, staff_api
):
    """A combination is shared as soon as it exists (anyone's ladder may climb it), so any use
    keeps the configuration, whoever made the combination; staff are refused too."""
    configuration = alices_configuration(owner_api)
    combination = gg_combination_of(owner_api, configuration)
    url = f"/api/gg-configurations/{configuration.pk}/"

    for client in (owner_api, staff_api):
        response = client.delete(url)
        assert response.status_code == 409, response.content
        assert f"combination {combination['id']}" in response.json()["detail"]
    assert GGConfiguration.objects.filter(pk=configuration.pk).exists()


def test_a_configuration_used_by_many_combinations_names_some_and_counts_the_rest(
    owner_api, outsider_api
):
    configuration = GGConfigurationFactory(created_by=owner_api.user, roles=["solo"])
    ids = [
        created(
            outsider_api,
            "/api/combinations/",
            {"kind": "gg", "configuration": configuration.pk, "bindings": {"solo": f"m{i}"}},
        )["id"]
        for i in range(7)
    ]

    detail = owner_api.delete(f"/api/gg-configurations/{configuration.pk}/").json()["detail"]

    assert f"combination {ids[0]} " in detail and f"combination {ids[2]} " in detail
    assert f"combination {ids[-1]} " not in detail
    assert "and 4 more" in detail, detail


# Who created an entry ----------------------------------------------------------------------------


def test_the_creator_is_recorded_on_every_create_through_the_api(owner, owner_api):
    created(owner_api, "/api/cases/", {"slug": "jump-1", "title": "Jump", "kind": "functional"})
    created(owner_api, "/api/cases/jump-1/versions/", {"version": "1", "checklist": CHECKLIST})
    entry = alices_model(owner_api)
    configuration = alices_configuration(owner_api)
    combination = gg_combination_of(owner_api, configuration)

    assert Case.objects.get(slug="jump-1").created_by == owner
    assert CaseVersion.objects.get(case__slug="jump-1").created_by == owner
    assert entry.created_by == owner
    assert configuration.created_by == owner
    assert Combination.objects.get(pk=combination["id"]).created_by == owner


def test_a_new_version_of_another_owners_case_is_recorded_as_its_ingesters(owner_api, outsider):
    CaseFactory(slug="jump-1", created_by=outsider)

    created(owner_api, "/api/cases/jump-1/versions/", {"version": "1", "checklist": CHECKLIST})

    assert CaseVersion.objects.get(case__slug="jump-1").created_by == owner_api.user


def test_the_creator_is_recorded_on_a_combination_added_in_the_console(owner):
    Browser(owner).submit(
        reverse("console:combinations"),
        {"kind": "harness", "harness": "aider", "model": "gpt-z", "provider": "acme"},
    )

    assert Combination.objects.get(key="aider|gpt-z|acme").created_by == owner


# The contract ----------------------------------------------------------------------------------


def test_the_schema_says_who_may_change_an_entry_and_that_a_used_one_stays(anon_api):
    schema = anon_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]

    for path, method in [
        ("/api/gg-configurations/{id}/", "put"),
        ("/api/gg-configurations/{id}/", "delete"),
        ("/api/models/{id}/", "patch"),
    ]:
        refused = paths[path][method]["responses"]["403"]
        assert "creator or staff" in refused["description"], (path, method)
        assert "Error" in refused["content"]["application/json"]["schema"]["$ref"]
    in_use = paths["/api/gg-configurations/{id}/"]["delete"]["responses"]["409"]
    assert "names what" in in_use["description"]
    reingest = paths["/api/cases/{slug}/versions/"]["post"]["responses"]["403"]
    assert "re-ingest" in reingest["description"]


# A delete and a new use at the same moment ------------------------------------------------------


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_delete_waits_for_a_combination_being_created_and_then_refuses(owner, token_client):
    """A combination created while the delete runs: the creating transaction holds the
    configuration's row, so the delete sees the new combination once it commits."""
    owner_api = token_client(owner)
    configuration = GGConfigurationFactory(created_by=owner, roles=["solo"])
    held, release = threading.Event(), threading.Event()

    def create_combination():
        with transaction.atomic():
            GGConfiguration.objects.select_for_update().get(pk=configuration.pk)
            Combination(kind="gg", configuration_id=configuration.pk, bindings={"solo": "m"}).save()
            held.set()
            release.wait(30)

    creator = Background(create_combination)
    assert held.wait(10)
    deleter = Background(lambda: owner_api.delete(f"/api/gg-configurations/{configuration.pk}/"))
    waited = not deleter.finished(1)
    release.set()
    creator.join()
    response = deleter.join()

    assert waited, "the delete did not wait for the configuration's row"
    assert response.status_code == 409, response.content
    assert GGConfiguration.objects.filter(pk=configuration.pk).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_combination_created_while_its_configuration_is_deleted_is_refused(
    owner, outsider, token_client
):
    """The delete holds the configuration's row: a combination naming it waits, then finds it
    gone (a 400 on configuration), and no combination names a deleted configuration."""
    outsider_api = token_client(outsider)
    configuration = GGConfigurationFactory(created_by=owner, roles=["solo"])
    held, release = threading.Event(), threading.Event()

    def delete_configuration():
        with transaction.atomic():
            # What the delete does: lock the row, find no use, delete it.
            GGConfiguration.objects.select_for_update().get(pk=configuration.pk)
            held.set()
            release.wait(30)
            GGConfiguration.objects.filter(pk=configuration.pk).delete()

    deleter = Background(delete_configuration)
    assert held.wait(10)
    body = {"kind": "gg", "configuration": configuration.pk, "bindings": {"solo": "m"}}
    creator = Background(lambda: outsider_api.post("/api/combinations/", body, format="json"))
    creator.finished(1)
    release.set()
    deleter.join()
    response = creator.join()

    assert response.status_code == 400, response.content
    assert "configuration" in response.json()["errors"]
    assert not Combination.objects.filter(configuration_id=configuration.pk).exists()
