"""Seed 004, "No history"."""

from ladders import services
from ladders.models import Dispatch, DispatchCell, DispatchClimber
from loopweb.runs.models import Run
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    api_ladder,
    climbers,
    make_ladder,
    progress_of,
    push_run_of,
    queued,
    rung,
    slot_statuses,
    versions,
    work,
)


def test_the_ladder_shows_its_dispatchs_progress_while_it_runs(owner, driver, run_tasks):
    """ "The ladder keeps only its latest dispatch: enough to show its progress while it
    runs" """
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder)
    [first, _] = queued(ladder)
    push_run_of(driver, first, PERFECT)
    run_tasks()
    board = progress_of(ladder)
    assert board["dispatch"]["status"] == "running"
    assert slot_statuses(board) == [["passed", "running"], ["running", "pending"]]
    assert board["dispatch"]["runs"] == {
        "total": 4,
        "done": 1,
        "inFlight": 2,
        "skippedByStop": 0,
        "reused": 0,
    }


def test_the_final_standing_stays_until_the_next_run(owner, owner_api, driver, run_tasks):
    """ "... and its final standing until the next Run." """
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, lambda job: BROKEN if job.combination.model == "m2" else PERFECT)
    final = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert final["dispatch"]["status"] == "finished"
    assert slot_statuses(final) == [["passed", "passed"], ["failed", "skipped"]]

    # Later passes, edits and reads leave it as it was.
    services.run_launch_pass(ladder_id=ladder.pk)
    config = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    config["name"] = "renamed"
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", config, format="json").status_code == 200
    again = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert again["dispatch"] == final["dispatch"]
    assert again["climbers"] == final["climbers"]


def test_pressing_run_replaces_the_latest_dispatch(owner, owner_api, driver, run_tasks):
    """ "Pressing Run replaces it." Nothing of the earlier dispatch is kept."""
    low, high = versions(2)
    first, second = climbers(2)
    ladder = make_ladder(owner, [low, high], [first, second])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    earlier = Dispatch.objects.get(ladder=ladder).dispatch_id

    config = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    config["combinations"] = [second.pk]
    owner_api.put(f"/api/ladders/{ladder.pk}/", config, format="json")
    board = owner_api.post(f"/api/ladders/{ladder.pk}/run").json()
    assert board["dispatch"]["id"] != earlier
    assert [c["key"] for c in board["climbers"]] == [second.key]
    assert list(Dispatch.objects.values_list("dispatch_id", flat=True)) == [board["dispatch"]["id"]]
    assert list(DispatchClimber.objects.values_list("combination_key", flat=True)) == [second.key]
    assert not DispatchCell.objects.filter(cell_key__endswith=first.key).exists()


def test_the_runs_are_the_results_and_stay_in_the_run_list(owner, owner_api, driver, run_tasks):
    """ "The runs themselves are the results, and stay in the run list like any run." """
    body = api_ladder(
        owner_api, rungs=[rung(v) for v in versions(2)], combinations=[climbers(1)[0].pk]
    )
    owner_api.post(f"/api/ladders/{body['id']}/run")
    runs = work(driver, run_tasks, PERFECT)
    assert len(runs) == 2

    def listed():
        return {r["id"] for r in owner_api.get("/api/runs/").json()["results"]}

    assert listed() == {r.pk for r in runs}
    owner_api.post(f"/api/ladders/{body['id']}/run")  # replaces the dispatch
    assert listed() == {r.pk for r in runs}
    assert owner_api.delete(f"/api/ladders/{body['id']}/").status_code == 204
    assert listed() == {r.pk for r in runs}
    assert Run.objects.count() == 2
