"""Seed 004, "Rungs"."""

import datetime as dt

import pytest
from django.utils import timezone

from ladders import services
from ladders.models import Ladder, Rung
from tests.factories import CaseFactory, CaseVersionFactory
from tests.ladders.builders import (
    PERFECT,
    api_ladder,
    climbers,
    config,
    ladder_jobs,
    make_ladder,
    outside,
    progress_of,
    queued,
    rung,
    slot_statuses,
    versions,
    work,
)


def put(api, ladder_id, body):
    return api.put(f"/api/ladders/{ladder_id}/", body, format="json")


def editable(api, ladder_id) -> dict:
    """The ladder's configuration as GET returns it, ready to PUT back."""
    return api.get(f"/api/ladders/{ladder_id}/").json()


def test_a_rung_is_one_pinned_case_and_an_absent_engine_means_none(owner_api, driver):
    """ "A rung is exactly one pinned case: a slug, an exact version, a variant, and the engine
    the rung's runs are built on, with an absent engine meaning none." """
    [step] = versions(1)
    combo = climbers(1)[0]
    sent = {"case": "step-1", "version": "1", "variant": "default"}  # no engine at all
    body = api_ladder(owner_api, rungs=[sent], combinations=[combo.pk])
    [stored] = body["rungs"]
    assert (stored["case"], stored["version"], stored["variant"], stored["engine"]) == (
        "step-1",
        "1",
        "default",
        None,
    )
    # A run built on an engine is another pin's run: it does not count for this rung.
    outside(driver, step, combo, PERFECT, engine="godot")
    owner_api.post(f"/api/ladders/{body['id']}/run")
    [job] = queued()
    assert (job.case, job.version, job.variant, job.engine) == ("step-1", "1", "default", None)
    assert job.cell_key.startswith("step-1@1/default/-::")


def test_a_rung_pins_an_exact_version_and_a_variant(owner, driver):
    """The pin is exact: runs of another version or variant of the case are another rung's."""
    case = CaseFactory(slug="jump")
    one = CaseVersionFactory(case=case, version="1", variants=["default", "hard"])
    two = CaseVersionFactory(case=case, version="2", variants=["default", "hard"])
    combo = climbers(1)[0]
    outside(driver, two, combo, PERFECT)
    outside(driver, one, combo, PERFECT)  # the default variant; the rung pins "hard"
    ladder = make_ladder(owner, [], [combo], rungs=[rung(one, variant="hard")])
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    assert (job.version, job.variant) == ("1", "hard")


def test_a_rung_is_built_on_its_engine(owner_api, driver_api):
    """ "... and the engine the rung's runs are built on": the driver is handed the engine."""
    [step] = versions(1)
    body = api_ladder(
        owner_api, rungs=[rung(step, engine="godot")], combinations=[climbers(1)[0].pk]
    )
    assert body["rungs"][0]["engine"] == "godot"
    owner_api.post(f"/api/ladders/{body['id']}/run")
    [claimed] = driver_api.post("/api/driver/claim", {"max": 5}, format="json").json()
    assert (claimed["case"], claimed["version"], claimed["engine"]) == ("step-1", "1", "godot")


def test_the_rungs_order_low_to_high_is_the_climb(owner, driver, run_tasks):
    """ "The rungs' order, low to high, is the climb." """
    first, second, third = versions(3)
    ladder = make_ladder(owner, [third, first, second], climbers(1))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    assert [j.case for j in ladder_jobs(ladder)] == ["step-3", "step-1", "step-2"]


def test_one_ladder_holds_the_same_case_twice_when_the_pins_name_different_engines(
    owner_api, driver, run_tasks
):
    """ "A rung's pin is its identity within the climb, so one ladder holds the same case at the
    same version and variant twice when the two pins name different engines. Clearing a case
    with a runtime underneath is a different achievement from clearing it with nothing." """
    [step] = versions(1)
    combo = climbers(1)[0]
    body = api_ladder(
        owner_api, rungs=[rung(step), rung(step, engine="godot")], combinations=[combo.pk]
    )
    assert [r["engine"] for r in body["rungs"]] == [None, "godot"]
    assert body["rungs"][0]["id"] != body["rungs"][1]["id"]
    outside(driver, step, combo, PERFECT)  # cleared with nothing underneath
    owner_api.post(f"/api/ladders/{body['id']}/run")
    [job] = queued()
    assert job.engine == "godot"  # the engine rung is still to clear
    board = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    bare, engined = board["climbers"][0]["slots"]
    assert bare["cellKey"] != engined["cellKey"]
    assert (bare["status"], engined["status"]) == ("passed", "running")


def test_each_rung_carries_a_stable_opaque_id_minted_when_added_and_never_reused(owner_api):
    """ "Each rung carries a stable opaque id, minted when the rung is added and never
    reused." """
    low, high, extra = versions(3)
    body = api_ladder(owner_api, rungs=[rung(low), rung(high)])
    low_id, high_id = [r["id"] for r in body["rungs"]]
    assert low_id != high_id
    assert low_id.startswith("r_") and "step" not in low_id

    # Edited in place, a rung keeps its id.
    edited = editable(owner_api, body["id"])
    edited["rungs"][0]["runs"] = 3
    kept = put(owner_api, body["id"], edited).json()
    assert [r["id"] for r in kept["rungs"]] == [low_id, high_id]

    # Removed and added back with the same pin, it is a new rung with a new id.
    edited["rungs"] = [edited["rungs"][0], rung(high), rung(extra)]
    readded = put(owner_api, body["id"], edited).json()
    ids = [r["id"] for r in readded["rungs"]]
    assert ids[0] == low_id
    assert len({high_id, *ids}) == 4

    # The removed rung's id is never taken again, nor is another ladder's.
    edited = editable(owner_api, body["id"])
    edited["rungs"][1]["id"] = high_id
    refused = put(owner_api, body["id"], edited)
    assert refused.status_code == 400
    assert "rungs.1.id" in refused.json()["errors"]
    other = api_ladder(owner_api, name="other", rungs=[rung(low)])
    edited["rungs"][1]["id"] = other["rungs"][0]["id"]
    assert put(owner_api, body["id"], edited).status_code == 400
    assert Rung.objects.filter(rung_id=other["rungs"][0]["id"]).get().ladder_id == other["id"]


@pytest.mark.parametrize("part", ["case", "version", "variant", "engine"])
def test_a_rung_whose_pin_changes_is_a_new_rung_with_a_new_id(owner_api, part):
    """ "A rung's pin is its identity within the climb" and its id is "minted when the rung is
    added and never reused": a PUT that keeps a rung's id but changes its pin adds a new rung
    (new id) in its place; the old id is gone for good."""
    low, high = versions(2)
    CaseVersionFactory(case=low.case, version="2")
    body = api_ladder(owner_api, rungs=[rung(low), rung(high)])
    low_id, high_id = [r["id"] for r in body["rungs"]]
    edited = editable(owner_api, body["id"])
    changes = {"case": high.case.slug, "version": "2", "variant": "hard", "engine": "godot"}
    edited["rungs"][0][part] = changes[part]

    saved = put(owner_api, body["id"], edited)

    assert saved.status_code == 200, saved.json()
    new_id, kept = [r["id"] for r in saved.json()["rungs"]]
    assert kept == high_id
    assert new_id not in (low_id, high_id)
    assert saved.json()["rungs"][0][part] == changes[part]
    assert not Rung.objects.filter(rung_id=low_id).exists()


def test_a_dispatchs_snapshot_and_every_job_it_launches_reference_the_rung_id(
    owner_api, driver, run_tasks
):
    """ "A dispatch's snapshot and every job it launches reference that id." """
    steps = versions(2)
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in steps], combinations=[c.pk for c in climbers(2)]
    )
    ids = [r["id"] for r in body["rungs"]]
    board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [r["id"] for r in board["dispatch"]["rungs"]] == ids
    assert [[s["rung"] for s in c["slots"]] for c in board["climbers"]] == [ids, ids]
    work(driver, run_tasks, PERFECT)
    jobs = ladder_jobs(Ladder.objects.get(pk=body["id"]))
    assert [j.origin.rsplit("/", 1)[1] for j in jobs] == [ids[0], ids[0], ids[1], ids[1]]


def test_rungs_order_takes_a_permutation_of_the_rung_ids(owner_api):
    """ "POST /ladders/{id}/rungs/order takes a permutation of those ids" """
    body = api_ladder(owner_api, rungs=[rung(v) for v in versions(3)])
    a, b, c = [r["id"] for r in body["rungs"]]
    answer = owner_api.post(
        f"/api/ladders/{body['id']}/rungs/order", {"order": [c, a, b]}, format="json"
    )
    assert answer.status_code == 200, answer.json()
    assert [(r["id"], r["case"]) for r in answer.json()["rungs"]] == [
        (c, "step-3"),
        (a, "step-1"),
        (b, "step-2"),
    ]
    assert [r["id"] for r in editable(owner_api, body["id"])["rungs"]] == [c, a, b]


def test_rungs_order_takes_nothing_but_a_permutation(
    owner_api, reviewer, reviewer_api, outsider_api
):
    """ "... and nothing else": a missing, repeated or foreign id, or a rung instead of an id,
    is refused and changes nothing."""
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(3)], reviewers=[reviewer.username]
    )
    a, b, c = [r["id"] for r in body["rungs"]]
    path = f"/api/ladders/{body['id']}/rungs/order"
    for order in (
        [a, b],
        [a, b, c, c],
        [a, b, b],
        [a, b, "r_0000000000000000"],
        [a, b, {"case": "step-3", "version": "1"}],
        [],
    ):
        refused = owner_api.post(path, {"order": order}, format="json")
        assert refused.status_code == 400, (order, refused.json())
        assert any(field.startswith("order") for field in refused.json()["errors"])
    assert owner_api.post(path, {}, format="json").status_code == 400
    assert [r["id"] for r in editable(owner_api, body["id"])["rungs"]] == [a, b, c]
    assert reviewer_api.post(path, {"order": [c, b, a]}, format="json").status_code == 403
    assert outsider_api.post(path, {"order": [c, b, a]}, format="json").status_code == 404


def test_edits_go_through_put(owner_api):
    """ "... and edits go through PUT /ladders/{id}." A rung edited by id keeps its id and takes
    the new runs and place; a new pin is a new rung (see above)."""
    low, high = versions(2)
    body = api_ladder(owner_api, rungs=[rung(low), rung(high)])
    edited = editable(owner_api, body["id"])
    edited["rungs"][1].update({"runs": 4})
    edited["rungs"].reverse()
    answer = put(owner_api, body["id"], edited)
    assert answer.status_code == 200, answer.json()
    assert [
        (r["id"], r["case"], r["variant"], r["engine"], r["runs"]) for r in answer.json()["rungs"]
    ] == [
        (body["rungs"][1]["id"], "step-2", "default", None, 4),
        (body["rungs"][0]["id"], "step-1", "default", None, None),
    ]


def test_a_rung_may_override_the_ladders_runs_per_cell(owner, driver, run_tasks):
    """ "A rung may override the ladder's runsPerCell with its own runs, so one pivotal step can
    demand more evidence without making the whole climb more expensive." """
    low, pivotal, high = versions(3)
    ladder = make_ladder(
        owner,
        [],
        climbers(1),
        rungs=[rung(low), rung(pivotal, runs=3), rung(high)],
        gate={"threshold": {"fraction": 1.0}},
    )
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    assert [j.case for j in ladder_jobs(ladder)] == [
        "step-1",
        "step-2",
        "step-2",
        "step-2",
        "step-3",
    ]
    board = progress_of(ladder)
    assert [r["runs"] for r in board["dispatch"]["rungs"]] == [1, 3, 1]
    assert [s["tally"]["required"] for s in board["climbers"][0]["slots"]] == [1, 3, 1]


def test_ladders_are_capped_at_fifty_rungs(owner_api):
    """ "Ladders are capped at fifty rungs." """
    [step] = versions(1)
    fifty = api_ladder(owner_api, rungs=[rung(step)] * 50)
    assert len(fifty["rungs"]) == 50
    refused = owner_api.post("/api/ladders/", config(rungs=[rung(step)] * 51), format="json")
    assert refused.status_code == 400
    assert "50" in refused.json()["errors"]["rungs"][0]
    edited = editable(owner_api, fifty["id"])
    edited["rungs"].append(rung(step))
    assert put(owner_api, fifty["id"], edited).status_code == 400
    assert len(editable(owner_api, fifty["id"])["rungs"]) == 50


def test_the_editor_flags_a_rung_whose_pinned_version_is_no_longer_the_newest(owner_api):
    """ "The editor flags a rung whose pinned version is no longer the newest ingested one." """
    case = CaseFactory(slug="jump")
    now = timezone.now()
    old = CaseVersionFactory(case=case, version="1", ingested_at=now - dt.timedelta(days=2))
    new = CaseVersionFactory(case=case, version="2", ingested_at=now - dt.timedelta(days=1))
    unknown = {**rung(new), "version": "3"}  # not ingested: nothing says it is old
    body = api_ladder(owner_api, rungs=[rung(old), rung(new), unknown])
    assert [r["stale"] for r in body["rungs"]] == [True, False, False]
    board = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert [r["stale"] for r in board["rungs"]] == [True, False, False]

    # Ingesting a newer version flags the rung that was the newest.
    CaseVersionFactory(case=case, version="3", ingested_at=now)
    assert [r["stale"] for r in editable(owner_api, body["id"])["rungs"]] == [True, True, False]


def test_a_run_uses_whatever_version_the_configuration_pins(owner_api):
    """ "A Run uses whatever version the configuration pins." """
    case = CaseFactory(slug="jump")
    now = timezone.now()
    old = CaseVersionFactory(case=case, version="1", ingested_at=now - dt.timedelta(days=2))
    CaseVersionFactory(case=case, version="2", ingested_at=now - dt.timedelta(days=1))
    body = api_ladder(owner_api, rungs=[rung(old)], combinations=[climbers(1)[0].pk])
    assert body["rungs"][0]["stale"] is True
    board = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert board["dispatch"]["rungs"][0]["version"] == "1"
    assert [j.version for j in queued()] == ["1"]
    assert slot_statuses(board) == [["running"]]
