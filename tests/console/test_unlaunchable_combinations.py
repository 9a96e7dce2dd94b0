"""A combination that cannot be launched says so at once, where it is chosen, not only at Run;
and owners see and fix the model catalog's launchability in the console, within the catalog's
ownership rule (SPEC §1: only an entry's creator or staff may change it)."""

from ladders.models import Ladder
from loopweb.runs.models import Combination, ModelEntry
from tests.console.helpers import text_of
from tests.factories import ModelEntryFactory
from tests.ladders.builders import make_ladder, versions


def add_combination(client, model="ghost"):
    return client.submit(
        "/combinations/",
        {"kind": "harness", "harness": "aider", "model": model, "provider": "acme"},
        follow=True,
    )


def test_a_combination_whose_model_is_not_in_the_catalog_is_flagged_when_added(owner_client):
    page = add_combination(owner_client)
    text = text_of(page)
    assert "cannot be launched: model 'ghost' is not in the catalog" in text
    [combination] = Combination.objects.all()
    row = page.content.decode().split(f'data-combination="{combination.pk}"')[1].split("</li>")[0]
    assert "cannot be launched" in row


def test_an_owner_adds_the_missing_model_in_the_console_and_the_warning_goes(owner_client):
    add_combination(owner_client)
    page = owner_client.submit(
        "/combinations/models/",
        {"name": "ghost", "provider": "acme", "launchable": "on"},
        follow=True,
    )
    assert page.status_code == 200
    assert ModelEntry.objects.get(name="ghost").launchable
    assert "cannot be launched" not in text_of(page)


def test_an_owner_marks_their_model_unlaunchable_and_back(owner, owner_client):
    entry = ModelEntryFactory(name="m9", created_by=owner)
    add_combination(owner_client, model="m9")
    page = owner_client.submit(f"/combinations/models/{entry.pk}/", {}, follow=True)
    entry.refresh_from_db()
    assert not entry.launchable
    assert "cannot be launched: model 'm9' is not launchable" in text_of(page)
    owner_client.submit(f"/combinations/models/{entry.pk}/", {"launchable": "on"})
    entry.refresh_from_db()
    assert entry.launchable


def test_a_model_someone_else_created_is_theirs_to_change(owner, outsider, owner_client):
    entry = ModelEntryFactory(name="theirs", created_by=outsider)
    refused = owner_client.submit(f"/combinations/models/{entry.pk}/", {})
    assert refused.status_code == 403
    entry.refresh_from_db()
    assert entry.launchable


def test_a_model_without_a_name_is_refused_naming_the_field(owner_client):
    page = owner_client.submit("/combinations/models/", {"name": "", "provider": "acme"})
    assert page.status_code == 400
    assert "This field may not be blank." in text_of(page) or "required" in text_of(page)
    assert not ModelEntry.objects.exists()


def test_the_editor_flags_a_chosen_combination_that_cannot_be_launched(owner, owner_client):
    add_combination(owner_client)
    combination = Combination.objects.get()
    ladder = make_ladder(owner, versions(1), [combination])
    page = owner_client.get(f"/ladders/{Ladder.objects.get(pk=ladder.pk).pk}/edit/")
    text = text_of(page)
    assert "cannot be launched: model 'ghost' is not in the catalog" in text


def test_a_model_id_past_any_id_is_not_found(owner_client):
    page = owner_client.submit(f"/combinations/models/{10**30}/", {})
    assert page.status_code == 404
