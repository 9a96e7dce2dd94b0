"""The editor: several rungs in one round trip, and a hint on a rung pinned to a version the
catalog has not ingested (still allowed)."""

from django.urls import reverse

from tests.console.helpers import form_data, text_of
from tests.factories import CaseFactory, CaseVersionFactory


def test_several_cases_are_added_in_one_request_at_their_newest_versions(owner_client, catalog):
    CaseVersionFactory(case=CaseFactory(slug="run-1", title="Run once"), version="2")
    url = reverse("console:ladder-new")
    page = owner_client.get(url)
    data = {**form_data(page, "editor"), "name": "many", "op": "add-many"}
    data["add-many"] = ["jump-1", "run-1"]
    added = owner_client.submit(url, data, HTTP_HX_REQUEST="true")
    text = text_of(added)
    assert "Added 2 rungs (jump-1@3, run-1@2)." in text
    refused = owner_client.submit(
        url,
        {**form_data(page, "editor"), "op": "add-many", "add-many": ["fps"]},
        HTTP_HX_REQUEST="true",
    )
    assert "Not rungs: fps." in text_of(refused)


def test_a_rung_pinned_to_a_version_not_ingested_shows_a_hint(owner_client, catalog):
    url = reverse("console:ladder-new")
    data = {
        **form_data(owner_client.get(url), "editor"),
        "op": "pick",
        "rungs-total": "1",
        "rungs-0-case": "jump-1",
        "rungs-0-version": "9",
        "rungs-0-variant": "default",
    }
    page = owner_client.submit(url, data, HTTP_HX_REQUEST="true")
    assert "Version 9 is not ingested" in text_of(page)
