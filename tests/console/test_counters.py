"""One vocabulary of counters: executed, not needed, under way and left add up to the runs; a
stopped dispatch does not read as all executed; a slot waiting for room is not drawn running."""

from django.urls import reverse

from ladders import services
from loopweb.console.presenters import run_bar
from tests.console.helpers import segment_width, text_of
from tests.ladders.builders import (
    PERFECT,
    climbers,
    make_ladder,
    stopped_mid_climb,
    versions,
    work,
)


def test_the_counters_add_up_to_the_runs():
    bar = run_bar({"total": 10, "done": 6, "inFlight": 3}, executed=4)
    assert (bar["executed"], bar["not_needed"], bar["under_way"], bar["left"]) == (4, 2, 3, 1)
    assert bar["executed"] + bar["not_needed"] + bar["under_way"] + bar["left"] == bar["total"]
    # Jobs still finishing in a decided slot are under way, never more than what is not done.
    assert run_bar({"total": 4, "done": 4, "inFlight": 2}, executed=2)["under_way"] == 0


def test_a_stopped_dispatch_says_what_was_executed_and_what_the_stop_left_unrun(
    owner_client, owner, driver, run_tasks
):
    """The runs a Stop skipped are done (nothing is left to execute) but were never run: they
    are counted apart from the runs a decided slot did not need, and drawn apart on the bar."""
    ladder = make_ladder(owner, versions(3, prefix="ct"), climbers(2, prefix="ct"))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=1)
    services.stop_dispatch(ladder=ladder, cancel_running=True)
    page = owner_client.get(reverse("console:board", args=[ladder.pk]))
    text, html = text_of(page), page.content.decode()
    assert (
        "Runs (6): 2 executed · 0 not needed · 4 not run (stopped) · 0 under way · 0 left" in text
    )
    assert "What the counts mean" in text and "Not needed runs a decided or skipped slot" in text
    assert "Not run (stopped) runs the Stop left unrun" in text
    bar = html[html.index('class="runbar') :].split("</div>")[0]
    assert (segment_width(bar, "runbar-done"), segment_width(bar, "runbar-stopped")) == (
        "33.33%",
        "66.67%",
    )
    assert "2 executed, 0 not needed, 4 not run (stopped)" in bar


def test_a_stopped_dispatch_with_a_job_still_running_counts_it_under_way(
    owner_client, owner, driver, run_tasks
):
    ladder = stopped_mid_climb(owner, driver, run_tasks)
    text = text_of(owner_client.get(reverse("console:board", args=[ladder.pk])))
    assert (
        "Runs (8): 4 executed · 1 not needed · 2 not run (stopped) · 1 under way · 0 left" in text
    )
    assert "Stopped at rung 2" in text and "Stopped at rung 1" in text


def test_a_slot_waiting_for_room_is_not_drawn_running(owner_client, owner):
    ladder = make_ladder(
        owner, versions(1, prefix="wr"), climbers(2, prefix="wr"), runsInFlightLimit=1
    )
    services.start_dispatch(ladder=ladder)
    html = owner_client.get(reverse("console:board", args=[ladder.pk])).content.decode()
    launched = html[html.index('id="slot-0-0"') :].split("</td>")[0]
    waiting = html[html.index('id="slot-1-0"') :].split("</td>")[0]
    assert "slot-waiting" not in launched and "Rung 1: running<" in launched
    assert "slot-waiting" in waiting and "Rung 1: running, waiting for room" in waiting
    assert 'data-status="running"' in waiting  # the status itself is the API's
