"""Seed 004, "A configuration and its dispatches"."""

from ladders import services
from ladders.models import Dispatch
from loopweb.runs.models import Job
from tests.factories import CoverageGroupFactory
from tests.ladders.builders import (
    BROKEN,
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
    versions,
    work,
)


def test_a_saved_ladder_does_nothing_by_itself(owner_api):
    """ "A ladder is a configuration, and it does nothing by itself." """
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(2)], combinations=[c.pk for c in climbers(2)]
    )
    assert Job.objects.count() == 0
    assert not Dispatch.objects.exists()
    board = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert board["ladder"]["status"] == "notRunYet"
    assert board["dispatch"] is None
    [row] = owner_api.get("/api/ladders/summary").json()["results"]
    assert row["status"] == "notRunYet"


def test_the_configuration_holds_every_part_the_seed_lists(owner, owner_api):
    """ "The configuration holds: a name; the rungs, each a validator-rated pinned case; the
    climbers, as combination groups and one-offs; the gate: its floor, its threshold,
    unloadedCountsAsBroken, and earlyStop; the runs per rung, which a rung may override; the
    runs-in-flight limit, or null to inherit the account's; the retry limit, retryCount; the climb
    order, outerAxis." """
    low, high = versions(2)
    grouped, oneoff = climbers(2)
    group = CoverageGroupFactory(owner=owner, combinations=[grouped])
    sent = config(
        name="platformer climb",
        rungs=[rung(low), rung(high, runs=3, engine="godot")],
        groups=[group.pk],
        combinations=[oneoff.pk],
        gate={
            "floor": "great",
            "threshold": {"fraction": 0.5},
            "unloadedCountsAsBroken": False,
            "earlyStop": True,
        },
        runsPerCell=2,
        runsInFlightLimit=7,
        retryCount=3,
        outerAxis="combination",
    )
    created = owner_api.post("/api/ladders/", sent, format="json")
    assert created.status_code == 201, created.json()
    stored = owner_api.get(f"/api/ladders/{created.json()['id']}/").json()
    assert stored["name"] == "platformer climb"
    assert [
        (r["case"], r["version"], r["variant"], r["engine"], r["runs"]) for r in stored["rungs"]
    ] == [
        ("step-1", "1", "default", None, None),
        ("step-2", "1", "default", "godot", 3),
    ]
    assert stored["groups"] == [group.pk]
    assert stored["combinations"] == [oneoff.pk]
    assert stored["gate"] == sent["gate"]
    assert stored["runsPerCell"] == 2
    assert stored["runsInFlightLimit"] == 7
    assert stored["retryCount"] == 3
    assert stored["outerAxis"] == "combination"

    # The null limit is a value of its own, not a missing one.
    sent["runsInFlightLimit"] = None
    updated = owner_api.put(f"/api/ladders/{stored['id']}/", sent, format="json")
    assert updated.status_code == 200, updated.json()
    assert updated.json()["runsInFlightLimit"] is None


def test_omitted_parts_take_their_defaults(owner_api):
    """The configuration's parts default as the seed and API.md say: gate floor scuffed, count 1,
    unloadedCountsAsBroken on, earlyStop off; one run per rung; the account's limit; one retry;
    the rung axis."""
    created = owner_api.post("/api/ladders/", {"name": "bare"}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["gate"] == {
        "floor": "scuffed",
        "threshold": {"count": 1},
        "unloadedCountsAsBroken": True,
        "earlyStop": False,
    }
    assert body["runsPerCell"] == 1
    assert body["runsInFlightLimit"] is None
    assert body["retryCount"] == 1
    assert body["outerAxis"] == "rung"
    assert body["rungs"] == body["groups"] == body["combinations"] == []


def test_a_null_runs_in_flight_limit_inherits_the_accounts(owner, driver, run_tasks):
    """ "the runs-in-flight limit, or null to inherit the account's" """
    owner.account.runs_in_flight_limit = 2
    owner.account.save()
    inheriting = make_ladder(owner, versions(1), climbers(3), runsInFlightLimit=None)
    services.start_dispatch(ladder=inheriting)
    assert progress_of(inheriting)["dispatch"]["runsInFlightLimit"] == 2
    assert len(queued(inheriting)) == 2

    own = make_ladder(
        owner, versions(1, prefix="own"), climbers(3, prefix="o"), runsInFlightLimit=3
    )
    services.start_dispatch(ladder=own)
    assert progress_of(own)["dispatch"]["runsInFlightLimit"] == 3
    assert len(queued(own)) == 3


def test_a_rung_may_override_the_runs_per_rung(owner, driver, run_tasks):
    """ "the runs per rung, which a rung may override" """
    low, high = versions(2)
    ladder = make_ladder(
        owner, [], climbers(1), rungs=[rung(low), rung(high, runs=3)], runsPerCell=2
    )
    services.start_dispatch(ladder=ladder)
    assert [j.case for j in queued(ladder)] == ["step-1", "step-1"]
    work(driver, run_tasks, PERFECT)
    launched = [j.case for j in ladder_jobs(ladder)]
    assert launched.count("step-1") == 2
    assert launched.count("step-2") == 3
    assert progress_of(ladder)["dispatch"]["runs"]["total"] == 5


def test_the_retry_limit_is_the_configurations_retry_count(owner, owner_api):
    """ "the retry limit, retryCount": it is stored, carried by the jobs, clamped above ten and
    refused below zero."""
    ladder = make_ladder(owner, versions(1), climbers(1), retryCount=4)
    services.start_dispatch(ladder=ladder)
    assert [j.retry_count for j in queued(ladder)] == [4]

    clamped = owner_api.post("/api/ladders/", {"name": "a", "retryCount": 25}, format="json")
    assert clamped.status_code == 201
    assert clamped.json()["retryCount"] == 10
    refused = owner_api.post("/api/ladders/", {"name": "b", "retryCount": -1}, format="json")
    assert refused.status_code == 400
    assert "retryCount" in refused.json()["errors"]


def test_the_climb_order_is_the_configurations_outer_axis(owner, driver):
    """ "the climb order, outerAxis": with room for one run, the rung axis launches the lowest
    rung first and the combination axis the first climber first."""
    for axis in ("rung", "combination"):
        low, high = versions(2, prefix=axis)
        first, second = climbers(2, prefix=f"{axis}-m")
        # The first climber already cleared the low rung, so it stands one rung above the second.
        outside(driver, low, first, PERFECT)
        ladder = make_ladder(
            owner, [low, high], [first, second], outerAxis=axis, runsInFlightLimit=1
        )
        services.start_dispatch(ladder=ladder)
        [job] = queued(ladder)
        if axis == "rung":
            assert (job.case, job.combination_id) == ("rung-1", second.pk)
        else:
            assert (job.case, job.combination_id) == ("combination-2", first.pk)


def test_pressing_run_dispatches_the_configuration_as_it_stands_at_that_moment(owner, owner_api):
    """ "Pressing Run starts a dispatch of the configuration as it stands at that moment." """
    low, high = versions(2)
    body = api_ladder(owner_api, rungs=[rung(low)], combinations=[c.pk for c in climbers(1)])
    edited = config(
        rungs=[{**body["rungs"][0]}, rung(high, runs=2)],
        combinations=body["combinations"],
        gate={"floor": "great"},
        retryCount=2,
        runsInFlightLimit=5,
    )
    assert owner_api.put(f"/api/ladders/{body['id']}/", edited, format="json").status_code == 200
    started = owner_api.post(f"/api/ladders/{body['id']}/run").json()["dispatch"]
    assert [(r["case"], r["runs"]) for r in started["rungs"]] == [("step-1", 1), ("step-2", 2)]
    assert started["gate"]["floor"] == "great"
    assert started["retryCount"] == 2
    assert started["runsInFlightLimit"] == 5


def test_editing_the_configuration_never_touches_a_running_dispatch(
    owner, owner_api, driver, run_tasks
):
    """ "Editing the configuration never touches a running dispatch" """
    low, high, extra = versions(3)
    first, second = climbers(2)
    body = api_ladder(
        owner_api, rungs=[rung(low), rung(high)], combinations=[first.pk], retryCount=1
    )
    started = owner_api.post(f"/api/ladders/{body['id']}/run").json()["dispatch"]

    # Every part changes: rungs (one dropped, one added), climbers, gate, runs, limit, retries.
    edited = config(
        name="renamed",
        rungs=[rung(extra, runs=3), {**body["rungs"][0]}],
        combinations=[second.pk],
        gate={"floor": "flawless", "threshold": {"count": 3}},
        runsPerCell=4,
        runsInFlightLimit=1,
        retryCount=0,
        outerAxis="combination",
    )
    assert owner_api.put(f"/api/ladders/{body['id']}/", edited, format="json").status_code == 200

    # A run the old gate passes and the new one would fail.
    work(driver, run_tasks, lambda job: {**BROKEN, "checklist": {"starts": True}})
    board = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    dispatch = board["dispatch"]
    assert dispatch["id"] == started["id"]
    assert dispatch["status"] == "finished"
    assert {k: dispatch[k] for k in ("gate", "outerAxis", "runsInFlightLimit", "retryCount")} == {
        k: started[k] for k in ("gate", "outerAxis", "runsInFlightLimit", "retryCount")
    }
    assert [r["id"] for r in dispatch["rungs"]] == [r["id"] for r in started["rungs"]]
    assert [c["key"] for c in board["climbers"]] == [first.key]
    assert [c["status"] for c in board["climbers"]] == ["completed"]
    jobs = Job.objects.filter(origin__contains=started["id"]).order_by("id")
    assert [(j.case, j.combination_id, j.retry_count) for j in jobs] == [
        ("step-1", first.pk, 1),
        ("step-2", first.pk, 1),
    ]


def test_an_edit_applies_to_the_next_run(owner, owner_api, driver, run_tasks):
    """ "... and applies to the next Run." """
    low, high = versions(2)
    first, second = climbers(2)
    body = api_ladder(owner_api, rungs=[rung(low)], combinations=[first.pk])
    owner_api.post(f"/api/ladders/{body['id']}/run")
    work(driver, run_tasks, PERFECT)
    assert owner_api.get(f"/api/ladders/{body['id']}/progress").json()["ladder"]["status"] == (
        "finished"
    )
    edited = config(
        rungs=[{**body["rungs"][0]}, rung(high)],
        combinations=[first.pk, second.pk],
        retryCount=5,
    )
    assert owner_api.put(f"/api/ladders/{body['id']}/", edited, format="json").status_code == 200
    rerun = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [c["key"] for c in rerun["climbers"]] == [first.key, second.key]
    assert len(rerun["dispatch"]["rungs"]) == 2
    assert rerun["dispatch"]["retryCount"] == 5
    # The first climber's low rung is read from the first dispatch's run; the rest is launched.
    assert sorted((j.case, j.combination_id) for j in queued()) == [
        ("step-1", second.pk),
        ("step-2", first.pk),
    ]


def test_reordering_the_rungs_mid_dispatch_leaves_its_climb_alone(owner_api, driver, run_tasks):
    """ "Editing the configuration never touches a running dispatch": a new rung order applies
    to the next Run only."""
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(2)], combinations=[climbers(1)[0].pk]
    )
    low, high = [r["id"] for r in body["rungs"]]
    owner_api.post(f"/api/ladders/{body['id']}/run")
    reordered = owner_api.post(
        f"/api/ladders/{body['id']}/rungs/order", {"order": [high, low]}, format="json"
    )
    assert reordered.status_code == 200
    work(driver, run_tasks, PERFECT)
    board = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert [r["id"] for r in board["dispatch"]["rungs"]] == [low, high]
    assert [r["id"] for r in board["rungs"]] == [high, low]
    assert [j.case for j in Job.objects.order_by("id")] == ["step-1", "step-2"]


def test_editing_a_referenced_group_mid_dispatch_leaves_its_climbers_alone(
    owner, owner_api, driver, run_tasks
):
    """ "Editing the configuration never touches a running dispatch, and applies to the next
    Run": the climbers resolved from a group at Run stay the dispatch's climbers."""
    first, second, added = climbers(3)
    group = CoverageGroupFactory(owner=owner, combinations=[first, second])
    body = api_ladder(owner_api, rungs=[rung(v) for v in versions(1)], groups=[group.pk])
    owner_api.post(f"/api/ladders/{body['id']}/run")
    edit = owner_api.put(
        f"/api/groups/{group.pk}/",
        {"name": group.name, "kind": "combo", "members": [second.pk, added.pk]},
        format="json",
    )
    assert edit.status_code == 200, edit.json()
    work(driver, run_tasks, PERFECT)
    board = owner_api.get(f"/api/ladders/{body['id']}/progress").json()
    assert [c["key"] for c in board["climbers"]] == [first.key, second.key]
    assert board["dispatch"]["status"] == "finished"
    rerun = owner_api.post(f"/api/ladders/{body['id']}/run").json()
    assert [c["key"] for c in rerun["climbers"]] == [second.key, added.key]
