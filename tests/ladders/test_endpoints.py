"""Seed 004, "Ladders" and "Endpoints": the ladder surface over HTTP, end to end."""

import gzip
import json

import pytest

from tests.ladders.builders import PERFECT, climbers, config, rung, versions, work


def create(api, **overrides):
    response = api.post("/api/ladders/", config(**overrides), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_an_owner_configures_runs_and_reads_a_ladder(owner_api, driver, run_tasks):
    steps = versions(2)
    combos = climbers(2)
    body = create(owner_api, rungs=[rung(v) for v in steps], combinations=[c.pk for c in combos])
    assert [r["case"] for r in body["rungs"]] == ["step-1", "step-2"]
    assert all(r["id"].startswith("r_") for r in body["rungs"])

    progress = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert progress["ladder"]["status"] == "notRunYet"
    assert progress["dispatch"] is None

    started = owner_api.post(f"/api/ladders/{body['id']}/run")
    assert started.status_code == 200, started.json()
    assert started.json()["dispatch"]["status"] == "running"
    assert started.json()["dispatch"]["runs"]["inFlight"] == 2
    assert owner_api.post(f"/api/ladders/{body['id']}/run").status_code == 409

    work(driver, run_tasks, PERFECT)
    progress = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert progress["ladder"]["status"] == "finished"
    assert progress["dispatch"]["runs"] == {
        "total": 4,
        "done": 4,
        "inFlight": 0,
        "skippedByStop": 0,
        "reused": 0,
    }
    assert progress["dispatch"]["runsUnreviewed"] == 4

    queue = owner_api.get(f"/api/ladders/{body['id']}/queue").json()
    assert queue["count"] == 4
    first = queue["results"][0]
    review = owner_api.post(
        f"/api/runs/{first['run']}/reviews", {"aestheticRating": 4, "writeup": "ok"}, format="json"
    )
    assert review.status_code == 201, review.json()
    assert owner_api.get(f"/api/ladders/{body['id']}/queue").json()["count"] == 3

    summary = owner_api.get("/api/ladders/summary").json()
    assert summary["count"] == 1
    assert summary["results"][0]["status"] == "finished"


def test_stop_reports_the_cancelled_jobs(owner_api, run_tasks):
    body = create(
        owner_api, rungs=[rung(v) for v in versions(1)], combinations=[c.pk for c in climbers(3)]
    )
    owner_api.post(f"/api/ladders/{body['id']}/run")
    stopped = owner_api.post(f"/api/ladders/{body['id']}/stop", {}, format="json")
    assert stopped.json() == {"cancelled": 3}
    progress = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert progress["dispatch"]["status"] == "stopped"
    assert progress["dispatch"]["slotCounts"]["skipped"] == 3


def test_an_outsider_gets_404(owner_api, outsider_api):
    body = create(owner_api, rungs=[rung(v) for v in versions(1)])
    for path in ("/", "/progress", "/queue"):
        assert outsider_api.get(f"/api/ladders/{body['id']}{path}").status_code == 404
    assert outsider_api.post(f"/api/ladders/{body['id']}/run").status_code == 404


def test_staff_editing_an_owners_ladder_keeps_the_owners_groups(owner, owner_api, token_client):
    from tests.factories import CoverageGroupFactory, UserFactory

    group = CoverageGroupFactory(owner=owner, combinations=climbers(2))
    body = create(owner_api, rungs=[rung(v) for v in versions(1)], groups=[group.pk])
    staff = UserFactory(username="sam")
    staff.is_staff = True
    staff.save()
    response = token_client(staff).put(
        f"/api/ladders/{body['id']}/",
        config(name="renamed", rungs=body["rungs"], groups=[group.pk]),
        format="json",
    )
    assert response.status_code == 200, response.json()
    assert response.json()["groups"] == [group.pk]
    assert response.json()["owner"] == "olive"


def test_run_of_a_ladder_with_no_rungs_or_no_climbers_is_a_400_on_the_missing_field(owner_api):
    """Saving empty is allowed (a ladder is built over several edits); Run is refused, on the
    field to fill, and starts nothing."""
    combos = climbers(1)
    no_rungs = create(owner_api, combinations=[c.pk for c in combos])
    no_climbers = create(owner_api, name="no climbers", rungs=[rung(v) for v in versions(1)])

    for ladder, field in ((no_rungs, "rungs"), (no_climbers, "climbers")):
        refused = owner_api.post(f"/api/ladders/{ladder['id']}/run")
        assert refused.status_code == 400, refused.json()
        assert field in refused.json()["errors"], refused.json()
        assert owner_api.get(f"/api/ladders/{ladder['id']}/progress").json()["dispatch"] is None


@pytest.mark.parametrize(
    "field, low, high",
    [("runsPerCell", 1, 100), ("runsInFlightLimit", 0, 100_000)],
)
def test_a_ladders_counts_are_held_to_their_ranges(owner_api, field, low, high):
    for value in (low, high):
        create(owner_api, name=f"{field} {value}", **{field: value})
    for value in (low - 1, high + 1):
        refused = owner_api.post("/api/ladders/", config(**{field: value}), format="json")
        assert refused.status_code == 400 and field in refused.json()["errors"], refused.json()


def test_a_rungs_runs_are_held_to_1_to_100(owner_api):
    version = versions(1)[0]
    create(owner_api, rungs=[rung(version, runs=100)])
    for runs in (0, 101):
        refused = owner_api.post(
            "/api/ladders/", config(rungs=[rung(version, runs=runs)]), format="json"
        )
        assert refused.status_code == 400 and "rungs.0.runs" in refused.json()["errors"], (
            refused.json()
        )


def test_progress_is_gzipped_for_a_client_that_accepts_it(owner_api):
    ladder = create(
        owner_api, rungs=[rung(v) for v in versions(2)], combinations=[c.pk for c in climbers(2)]
    )
    url = f"/api/ladders/{ladder['id']}/progress"
    plain = owner_api.get(url)
    zipped = owner_api.get(url, HTTP_ACCEPT_ENCODING="gzip, br")

    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip"
    unzipped, read = json.loads(gzip.decompress(zipped.content)), plain.json()
    # A version begins with the database's snapshot at its read, which any transaction on the
    # cluster moves on; the board it names (jobs under way, digest) is the same.
    assert unzipped.pop("version").split(".")[1:] == read.pop("version").split(".")[1:]
    assert unzipped == read
