"""Seed 004, "Ladders" and "Endpoints": the ladder surface over HTTP, end to end."""

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
