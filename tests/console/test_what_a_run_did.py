"""Run again says what it did: the jobs it launched, the runs it reused (read again from earlier
runs, whoever launched them: seed 004's runs from anywhere count) and what is left; the board
counts the reused runs apart, and the record and History count cost and time only for the runs
the dispatch launched."""

from ladders import origins, services
from ladders.models import Dispatch
from tests.console.helpers import text_of
from tests.history.helpers import PAID, history
from tests.ladders.builders import (
    PERFECT,
    claim_all,
    climbers,
    foreign_job,
    make_ladder,
    push,
    versions,
    work,
)
from tests.runs.helpers import hand_job, outside_run
from tests.support.ladders import start


def climbed_once(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PAID)
    assert Dispatch.objects.get(ladder=ladder).status == "finished"
    return ladder


def test_run_again_says_it_launched_nothing_and_reused_every_run(
    owner, owner_client, driver, run_tasks
):
    ladder = climbed_once(owner, driver, run_tasks)

    page = owner_client.submit(f"/ladders/{ladder.pk}/run", follow=True)

    text = text_of(page)
    assert "0 jobs launched" in text
    assert "4 runs reused" in text
    assert "To measure afresh" in text
    dispatch = Dispatch.objects.get(ladder=ladder)
    assert dispatch.reused["runs"] == 4
    assert [(s["kind"], s["runs"]) for s in dispatch.reused["from"]] == [("dispatch", 4)]


def test_the_board_counts_reused_runs_apart(owner, owner_api, owner_client, driver, run_tasks):
    ladder = climbed_once(owner, driver, run_tasks)
    owner_client.submit(f"/ladders/{ladder.pk}/run")

    runs = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()["dispatch"]["runs"]
    assert runs["reused"] == 4
    assert "4 reused" in text_of(owner_client.get(f"/ladders/{ladder.pk}/"))


def test_a_run_again_costs_nothing_in_the_record_and_history(
    owner, owner_api, owner_client, driver, run_tasks
):
    ladder = climbed_once(owner, driver, run_tasks)
    owner_client.submit(f"/ladders/{ladder.pk}/run")
    run_tasks()

    newest, first = history(owner_api, ladder)["results"][:2]
    assert first["totals"]["usdMicros"] == 4 * 1000
    assert newest["totals"]["usdMicros"] == 0
    assert newest["totals"]["runs"] == 0
    assert newest["runs"]["reused"] == 4
    assert "4 reused" in text_of(owner_client.get(f"/ladders/{ladder.pk}/history/"))


def test_the_first_pass_counts_the_runs_it_reuses_by_where_they_came_from(owner, outsider, driver):
    """Runs from anywhere count (seed 004): another dispatch's, one launched by hand and ones
    pushed without a job, each counted under its source, the most first, ties by name."""
    steps = versions(4)
    [combo] = climbers(1)
    outside_run(outsider, steps[0], combo, record=PERFECT)
    outside_run(outsider, steps[1], combo, record=PERFECT)
    jobs = [
        hand_job(outsider, steps[2], combo),
        foreign_job(outsider, steps[3], combo, origin=origins.origin(999, "d_elsewhere", "r1")),
    ]
    claim_all(driver)
    for job in jobs:
        push(driver, job, record=PERFECT)

    ladder = start(owner, steps, [combo])

    assert Dispatch.objects.get(ladder=ladder).reused == {
        "runs": 4,
        "from": [
            {"kind": "outside", "runs": 2},
            {"kind": "dispatch", "dispatch": "d_elsewhere", "runs": 1},
            {"kind": "hand", "runs": 1},
        ],
    }
