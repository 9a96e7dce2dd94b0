"""The run page shows the validator rating and the stored rating, every checklist item with the
override that stands for it (who said what, and why), and lets someone who may review the run
override an item: an HTMX form that swaps the section, or a plain form without scripts."""

import pytest

from loopweb.runs.models import ChecklistOverride, Run
from loopweb.runs.overrides import override_item
from tests.console.helpers import text_of
from tests.factories import CaseVersionFactory, CombinationFactory
from tests.runs.helpers import finish, hand_job
from tests.security.test_content_security_policy import assert_fragment_keeps_to_the_policy

pytestmark = pytest.mark.django_db

GREAT = {  # every item but pause
    "checklist": {"starts": True, "jump": True, "score": True, "music": True, "pause": False},
    "toolchain": {"build": "ok", "loaded": True},
}
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def run(owner, driver) -> Run:
    return finish(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()), record=GREAT)


def page_of(client, run) -> str:
    response = client.get(f"/runs/{run.pk}/")
    assert response.status_code == 200
    return text_of(response)


def test_the_run_page_shows_both_ratings_and_who_overrode_what(run, owner, owner_client):
    override_item(run=run, reviewer=owner, item="pause", passed=True, note="pauses on P")

    text = page_of(owner_client, run)

    assert "Validator rating great Stored rating flawless" in text
    assert "Pause works failed passed by olive: pauses on P" in text
    assert "olive said pause passed: pauses on P" in text


def test_an_htmx_override_swaps_the_section_with_the_new_stored_rating(run, owner_client):
    response = owner_client.submit(
        f"/runs/{run.pk}/overrides", {"item": "pause", "passed": "pass", "note": "ok"}, **HTMX
    )

    assert response.status_code == 200
    assert_fragment_keeps_to_the_policy(response)
    text = text_of(response)
    assert text.startswith("Checklist overrides")
    assert "Stored rating flawless" in text
    assert "Override saved: pause passed." in text
    run.refresh_from_db()
    assert (run.validator_rating, run.stored_rating) == ("great", "flawless")


def test_a_plain_form_post_returns_to_the_run_page(run, reviewer_client, owner_client):
    response = owner_client.submit(
        f"/runs/{run.pk}/overrides", {"item": "jump", "passed": "fail", "note": "no jump"}
    )

    assert response.status_code == 302
    assert response["Location"] == f"/runs/{run.pk}/"
    assert "Stored rating scuffed" in page_of(owner_client, run)


@pytest.mark.parametrize(
    ("form", "field"),
    [
        ({"passed": "pass"}, "item"),
        ({"item": "fly", "passed": "pass"}, "item"),
        ({"item": "pause"}, "passed"),
        ({"item": "pause", "passed": "maybe"}, "passed"),
        ({"item": "pause", "passed": "pass", "note": "x" * 2001}, "note"),
    ],
)
def test_a_refused_override_names_its_field_and_records_nothing(run, owner_client, form, field):
    swapped = owner_client.submit(f"/runs/{run.pk}/overrides", form, **HTMX)
    assert swapped.status_code == 200
    assert f"The override was not saved: {field}:" in text_of(swapped)
    assert f'id="override-{"item" if field == "item" else field}' in swapped.content.decode()

    plain = owner_client.submit(f"/runs/{run.pk}/overrides", form)
    assert plain.status_code == 400
    assert f"The override was not saved: {field}:" in text_of(plain)
    assert not ChecklistOverride.objects.exists()


def test_a_reader_who_may_not_review_sees_the_overrides_but_no_form(run, owner, outsider_client):
    override_item(run=run, reviewer=owner, item="pause", passed=True, note="")
    Run.objects.filter(pk=run.pk).update(published=True)

    response = outsider_client.get(f"/runs/{run.pk}/")

    assert "Stored rating flawless" in text_of(response)
    assert 'id="override"' not in response.content.decode()
    posted = outsider_client.submit(f"/runs/{run.pk}/overrides", {"item": "jump", "passed": "fail"})
    assert posted.status_code == 404
    assert ChecklistOverride.objects.count() == 1


def test_an_override_posted_without_its_csrf_token_is_refused(run, owner_client):
    refused = owner_client.post(f"/runs/{run.pk}/overrides", {"item": "pause", "passed": "pass"})
    assert refused.status_code == 403
    assert not ChecklistOverride.objects.exists()
