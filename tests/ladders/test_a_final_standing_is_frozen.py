"""Seed 004, "No history" and "Stopping a dispatch": a dispatch that has ended shows "its final
standing until the next Run", and "When a dispatch is stopped, every slot that was running,
blocked, or pending becomes skipped". SPEC §5: the final standing is written in the transaction
that ends the dispatch, and nothing that lands later changes it; only the count of its jobs still
in flight keeps moving."""

import pytest

from evalsets.models import Evalset
from ladders import selectors, services
from ladders.models import FinalStanding
from loopweb.runs import services as run_services
from loopweb.runs.models import Review
from tests.console.helpers import Browser
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    dispatch_of,
    make_ladder,
    outside,
    progress_of,
    push,
    queued,
    slot_statuses,
    versions,
    work,
)

pytestmark = pytest.mark.django_db


def running_on_rung_one_with_rung_two_already_run(owner, driver, combo=None):
    """Two rungs, one climber; rung 2 already has a passing run from elsewhere; the dispatch's
    rung 1 job is running."""
    steps = versions(2)
    [combo] = [combo] if combo else climbers(1)
    outside(driver, steps[1], combo, PERFECT)
    ladder = make_ladder(owner, steps, [combo])
    services.start_dispatch(ladder=ladder)
    [job] = claim_all(driver)
    run_services.report_status(job_id=job.pk, driver=driver, status="running")
    return ladder, steps, combo, job


def test_runs_landing_after_a_stop_never_change_its_standing(owner, driver, run_tasks):
    ladder, steps, combo, job = running_on_rung_one_with_rung_two_already_run(owner, driver)
    services.stop_dispatch(ladder=ladder)
    stopped = progress_of(ladder)
    assert slot_statuses(stopped) == [["skipped", "skipped"]]
    assert stopped["dispatch"]["runs"]["inFlight"] == 1

    push(driver, job, record=PERFECT)  # the job a plain Stop let finish
    outside(driver, steps[0], combo, BROKEN)  # another launch of its cells
    run_tasks()

    after = progress_of(ladder)
    assert slot_statuses(after) == [["skipped", "skipped"]]
    assert after["climbers"] == stopped["climbers"]
    assert after["dispatch"]["slotCounts"] == stopped["dispatch"]["slotCounts"]
    # Only the count of its jobs still in flight keeps moving.
    assert after["dispatch"]["runs"]["inFlight"] == 0
    assert after["dispatch"]["status"] == "stopped"


def test_the_summary_and_the_journal_read_the_final_standing(owner, owner_api, driver, run_tasks):
    ladder, steps, combo, job = running_on_rung_one_with_rung_two_already_run(owner, driver)
    services.stop_dispatch(ladder=ladder)
    push(driver, job, record=PERFECT)
    run_tasks()

    [row] = selectors.ladder_summaries([ladder])
    assert row["slotCounts"]["skipped"] == 2
    assert row["slotCounts"]["passed"] == 0
    evalset = Evalset.objects.create(name="climb", pins=[], hash="a" * 16)
    journaled = owner_api.post(
        f"/api/ladders/{ladder.pk}/journal", {"evalset": evalset.hash}, format="json"
    )
    assert journaled.status_code == 201, journaled.json()
    assert (journaled.json()["summary"]["passed"], journaled.json()["summary"]["failed"]) == (0, 0)


def test_a_finished_dispatchs_verdicts_survive_a_re_push_that_would_fail_them(
    owner, driver, run_tasks
):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    [run] = work(driver, run_tasks, PERFECT)
    assert dispatch_of(ladder).status == "finished"
    final = progress_of(ladder)
    assert slot_statuses(final) == [["passed"]]

    run_services.repush_run(
        run=run, outcome="completed", record=BROKEN, finished_at=run.finished_at
    )
    outside(driver, versions(1, prefix="other")[0], climbers(1, prefix="x")[0])
    run_tasks()

    assert progress_of(ladder)["climbers"] == final["climbers"]
    assert progress_of(ladder)["dispatch"]["slotCounts"] == final["dispatch"]["slotCounts"]


def test_the_final_standing_is_written_in_the_transaction_that_ends_the_dispatch(
    owner, driver, run_tasks
):
    ladder, *_ = running_on_rung_one_with_rung_two_already_run(owner, driver)
    assert not FinalStanding.objects.filter(dispatch__ladder=ladder).exists()
    services.stop_dispatch(ladder=ladder)
    final = FinalStanding.objects.get(dispatch__ladder=ladder)
    assert final.slot_counts["skipped"] == 2
    assert [c["body"] for c in final.climbers] == progress_of(ladder)["climbers"]

    # A new Run replaces the dispatch: its standing is no longer the dispatch's, and stays for
    # the dispatch's record.
    services.start_dispatch(ladder=ladder)
    assert not FinalStanding.objects.filter(dispatch__ladder=ladder).exists()
    assert FinalStanding.objects.get(ladder=ladder).pk == final.pk


def test_the_review_queue_of_an_ended_dispatch_lists_its_final_slot_runs(
    owner, owner_api, driver, run_tasks
):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder)
    [run] = work(driver, run_tasks, PERFECT)
    queue = owner_api.get(f"/api/ladders/{ladder.pk}/queue").json()
    assert [e["run"] for e in queue["results"]] == [run.pk]
    run_services.review_run(run=run, reviewer=owner, aesthetic_rating=4, writeup="fine")
    assert owner_api.get(f"/api/ladders/{ladder.pk}/queue").json()["results"] == []
    assert progress_of(ladder)["dispatch"]["runsUnreviewed"] == 0
    assert Review.objects.count() == 1


def test_after_a_plain_stop_the_board_keeps_refreshing_until_its_jobs_have_finished(
    owner, driver, run_tasks
):
    ladder, steps, combo, job = running_on_rung_one_with_rung_two_already_run(owner, driver)
    services.stop_dispatch(ladder=ladder)
    browser = Browser(owner)
    board = browser.get(f"/ladders/{ladder.pk}/")
    assert 'hx-trigger="every' in board.content.decode()

    push(driver, job, record=PERFECT)
    run_tasks()

    board = browser.get(f"/ladders/{ladder.pk}/")
    assert 'hx-trigger="every' not in board.content.decode()
    assert queued(ladder) == []
