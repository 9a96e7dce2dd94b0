"""Seed 004, "A rung slot's runs"."""

from ladders import evidence, selectors, services
from ladders.models import Dispatch, DispatchCell, DispatchClimber
from loopweb.runs.cells import CasePin, combination_key_of, joined_cell_key
from loopweb.runs.models import Job, Run
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    climber_of,
    climbers,
    fail_attempt,
    foreign_job,
    ladder_jobs,
    make_ladder,
    outside,
    progress_of,
    push_run_of,
    queued,
    rung,
    slot_statuses,
    versions,
    work,
)
from tests.runs.helpers import at, hand_job, pin_of


def slot(board: dict, climber_key: str, index: int) -> dict:
    return climber_of(board, climber_key)["slots"][index]


def queue_runs(ladder) -> list[int]:
    return [entry["run"] for entry in selectors.review_queue(ladder)]


def test_a_rung_and_a_climber_form_one_coverage_cell(owner, driver):
    """ "a rung and a climber form one coverage cell, and the slot's runs are that cell's runs
    under the rung's target." """
    [step] = versions(1)
    combo, other = climbers(2)
    # Runs of neighbouring cells: another variant of the case, another combination.
    outside(driver, step, combo, BROKEN, variant="hard")
    outside(driver, step, other, BROKEN)
    ladder = make_ladder(owner, [step], [combo])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    cell = slot(board, combo.key, 0)
    assert cell["cellKey"] == f"{CasePin('step-1', '1', 'default').key}::{combo.key}"
    assert cell["tally"]["counted"] == 0
    assert cell["status"] == "running"
    [job] = queued(ladder)
    assert job.cell_key == cell["cellKey"]


def test_a_slots_runs_are_the_first_target_counted_runs_of_its_cell_to_finish(owner, driver):
    """ "They are the first target counted runs of the cell to finish" """
    [step] = versions(1)
    early_passes, early_fails = climbers(2)
    # Pushed out of order; only the finishing time decides. Infrastructure and canceled runs
    # never count, however early they finished.
    outside(driver, step, early_passes, BROKEN, finished_at=at(3))
    outside(driver, step, early_passes, PERFECT, finished_at=at(2))
    outside(driver, step, early_passes, PERFECT, finished_at=at(1))
    outside(driver, step, early_passes, {}, outcome="infrastructure", finished_at=at(0))
    outside(driver, step, early_fails, PERFECT, finished_at=at(3))
    outside(driver, step, early_fails, PERFECT, finished_at=at(2))
    outside(driver, step, early_fails, BROKEN, finished_at=at(1))
    outside(driver, step, early_fails, {}, outcome="canceled", finished_at=at(0))
    ladder = make_ladder(
        owner, [step], [early_passes, early_fails], runsPerCell=2, gate={"threshold": {"count": 2}}
    )
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["completed", "failed"]
    assert queued(ladder) == []
    first_two = {
        combo.key: list(
            Run.objects.filter(combination=combo, counted=True)
            .order_by("finished_at")
            .values_list("pk", flat=True)[:2]
        )
        for combo in (early_passes, early_fails)
    }
    assert sorted(queue_runs(ladder)) == sorted(
        first_two[early_passes.key] + first_two[early_fails.key]
    )


def test_a_slots_runs_count_whoever_launched_them_and_whenever(owner, outsider, driver, run_tasks):
    """ "... whoever launched them and whenever: an earlier dispatch, a coverage plan, a launch
    by hand, or this dispatch." """
    [step] = versions(1)
    by_dispatch, by_plan, by_hand, by_this = climbers(4)
    # An earlier dispatch (of another owner's ladder) ran the first climber.
    earlier = make_ladder(outsider, [step], [by_dispatch])
    services.start_dispatch(ladder=earlier)
    work(driver, run_tasks, PERFECT)
    # A coverage plan and a launch by hand ran the next two.
    push_run_of(driver, foreign_job(outsider, step, by_plan, "plan:12/run-3"), PERFECT)
    push_run_of(driver, hand_job(outsider, step, by_hand), PERFECT)
    run_tasks()

    ladder = make_ladder(owner, [step], [by_dispatch, by_plan, by_hand, by_this])
    services.start_dispatch(ladder=ladder)
    [job] = queued(ladder)
    assert job.combination_id == by_this.pk
    push_run_of(driver, job, PERFECT)
    run_tasks()
    board = progress_of(ladder)
    assert [c["status"] for c in board["climbers"]] == ["completed"] * 4
    assert board["dispatch"]["status"] == "finished"
    assert len(ladder_jobs(ladder)) == 1


def test_the_gate_the_progress_and_the_review_queue_all_read_the_slots_runs(owner, driver):
    """ "The gate, the progress and the review queue all read these runs." A run beyond the
    target is none of the slot's runs."""
    [step] = versions(1)
    combo = climbers(1)[0]
    first = outside(driver, step, combo, BROKEN, finished_at=at(1))
    later = outside(driver, step, combo, PERFECT, finished_at=at(2))
    ladder = make_ladder(owner, [step], [combo])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    [climber] = board["climbers"]
    assert climber["status"] == "failed"  # the gate read the broken run, not the perfect one
    assert climber["tally"]["counted"] == 1
    assert climber["tally"]["passing"] == 0
    assert queue_runs(ladder) == [first.pk]
    assert board["dispatch"]["runsUnreviewed"] == 1
    assert later.pk not in queue_runs(ladder)


def test_a_dispatch_launches_only_what_a_rung_is_missing(owner, driver):
    """ "A dispatch therefore launches only what a rung is missing." """
    [step] = versions(1)
    combo = climbers(1)[0]
    outside(driver, step, combo, PERFECT)
    ladder = make_ladder(owner, [step], [combo], runsPerCell=3)
    services.start_dispatch(ladder=ladder)
    assert len(queued(ladder)) == 2


def test_a_rung_the_existing_runs_meet_is_decided_by_the_first_pass_with_nothing_launched(
    owner, driver
):
    """ "A rung whose target the existing runs already meet is decided by the first launch pass
    with nothing launched" """
    low, high = versions(2)
    combo = climbers(1)[0]
    outside(driver, low, combo, PERFECT)
    ladder = make_ladder(owner, [low, high], [combo])
    services.start_dispatch(ladder=ladder, run_pass=False)
    assert DispatchClimber.objects.get().verdicts == {}
    report = services.run_launch_pass(ladder_id=ladder.pk)
    low_id = progress_of(ladder)["rungs"][0]["id"]
    assert DispatchClimber.objects.get().verdicts == {low_id: "passed"}
    assert [j.case for j in ladder_jobs(ladder)] == ["step-2"]
    assert report.launched == 1


def test_a_dispatch_decided_entirely_by_existing_runs_finishes_without_launching_a_run(
    owner, driver
):
    """ "... and a dispatch decided entirely by existing runs finishes without launching a
    run." """
    low, high = versions(2)
    climbing, failing = climbers(2)
    for step in (low, high):
        outside(driver, step, climbing, PERFECT)
    outside(driver, low, failing, BROKEN)
    ladder = make_ladder(owner, [low, high], [climbing, failing])
    services.start_dispatch(ladder=ladder, run_pass=False)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert (report.launched, report.finished) == (0, True)
    assert Job.objects.count() == 0
    board = progress_of(ladder)
    assert board["dispatch"]["status"] == "finished"
    assert slot_statuses(board) == [["passed", "passed"], ["failed", "skipped"]]


def test_running_the_same_configuration_again_reaches_the_same_standing(
    owner, owner_api, driver, run_tasks
):
    """ "Running the same configuration again reads the same runs and reaches the same
    standing." """
    ladder = make_ladder(owner, versions(3), climbers(2))
    services.start_dispatch(ladder=ladder)
    work(
        driver,
        run_tasks,
        lambda job: BROKEN if (job.case, job.combination.model) == ("step-2", "m2") else PERFECT,
    )
    before = progress_of(ladder)
    launched = Job.objects.count()
    again = owner_api.post(f"/api/ladders/{ladder.pk}/run").json()
    assert again["dispatch"]["id"] != before["dispatch"]["id"]
    assert again["dispatch"]["status"] == "finished"
    assert (
        slot_statuses(again)
        == slot_statuses(before)
        == [
            ["passed", "passed", "passed"],
            ["passed", "failed", "skipped"],
        ]
    )
    assert [c["status"] for c in again["climbers"]] == ["completed", "failed"]
    assert Job.objects.count() == launched


def test_a_rerun_launches_only_where_a_target_was_raised_or_a_cell_is_short(
    owner, owner_api, driver, run_tasks
):
    """ "It launches runs only where a target was raised or a cell is short of its target." """
    low, high = versions(2)
    first, second, newcomer = climbers(3)
    ladder = make_ladder(owner, [low, high], [first, second])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    config = owner_api.get(f"/api/ladders/{ladder.pk}/").json()
    config["rungs"][1]["runs"] = 2  # raise the high rung's target
    config["combinations"].append(newcomer.pk)  # a climber whose cells are short
    assert owner_api.put(f"/api/ladders/{ladder.pk}/", config, format="json").status_code == 200
    owner_api.post(f"/api/ladders/{ladder.pk}/run")
    dispatch_id = Dispatch.objects.get(ladder=ladder).dispatch_id
    rerun = Job.objects.filter(origin__contains=dispatch_id).order_by("id")
    assert [(j.case, j.combination_id) for j in rerun] == [
        ("step-1", newcomer.pk),
        ("step-2", first.pk),
        ("step-2", second.pk),
    ]


def test_a_slots_jobs_in_flight_are_every_job_of_the_cell_whoever_launched_it(
    owner, outsider, driver
):
    """ "A slot's jobs in flight are counted the same way: every job of the cell in flight,
    whoever launched it" """
    [step] = versions(1)
    combo = climbers(1)[0]
    hand_job(outsider, step, combo)
    foreign_job(outsider, step, combo, "plan:3/run-1")
    ladder = make_ladder(owner, [step], [combo], runsPerCell=3)
    services.start_dispatch(ladder=ladder)
    assert len(queued(ladder)) == 1
    tally = progress_of(ladder)["climbers"][0]["tally"]
    assert (tally["counted"], tally["inFlight"], tally["pending"]) == (0, 3, 3)


def test_a_slots_jobs_in_flight_count_only_up_to_what_the_slot_still_needs(owner, outsider, driver):
    """ "... up to what the slot still needs." """
    [step] = versions(1)
    combo = climbers(1)[0]
    outside(driver, step, combo, PERFECT)
    for _ in range(3):
        hand_job(outsider, step, combo)
    ladder = make_ladder(owner, [step], [combo], runsPerCell=2, gate={"threshold": {"count": 2}})
    services.start_dispatch(ladder=ladder)
    assert queued(ladder) == []
    tally = progress_of(ladder)["climbers"][0]["tally"]
    assert (tally["counted"], tally["inFlight"], tally["pending"], tally["required"]) == (
        1,
        1,
        1,
        2,
    )


def test_a_run_someone_else_queued_holds_the_slots_place_and_the_dispatch_waits_for_it(
    owner, outsider, driver, run_tasks
):
    """ "A run someone else has queued for the cell holds the slot's place, and the dispatch
    waits for it." """
    low, high = versions(2)
    combo = climbers(1)[0]
    held = hand_job(outsider, low, combo)
    ladder = make_ladder(owner, [low, high], [combo])
    services.start_dispatch(ladder=ladder)
    run_tasks()
    assert queued(ladder) == []
    board = progress_of(ladder)
    assert board["dispatch"]["status"] == "running"
    assert slot(board, combo.key, 0)["status"] == "running"
    assert board["climbers"][0]["status"] == "running"
    push_run_of(driver, held, PERFECT)
    run_tasks()
    assert [j.case for j in queued(ladder)] == ["step-2"]
    assert slot(progress_of(ladder), combo.key, 0)["status"] == "passed"


def test_a_slot_the_climber_has_not_reached_holds_no_runs(owner, driver, run_tasks):
    """ "A slot reads its cell once its climber reaches the rung. A slot the climber has not
    reached holds no runs" """
    low, high = versions(2)
    combo = climbers(1)[0]
    waiting = outside(driver, high, combo, BROKEN)
    ladder = make_ladder(owner, [low, high], [combo])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    unreached = slot(board, combo.key, 1)
    assert unreached["status"] == "pending"
    assert unreached["tally"] is None
    assert board["dispatch"]["runs"]["done"] == 0
    assert board["dispatch"]["runsUnreviewed"] == 0
    assert waiting.pk not in queue_runs(ladder)
    waiting.refresh_from_db()
    assert waiting.published is False  # a run of a rung not reached is left as it is

    work(driver, run_tasks, PERFECT)
    board = progress_of(ladder)
    reached = slot(board, combo.key, 1)
    assert reached["status"] == "failed"  # the climber reached it and read the broken run
    assert reached["tally"]["counted"] == 1
    assert waiting.pk in queue_runs(ladder)
    assert [j.case for j in ladder_jobs(ladder)] == ["step-1"]


def test_a_slot_the_climber_has_not_reached_holds_no_jobs_in_flight(
    owner, outsider, driver, run_tasks
):
    """ "A slot the climber has not reached holds no runs and no jobs in flight." """
    low, high = versions(2)
    combo = climbers(1)[0]
    hand_job(outsider, high, combo)
    ladder = make_ladder(owner, [low, high], [combo])
    services.start_dispatch(ladder=ladder)
    board = progress_of(ladder)
    assert slot(board, combo.key, 1) == {
        "rung": board["dispatch"]["rungs"][1]["id"],
        "status": "pending",
        "cellKey": slot(board, combo.key, 1)["cellKey"],
        "tally": None,
        "passRate": None,
    }
    [job] = queued(ladder)
    push_run_of(driver, job, PERFECT)
    run_tasks()
    # Reached now: the hand launch is its job in flight, so nothing is launched for it.
    assert [j.case for j in ladder_jobs(ladder)] == ["step-1"]
    tally = slot(progress_of(ladder), combo.key, 1)["tally"]
    assert (tally["inFlight"], tally["pending"]) == (1, 1)


def test_two_rungs_pinning_the_same_case_are_the_same_cell_and_read_the_same_runs(
    owner, driver, run_tasks
):
    """ "Two rungs that pin the same case at the same version, variant and engine are the same
    cell for a climber, so both read the same runs." """
    [step] = versions(1)
    combo = climbers(1)[0]
    ladder = make_ladder(owner, [], [combo], rungs=[rung(step), rung(step)])
    services.start_dispatch(ladder=ladder)
    runs = work(driver, run_tasks, PERFECT)
    assert len(runs) == 1
    board = progress_of(ladder)
    low, high = board["climbers"][0]["slots"]
    assert low["cellKey"] == high["cellKey"]
    assert (low["status"], high["status"]) == ("passed", "passed")
    assert board["climbers"][0]["status"] == "completed"
    [entry] = selectors.review_queue(ladder)
    assert (entry["run"], entry["rung"]) == (runs[0].pk, low["rung"])


def test_a_launch_pass_stamps_every_job_with_its_origin(owner, driver, run_tasks):
    """ "A launch pass stamps every job it enqueues with the origin
    ladder:<ladderId>/<dispatchId>/<rungId>." """
    ladder = make_ladder(owner, versions(3), climbers(2))
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    board = progress_of(ladder)
    rung_ids = [r["id"] for r in board["dispatch"]["rungs"]]
    expected = [
        f"ladder:{ladder.pk}/{board['dispatch']['id']}/{rung_id}"
        for rung_id in rung_ids
        for _ in range(2)
    ]
    assert [j.origin for j in ladder_jobs(ladder)] == expected
    assert Job.objects.count() == 6


def test_the_runs_in_flight_limit_acts_on_the_dispatchs_own_jobs(owner, outsider, driver):
    """ "The origin is what the dispatch's runs-in-flight limit ... act[s] on": another
    launcher's job in a slot's cell holds the slot's place but takes none of the limit."""
    [step] = versions(1)
    waited_on, launched = climbers(2)
    hand_job(outsider, step, waited_on)
    ladder = make_ladder(owner, [step], [waited_on, launched], runsInFlightLimit=1)
    services.start_dispatch(ladder=ladder)
    assert [j.combination_id for j in queued(ladder)] == [launched.pk]


def test_stop_acts_on_the_origin(owner, outsider, driver):
    """ "The origin is what ... its Stop ... act[s] on" """
    [step] = versions(1)
    waited_on, launched = climbers(2)
    foreign = hand_job(outsider, step, waited_on)
    ladder = make_ladder(owner, [step], [waited_on, launched])
    services.start_dispatch(ladder=ladder)
    [own] = queued(ladder)
    assert services.stop_dispatch(ladder=ladder) == 1
    own.refresh_from_db()
    foreign.refresh_from_db()
    assert (own.status, foreign.status) == ("canceled", "queued")


def test_the_failing_block_acts_on_the_origin(owner, outsider, driver, run_tasks):
    """ "The origin is what ... its failing block act[s] on": a hand launch that fails for good
    does not block the climber; the dispatch's own launch that does, blocks it."""
    [step] = versions(1)
    combo = climbers(1)[0]
    foreign = hand_job(outsider, step, combo, retry_count=0)
    ladder = make_ladder(owner, [step], [combo], retryCount=0)
    services.start_dispatch(ladder=ladder)
    fail_attempt(driver, foreign, "infrastructure")
    run_tasks()
    board = progress_of(ladder)
    assert board["climbers"][0]["status"] == "running"
    [own] = queued(ladder)
    fail_attempt(driver, own, "infrastructure")
    run_tasks()
    climber = progress_of(ladder)["climbers"][0]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")


def test_the_origin_plays_no_part_in_which_runs_count(owner, outsider, driver, run_tasks):
    """ "... and it plays no part in which runs count." A run of another launcher that finished
    first is the slot's run, ahead of the dispatch's own."""
    [step] = versions(1)
    combo = climbers(1)[0]
    ladder = make_ladder(owner, [step], [combo])
    services.start_dispatch(ladder=ladder)
    [own] = queued(ladder)
    foreign = hand_job(outsider, step, combo)
    push_run_of(driver, own, PERFECT, finished_at=at(2))
    push_run_of(driver, foreign, BROKEN, finished_at=at(1))
    run_tasks()
    board = progress_of(ladder)
    assert board["climbers"][0]["status"] == "failed"
    assert queue_runs(ladder) == [Run.objects.get(job=foreign).pk]


def test_the_first_runs_of_held_and_unheld_cells_are_read_in_their_order(owner, driver):
    """Each cell's first counted runs, oldest first (PostgreSQL reads them through a LATERAL
    join on the cells' index, SQLite ranks every counted run), for cells held by two dispatches
    and cells not held yet, each once, the runs that do not count left out."""
    first, second = versions(2, prefix="shape")
    combos = climbers(3, prefix="shape")
    for minute, (version, combo, record, outcome) in enumerate(
        [
            (first, combos[0], BROKEN, "completed"),
            (first, combos[0], PERFECT, "completed"),
            (first, combos[0], {}, "infrastructure"),  # never counted
            (first, combos[0], PERFECT, "completed"),
            (second, combos[0], PERFECT, "hung"),
            (first, combos[1], PERFECT, "completed"),
            (second, combos[2], PERFECT, "completed"),  # a cell no dispatch holds
        ]
    ):
        outside(driver, version, combo, record, outcome=outcome, finished_at=at(10 - minute))
    shared = make_ladder(owner, [first, second], combos[:2], runsPerCell=2)
    other = make_ladder(owner, [first], combos[:1], runsPerCell=3)
    for ladder in (shared, other):
        services.start_dispatch(ladder=ladder, run_pass=False)
    dispatches = list(Dispatch.objects.filter(ladder__in=[shared, other]))
    loose = Run.objects.get(combination=combos[2]).cell_key

    def expected(cells, limit=3):
        found = {}
        for run in Run.objects.filter(cell_key__in=cells, counted=True).order_by(
            "finished_at", "id"
        ):
            found.setdefault(run.cell_key, [])
            if len(found[run.cell_key]) < limit:
                found[run.cell_key].append(run.pk)
        return found

    by_cell = read(evidence._cells([d.pk for d in dispatches], [loose]), 3)
    held = set(
        DispatchCell.objects.filter(dispatch__in=dispatches).values_list("cell_key", flat=True)
    )
    assert by_cell == expected({*held, loose})
    assert sum(map(len, by_cell.values())) == 6  # 3 + 1 + 1 + 1, the infrastructure run left out
    # One dispatch's cells alone.
    [one] = [d for d in dispatches if d.ladder_id == shared.pk]
    alone = read(evidence._cells([one.pk], []), 3)
    assert alone == expected(DispatchCell.objects.filter(dispatch=one).values("cell_key"))
    assert sum(map(len, alone.values())) == 5  # 3 + 1 + 1
    # Some cells, named by their keys (a board reading again the climbers whose cells changed).
    combination = combination_key_of(Run.objects.filter(combination=combos[0])[0].cell_key)
    keys = [joined_cell_key(pin_of(step).key, combination) for step in (first, second)]
    chosen = read(evidence._cells([], keys), 3)
    assert chosen == expected(keys)
    assert sum(map(len, chosen.values())) == 4


def read(cells, max_target: int) -> dict:
    """The slot runs' ids of the cells as the evidence reads them, by cell."""
    [rows] = evidence.fetch_rows(evidence._slot_runs(cells, max_target))
    return {key: [run.id for run in runs] for key, runs in evidence._by_cell(rows).items()}
