"""Seed 004, "Reviewing a dispatch's runs": GET /ladders/{id}/queue and runsUnreviewed."""

from ladders import services
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    config,
    dispatch_of,
    ladder_jobs,
    make_ladder,
    push,
    ready_passes,
    rung,
    versions,
    work,
)
from tests.runs.helpers import at, outside_run
from tests.support.ladders import start


def queue(api, ladder) -> list[dict]:
    response = api.get(f"/api/ladders/{ladder.pk}/queue")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["count"] == len(body["results"])
    return body["results"]


def review(api, run_id, **extra):
    body = {"aestheticRating": 4, "writeup": "Tidy jumps, no music.", **extra}
    response = api.post(f"/api/runs/{run_id}/reviews", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def unreviewed(api, ladder) -> int:
    return api.get(f"/api/ladders/{ladder.pk}/progress").json()["dispatch"]["runsUnreviewed"]


def test_the_queue_lists_the_completed_slot_runs_in_the_ladders_own_order(
    owner, owner_api, driver, run_tasks
):
    """ "GET /ladders/{id}/queue returns the completed runs among the latest dispatch's slot runs
    that its owner has not reviewed, in the ladder's own order" — rung order, then climber
    order, whatever order the runs finished in."""
    combos = climbers(2)
    ladder = start(owner, versions(2), combos)
    for _ in range(2):  # each rung: the second climber's run finishes first
        for job in reversed(claim_all(driver)):
            push(driver, job, record=PERFECT)
        run_tasks()
    rungs = [r["id"] for r in dispatch_of(ladder).snapshot["rungs"]]
    entries = queue(owner_api, ladder)
    assert [(e["rung"], e["climber"]) for e in entries] == [
        (rungs[0], combos[0].key),
        (rungs[0], combos[1].key),
        (rungs[1], combos[0].key),
        (rungs[1], combos[1].key),
    ]
    runs = {j.run.pk: j for j in ladder_jobs(ladder)}
    assert sorted(e["run"] for e in entries) == sorted(runs)
    for entry in entries:
        assert entry["validatorRating"] == "flawless"
        assert entry["finishedAt"]
        assert runs[entry["run"]].combination.key == entry["climber"]


def test_only_completed_runs_are_queued(owner, owner_api, driver, run_tasks):
    """ "...returns the completed runs among the latest dispatch's slot runs" — a model failure
    the gate read is not queued for review."""
    combos = climbers(2)
    ladder = start(owner, versions(1), combos, retryCount=0)
    work(
        driver, run_tasks, lambda job: "timedOut" if job.combination_id == combos[0].pk else PERFECT
    )
    entries = queue(owner_api, ladder)
    assert [e["climber"] for e in entries] == [combos[1].key]


def test_a_run_leaves_the_queue_once_the_owner_reviews_it_with_an_aesthetic_rating_and_writeup(
    owner, owner_api, driver, run_tasks
):
    """ "...that its owner has not reviewed ... so they can be given an aesthetic rating and a
    writeup." """
    ladder = start(owner, versions(1), climbers(2))
    work(driver, run_tasks, PERFECT)
    first, second = queue(owner_api, ladder)
    saved = review(owner_api, first["run"], aestheticRating=5, writeup="Lovely.")
    assert (saved["aestheticRating"], saved["writeup"]) == (5, "Lovely.")
    assert [e["run"] for e in queue(owner_api, ladder)] == [second["run"]]


def test_a_review_by_one_of_the_ladders_reviewers_counts_and_a_strangers_does_not(
    owner, owner_api, reviewer, reviewer_api, outsider_api, driver, run_tasks
):
    """A run "counts as reviewed once the owner or one of the ladder's reviewers reviewed it"
    (API.md): a review by someone the ladder is not shared with leaves it queued, even when
    their own ladder reads the same run (so they may review it, SPEC §1)."""
    steps, combos = versions(1), climbers(3)
    ladder = start(owner, steps, combos, reviewers=[reviewer.pk])
    work(driver, run_tasks, PERFECT)
    start(outsider_api.user, steps, combos)  # reads the same runs
    first, second, third = queue(owner_api, ladder)
    review(reviewer_api, first["run"])
    review(outsider_api, second["run"])  # answered 201
    assert [e["run"] for e in queue(owner_api, ladder)] == [second["run"], third["run"]]
    assert [e["run"] for e in queue(reviewer_api, ladder)] == [second["run"], third["run"]]


def test_a_run_the_dispatch_read_counts_the_same_as_one_it_launched(
    owner, outsider, owner_api, driver, run_tasks
):
    """ "A run the dispatch read counts here the same as one it launched" """
    steps = versions(2)
    [combo] = climbers(1)
    earlier = outside_run(outsider, steps[0], combo, record=PERFECT)
    ladder = start(owner, steps, [combo])
    work(driver, run_tasks, PERFECT)
    [launched] = [j.run for j in ladder_jobs(ladder)]
    assert [e["run"] for e in queue(owner_api, ladder)] == [earlier.pk, launched.pk]


def test_a_run_two_rungs_share_is_listed_once_under_the_lower_rung(
    owner, owner_api, driver, run_tasks
):
    """ "...and a run two rungs share is listed once, under the lower rung." """
    steps = versions(2)
    [combo] = climbers(1)
    ladder = start(
        owner, steps, [combo], rungs=[rung(steps[0]), rung(steps[1]), rung(steps[0], runs=2)]
    )
    work(driver, run_tasks, PERFECT)
    low, middle, high = (r["id"] for r in dispatch_of(ladder).snapshot["rungs"])
    shared, second, extra = (j.run.pk for j in ladder_jobs(ladder))
    entries = queue(owner_api, ladder)
    assert [(e["run"], e["rung"]) for e in entries] == [
        (shared, low),
        (second, middle),
        (extra, high),
    ]


def test_runs_outside_the_slots_are_not_queued(owner, owner_api, driver, run_tasks):
    """ "...among the latest dispatch's slot runs" — not a run beyond a slot's target, nor a run
    of a rung its climber never reached."""
    steps = versions(2)
    [combo] = climbers(1)
    first = outside_run(owner, steps[0], combo, record=BROKEN, finished_at=at(-20))
    outside_run(owner, steps[0], combo, record=PERFECT, finished_at=at(-10))  # beyond the target
    outside_run(owner, steps[1], combo, record=PERFECT)  # rung two, never reached
    ladder = start(owner, steps, [combo])
    assert queue(owner_api, ladder) == [
        {
            "run": first.pk,
            "rung": dispatch_of(ladder).snapshot["rungs"][0]["id"],
            "climber": combo.key,
            "validatorRating": "broken",
            "finishedAt": owner_api.get(f"/api/runs/{first.pk}/").json()["finishedAt"],
            "reviews": 0,
            "reservedUntil": None,
        }
    ]


def test_the_queue_reads_the_latest_dispatch(owner, owner_api, driver, run_tasks):
    """ "...among the latest dispatch's slot runs" — a Run of a reconfigured ladder queues its own
    slots' runs, not the previous dispatch's."""
    steps = versions(2)
    [combo] = climbers(1)
    ladder = start(owner, steps[:1], [combo])
    work(driver, run_tasks, PERFECT)
    assert len(queue(owner_api, ladder)) == 1
    body = config(rungs=[rung(steps[1])], combinations=[combo.pk])
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", body, format="json").status_code == 200
    assert owner_api.post(f"/api/ladders/{ladder.pk}/run").status_code == 200
    assert queue(owner_api, ladder) == []
    work(driver, run_tasks, PERFECT)
    [entry] = queue(owner_api, ladder)
    assert entry["rung"] == dispatch_of(ladder).snapshot["rungs"][0]["id"]


def test_progress_reports_the_queues_count_as_runs_unreviewed(owner, owner_api, driver, run_tasks):
    """ "Progress reports their count as runsUnreviewed." """
    ladder = start(owner, versions(2), climbers(2))
    assert unreviewed(owner_api, ladder) == 0
    work(driver, run_tasks, PERFECT)
    entries = queue(owner_api, ladder)
    assert unreviewed(owner_api, ladder) == len(entries) == 4
    review(owner_api, entries[0]["run"])
    assert unreviewed(owner_api, ladder) == 3


def test_the_queue_neither_blocks_nor_feeds_the_climb(owner, owner_api, driver, run_tasks):
    """ "The queue neither blocks nor feeds the climb." — a dispatch finishes with its runs
    unreviewed, and a review runs no launch pass."""
    ladder = start(owner, versions(2), climbers(1), runsPerCell=2)
    [first, second] = claim_all(driver)
    run = push(driver, first, record=PERFECT)
    run_tasks()
    passes = dispatch_of(ladder).passes
    review(owner_api, run.pk, verdict="reject")
    assert ready_passes(ladder) == 0
    run_tasks()
    assert dispatch_of(ladder).passes == passes
    push(driver, second, record=PERFECT)
    work(driver, run_tasks, PERFECT)
    assert dispatch_of(ladder).status == "finished"
    assert unreviewed(owner_api, ladder) == 3


def test_the_queue_is_the_owners_and_its_reviewers_and_an_outsider_gets_404(
    owner, owner_api, reviewer, reviewer_api, outsider_api
):
    ladder = make_ladder(owner, versions(1), climbers(1), reviewers=[reviewer.pk])
    assert queue(owner_api, ladder) == []  # no dispatch yet
    services.start_dispatch(ladder=ladder)
    assert queue(reviewer_api, ladder) == []
    assert outsider_api.get(f"/api/ladders/{ladder.pk}/queue").status_code == 404
