"""The ladder editor: build a ladder from the catalog, see errors beside their fields, save it
through the same serializer and service the API uses."""

import re

from django.urls import reverse

from ladders import services
from ladders.models import Dispatch, Ladder
from tests.console.helpers import form_data, text_of
from tests.factories import CombinationFactory, CoverageGroupFactory
from tests.ladders.builders import climbers, make_ladder, versions

NEW = reverse("console:ladder-new")


def step(client, url, page, op: str, **changes):
    """Press a button of the editor: post its form as the page holds it, with some changes."""
    data = form_data(page, "editor")
    for name, value in changes.items():
        data[name.replace("_", "-")] = value if isinstance(value, list) else [value]
    data["op"] = [op]
    return client.submit(url, data)


def test_an_owner_builds_a_ladder_from_the_catalog_and_saves_it(
    owner_client, owner, reviewer, catalog
):
    combo, other = CombinationFactory(model="gpt-x"), CombinationFactory(model="gpt-y")
    group = CoverageGroupFactory(owner=owner, name="frontier", combinations=[other])
    page = owner_client.get(NEW)
    assert page.status_code == 200
    html = page.content.decode()
    assert "Frame rate (fps) — performance case: belongs in a coverage plan" in html
    # Choosing a case lists its versions, newest first; the version's variants and engines follow.
    page = step(owner_client, NEW, page, "pick", add_case="jump-1")
    html = page.content.decode()
    assert '<option value="3" selected>3 — newest</option>' in html
    assert '<option value="hard">hard</option>' in html
    assert '<option value="godot">godot</option>' in html
    page = step(
        owner_client,
        NEW,
        page,
        "add",
        add_case="jump-1",
        add_version="3",
        add_variant="hard",
        add_engine="godot",
    )
    assert "Added rung 1 (jump-1@3)" in text_of(page)
    page = step(owner_client, NEW, page, "pick", add_case="jump-1")
    page = step(owner_client, NEW, page, "add", add_case="jump-1", add_version="1")
    text = text_of(page)
    assert "Version 1 is no longer the newest ingested version (3 is)" in text
    page = step(owner_client, NEW, page, "up-1")
    assert "Moved rung jump-1@1 to position 1" in text_of(page)
    saved = step(
        owner_client,
        NEW,
        page,
        "save",
        name="platformer climb",
        rungs_0_runs="3",
        groups=[str(group.pk)],
        combinations=[str(combo.pk)],
        gate_floor="great",
        threshold_kind="fraction",
        threshold_fraction="0.5",
        retry_count="2",
        runs_in_flight_limit="7",
        outer_axis="combination",
        reviewers="rita",
    )
    ladder = Ladder.objects.get(name="platformer climb")
    assert saved.status_code == 302
    assert saved["Location"] == reverse("console:board", args=[ladder.pk])
    api = owner_client.get(f"/api/ladders/{ladder.pk}/").json()
    assert [
        (r["case"], r["version"], r["variant"], r["engine"], r["runs"]) for r in api["rungs"]
    ] == [
        ("jump-1", "1", "default", None, 3),
        ("jump-1", "3", "hard", "godot", None),
    ]
    assert [r["stale"] for r in api["rungs"]] == [True, False]
    assert api["groups"] == [group.pk] and api["combinations"] == [combo.pk]
    assert api["gate"] == {
        "floor": "great",
        "threshold": {"fraction": 0.5},
        "unloadedCountsAsBroken": True,
        "earlyStop": False,
    }
    assert (api["retryCount"], api["runsInFlightLimit"], api["outerAxis"]) == (2, 7, "combination")
    assert api["reviewers"] == ["rita"]


def test_validation_errors_are_shown_beside_their_fields(owner_client, reviewer, catalog):
    page = owner_client.get(NEW)
    page = step(
        owner_client,
        NEW,
        page,
        "save",
        name="",
        retry_count="-1",
        runs_per_cell="0",
        threshold_kind="fraction",
        threshold_fraction="2",
        reviewers="nobody",
    )
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="error-summary"' in html
    assert not Ladder.objects.exists()

    def beside(error_id: str) -> str:
        block = html.split(f'id="{error_id}"')[1].split("</ul>")[0]
        return text_of(type("R", (), {"content": block.encode()}))

    assert "This field may not be blank." in beside("name-error")
    assert "greater than or equal to 0" in beside("retry-count-error")
    assert "greater than or equal to 1" in beside("runs-per-cell-error")
    assert "less than or equal to 1" in beside("threshold-error")
    assert "Unknown user: nobody." in beside("reviewers-error")
    name_input = html.split('id="name"')[1].split(">")[0]
    assert 'aria-invalid="true" aria-describedby="name-error"' in name_input
    # The summary links every problem to its field.
    assert '<a href="#retry-count">Retry count:' in html
    assert '<a href="#threshold-fraction">Threshold:' in html


def test_rungs_that_cannot_be_climbed_are_refused_beside_them(owner_client, catalog):
    page = owner_client.get(NEW)
    data = form_data(page, "editor")
    data.update(
        {
            "name": ["bad rungs"],
            "rungs-total": ["2"],
            "rungs-0-case": ["old-jump"],
            "rungs-0-version": ["1"],
            "rungs-1-case": ["fps"],
            "rungs-1-version": ["1"],
            "op": ["save"],
        }
    )
    page = owner_client.submit(NEW, data)
    html = page.content.decode()
    assert not Ladder.objects.exists()
    row0 = html.split('id="rung-row-0"')[1].split("</tr>")[0]
    row1 = html.split('id="rung-row-1"')[1].split("</tr>")[0]
    assert "old-jump@1 is a legacy version" in row0 and "belong in a coverage plan" in row0
    assert "fps is a performance case" in row1 and "belong in a coverage plan" in row1
    assert 'aria-invalid="true"' in row0


def test_removing_and_moving_rungs_edits_only_the_form(owner_client, owner):
    ladder = make_ladder(owner, versions(3, prefix="mv"), climbers(1, prefix="mv"))
    ids = list(ladder.rungs.order_by("position").values_list("rung_id", flat=True))
    url = reverse("console:ladder-edit", args=[ladder.pk])
    page = owner_client.get(url)
    page = step(owner_client, url, page, "down-0")
    page = step(owner_client, url, page, "remove-2")
    assert "Removed rung 3 (mv-3@1)" in text_of(page)
    assert list(ladder.rungs.order_by("position").values_list("rung_id", flat=True)) == ids
    saved = step(owner_client, url, page, "save")
    assert saved.status_code == 302
    # Rungs keep their ids across edits; the removed one is gone.
    assert list(ladder.rungs.order_by("position").values_list("rung_id", flat=True)) == [
        ids[1],
        ids[0],
    ]


def test_editing_never_touches_a_running_dispatch(owner_client, owner):
    ladder = make_ladder(owner, versions(2, prefix="rd"), climbers(1, prefix="rd"))
    services.start_dispatch(ladder=ladder)
    snapshot = Dispatch.objects.get(ladder=ladder).snapshot
    url = reverse("console:ladder-edit", args=[ladder.pk])
    page = owner_client.get(url)
    assert step(owner_client, url, page, "save", retry_count="5").status_code == 302
    dispatch = Dispatch.objects.get(ladder=ladder)
    assert dispatch.snapshot == snapshot and dispatch.status == "running"
    assert Ladder.objects.get(pk=ladder.pk).retry_count == 5


def test_htmx_gets_the_form_alone_and_a_client_redirect_on_save(owner_client, catalog):
    page = owner_client.get(NEW)
    data = form_data(page, "editor")
    data.update({"op": ["pick"], "add-case": ["jump-1"]})
    partial = owner_client.submit(NEW, data, HTTP_HX_REQUEST="true")
    assert partial.content.decode().lstrip().startswith('<form id="editor"')
    data.update({"op": ["save"], "name": ["via htmx"]})
    saved = owner_client.submit(NEW, data, HTTP_HX_REQUEST="true")
    ladder = Ladder.objects.get(name="via htmx")
    assert saved.status_code == 200
    assert saved["HX-Redirect"] == reverse("console:board", args=[ladder.pk])


def test_the_editor_is_a_csrf_protected_form(owner_client):
    assert owner_client.post(NEW, {"name": "x", "op": "save"}).status_code == 403
    assert not Ladder.objects.exists()


def test_every_editor_control_has_a_label(owner_client, owner, catalog):
    CoverageGroupFactory(owner=owner, combinations=[CombinationFactory()])
    page = owner_client.get(NEW)
    page = step(owner_client, NEW, page, "add", add_case="jump-1", add_version="3")
    html = page.content.decode().split('<form id="editor"')[1]
    for tag in re.findall(r"<(?:input|select|textarea)\b[^>]*>", html):
        if 'type="hidden"' in tag:
            continue
        control_id = re.search(r'\bid="([^"]+)"', tag)
        assert control_id, tag
        assert f'for="{control_id.group(1)}"' in html, tag


def test_only_owners_create_ladders(reviewer_client):
    assert reviewer_client.get(NEW).status_code == 403


def test_an_owner_deletes_a_ladder_after_confirming(owner_client, ladder):
    url = reverse("console:ladder-delete", args=[ladder.pk])
    confirm = owner_client.get(url)
    assert "Delete platformer?" in text_of(confirm)
    assert Ladder.objects.filter(pk=ladder.pk).exists()
    done = owner_client.submit(url, follow=True)
    assert "Deleted the ladder platformer." in text_of(done)
    assert not Ladder.objects.filter(pk=ladder.pk).exists()
