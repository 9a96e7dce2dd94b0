"""Seed 004, "A blocked climber": blocking as failing, what replaces a failure, attempts, and
POST /ladders/{id}/climbers/retry."""

import datetime as dt

import pytest

from ladders import services
from ladders.gate import Gate
from ladders.models import DispatchClimber
from ladders.standing import ClimberInput, Evidence, Failure, RungSnap, evaluate
from loopweb.runs.cells import CasePin, CombinationCell, cell_key
from loopweb.runs.models import Job, ModelEntry, Run
from loopweb.runs.selectors import counted_runs
from tests.console.helpers import Browser, text_of
from tests.factories import CombinationFactory, GGConfigurationFactory, gg_combination
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    fail,
    ladder_jobs,
    make_ladder,
    progress_of,
    push,
    queued,
    versions,
    work,
)
from tests.runs.helpers import hand_job, outside_run
from tests.support.ladders import start

IN_FLIGHT = ["queued", "pending", "dispatched", "starting", "running"]


def first_climber(ladder) -> dict:
    return progress_of(ladder)["climbers"][0]


def blocked_failing(owner, driver, run_tasks, steps=None, **overrides):
    """A one-climber ladder whose first rung is blocked as failing (retries used up)."""
    overrides.setdefault("retryCount", 0)
    ladder = start(owner, steps or versions(2), climbers(1), **overrides)
    work(driver, run_tasks, "infrastructure")
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")
    return ladder, climber


# Blocking as failing --------------------------------------------------------------------------


@pytest.mark.parametrize("ending", ["fail", "infrastructure run"])
def test_a_rung_blocks_as_failing_once_a_job_ends_without_a_counted_run_and_its_retries_used_up(
    owner, owner_api, driver, run_tasks, ending
):
    """ "A climber's current rung is blocked as failing as soon as one job the dispatch launched
    for it ends without a counted run and with its automatic retries used up" — whether the job
    failed with no run or pushed a run that does not count."""
    ladder = start(owner, versions(2), climbers(1), retryCount=0)
    [job] = claim_all(driver)
    if ending == "fail":
        fail(driver, job)
    else:
        push(driver, job, outcome="infrastructure", record={})
    run_tasks()
    [climber] = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()["climbers"]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")
    assert [s["status"] for s in climber["slots"]] == ["blocked", "pending"]
    assert climber["attempts"] == 1
    assert queued(ladder) == []


def test_with_a_retry_count_of_one_an_infrastructure_failure_costs_two_attempts_and_blocks(
    owner, driver, run_tasks
):
    """ "The retry limit is therefore the whole allowance: with a retryCount of 1, an
    infrastructure failure costs two attempts and the climber blocks, and the dispatch launches
    no replacement by itself." """
    ladder, climber = blocked_failing(owner, driver, run_tasks, retryCount=1)
    jobs = ladder_jobs(ladder)
    assert [(j.attempt, j.status, j.failure) for j in jobs] == [
        (1, "failed", "infrastructure"),
        (2, "failed", "infrastructure"),
    ]
    assert climber["attempts"] == 2
    for _ in range(3):  # nothing launches a replacement by itself
        assert services.run_launch_pass(ladder_id=ladder.pk).launched == 0
    assert len(ladder_jobs(ladder)) == 2


# Which jobs block -------------------------------------------------------------------------------


def test_the_block_is_read_off_the_jobs_the_dispatch_launched_not_a_hand_launch(
    owner, driver, run_tasks
):
    """ "The block is read off the jobs the dispatch launched for that rung and climber." — a
    hand launch of the cell that fails for good blocks nothing; the dispatch launches its own."""
    [step] = versions(1)
    [combo] = climbers(1)
    by_hand = hand_job(owner, step, combo, retry_count=0)
    ladder = start(owner, [step], [combo], retryCount=0)
    assert queued(ladder) == []  # the hand launch holds the slot's place
    [claimed] = claim_all(driver)
    assert claimed.pk == by_hand.pk
    fail(driver, claimed)
    run_tasks()
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("running", None)
    assert len(queued(ladder)) == 1


def test_the_block_is_read_off_this_dispatchs_jobs_not_an_earlier_dispatchs(
    owner, owner_api, driver, run_tasks
):
    """ "The block is read off the jobs the dispatch launched" — a new Run after a Stop climbs
    again without being blocked by the failure its predecessor recorded."""
    ladder, _ = blocked_failing(owner, driver, run_tasks)
    assert owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json").status_code == 200
    assert owner_api.post(f"/api/ladders/{ladder.pk}/run").status_code == 200
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("running", None)
    assert len(queued(ladder)) == 1


def test_a_failure_at_one_rung_does_not_block_the_climber_at_the_next(owner, driver, run_tasks):
    """ "...for that rung and climber" and "A rung that receives the runs it is missing from
    elsewhere goes to the gate as any other." — the rung blocked by a failure passes on a run from
    elsewhere, and the next rung launches unblocked."""
    steps = versions(2)
    ladder, _ = blocked_failing(owner, driver, run_tasks, steps=steps)
    combo = DispatchClimber.objects.get(dispatch__ladder=ladder).combination
    outside_run(owner, steps[0], combo, record=PERFECT)
    run_tasks()  # the pushed run of a held cell runs a pass
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("running", None)
    assert [s["status"] for s in climber["slots"]] == ["passed", "running"]
    assert [j.case for j in queued(ladder)] == ["step-2"]


def test_a_blocked_rung_that_receives_a_broken_run_from_elsewhere_fails(owner, driver, run_tasks):
    """ "A rung that receives the runs it is missing from elsewhere goes to the gate as any
    other." """
    steps = versions(2)
    ladder, _ = blocked_failing(owner, driver, run_tasks, steps=steps)
    combo = DispatchClimber.objects.get(dispatch__ladder=ladder).combination
    outside_run(owner, steps[0], combo, record=BROKEN)
    run_tasks()
    climber = first_climber(ladder)
    assert climber["status"] == "failed"
    assert [s["status"] for s in climber["slots"]] == ["failed", "skipped"]


def evaluate_one(*, launched_at=None, retried_at=None):
    """Pure: one climber, one rung of one run, whose only launch failed for good at 12:00 after
    two attempts."""
    cell = CombinationCell("aider", "m1", "acme")
    rung = RungSnap("r_1", CasePin("step-1", "1", "default"), 1)
    slot = (rung.id, cell_key(rung.pin, cell))
    noon = dt.datetime(2030, 1, 1, 12, tzinfo=dt.UTC)
    evidence = Evidence(
        failures={slot: [Failure(finished_at=noon, attempt=2)]},
        last_launch={slot: launched_at or noon - dt.timedelta(minutes=5)},
    )
    climber = ClimberInput(
        combination_key="aider|m1|acme",
        label="m1",
        pinned=cell,
        live=cell,
        problem=None,
        verdicts={},
        retried_at=retried_at,
    )
    standing = evaluate(
        rungs=[rung], climbers=[climber], gate=Gate(), evidence=evidence, running=True
    )
    return standing.climbers[0], noon


def test_the_rung_is_failing_while_no_later_launch_of_the_dispatch_has_replaced_the_failure():
    """ "The rung is failing while one of them is an exhausted failure that no later launch of the
    dispatch for that rung and climber has replaced." """
    blocked, _ = evaluate_one()
    assert (blocked.status, blocked.blocked_reason, blocked.attempts) == ("blocked", "failing", 2)
    assert blocked.missing == 0

    _, noon = evaluate_one()
    replaced, _ = evaluate_one(launched_at=noon + dt.timedelta(minutes=1))
    assert (replaced.status, replaced.blocked_reason) == ("running", None)
    assert replaced.missing == 1


def test_a_job_launched_together_with_the_failure_does_not_replace_it(owner, driver, run_tasks):
    """ "A job launched together with the failure does not replace it, so the dispatch launches
    nothing in its place while those jobs run or after they complete." """
    ladder = start(owner, versions(1), climbers(1), retryCount=0, runsPerCell=2)
    failing, together = claim_all(driver)
    fail(driver, failing)
    run_tasks()
    # "The climber reads as Running while a job of the rung is in flight"
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("running", None)
    assert queued(ladder) == []
    push(driver, together, record=PERFECT)
    run_tasks()
    # "...and as Blocked once none is."
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")
    assert climber["tally"]["counted"] == 1
    assert queued(ladder) == []
    assert len(ladder_jobs(ladder)) == 2


def test_the_climber_reads_running_while_any_job_of_the_rung_is_in_flight(owner, driver, run_tasks):
    """ "The climber reads as Running while a job of the rung is in flight and as Blocked once
    none is." — a hand launch of the cell in flight counts as a job of the rung."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = start(owner, [step], [combo], retryCount=0)
    [job] = claim_all(driver)
    by_hand = hand_job(owner, step, combo, retry_count=0)
    fail(driver, job)
    run_tasks()
    assert first_climber(ladder)["status"] == "running"
    [claimed] = claim_all(driver)
    assert claimed.pk == by_hand.pk
    fail(driver, claimed)
    run_tasks()
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "failing")


def test_a_canceled_job_leaves_the_rung_launchable_so_a_run_cancelled_by_hand_is_launched_again(
    owner, owner_api, driver, run_tasks
):
    """ "A canceled job leaves the rung launchable, so a run cancelled by hand is launched
    again." """
    ladder = start(owner, versions(1), climbers(1), retryCount=0)
    [job] = claim_all(driver)
    response = owner_api.post(f"/api/jobs/{job.pk}/cancel")
    assert response.status_code == 200, response.json()
    run_tasks()
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("running", None)
    [relaunched] = queued(ladder)
    assert relaunched.origin == job.origin
    assert relaunched.cell_key == job.cell_key
    # The driver's late push of the cancelled job's run changes nothing: the job stays canceled.
    push(driver, job, outcome="canceled", record={})
    run_tasks()
    assert first_climber(ladder)["status"] == "running"
    assert Job.objects.get(pk=job.pk).status == "canceled"


def test_a_hand_cancelled_automatic_retry_leaves_its_attempt_retried_and_the_rung_launched_again(
    owner, owner_api, driver, run_tasks
):
    """ "A canceled job leaves the rung launchable, so a run cancelled by hand is launched
    again." — an automatic retry too: cancelling it by hand leaves its attempt retried (SPEC §3),
    so the attempt's run stays uncounted and the next pass launches the rung again, where the
    catastrophic run would otherwise have failed it."""
    ladder = start(owner, versions(2), climbers(1), retryCount=1)
    [job] = claim_all(driver)
    run = push(driver, job, outcome="catastrophic", record={})
    [retry] = Job.objects.filter(attempt=2, status="queued")

    response = owner_api.post(f"/api/jobs/{retry.pk}/cancel")
    assert response.status_code == 200, response.json()
    run_tasks()

    assert Run.objects.get(pk=run.pk).counted is False
    climber = first_climber(ladder)
    assert (climber["status"], climber["slots"][0]["status"]) == ("running", "running")
    [relaunched] = queued(ladder)
    assert (relaunched.origin, relaunched.attempt) == (job.origin, 1)
    assert relaunched.cell_key == job.cell_key


def test_a_rung_whose_automatic_retry_was_cancelled_by_hand_is_decided_on_the_relaunched_run(
    owner, owner_api, driver, run_tasks
):
    """ "...the run of an attempt the backend retried is left out in favour of its retry" — and,
    its retry cancelled by hand, in favour of the run the dispatch launches in its place: with a
    target of 2 and two passing runs required, a catastrophic run and a perfect one would fail
    the rung; the relaunched perfect run passes it."""
    ladder = start(
        owner,
        versions(1),
        climbers(1),
        retryCount=1,
        runsPerCell=2,
        gate={"threshold": {"count": 2}},
    )
    broken, whole = claim_all(driver)
    catastrophic = push(driver, broken, outcome="catastrophic", record={})
    perfect = push(driver, whole, record=PERFECT)
    [retry] = Job.objects.filter(attempt=2, status="queued")
    assert owner_api.post(f"/api/jobs/{retry.pk}/cancel").status_code == 200
    run_tasks()

    [relaunched] = claim_all(driver)
    assert (relaunched.origin, relaunched.attempt) == (broken.origin, 1)
    again = push(driver, relaunched, record=PERFECT)
    run_tasks()

    climber = first_climber(ladder)
    assert (climber["status"], climber["slots"][0]["status"]) == ("completed", "passed")
    assert counted_runs(catastrophic.cell_key, 2) == [perfect, again]


@pytest.mark.parametrize("ending", ["fail", "push"])
def test_an_automatic_retry_a_driver_ends_as_canceled_leaves_the_rung_launchable_like_a_hand_cancel(
    owner, driver, run_tasks, ending
):
    """ "A canceled job leaves the rung launchable" — a retry its driver ends as canceled (with
    no run, or with a canceled run) leaves its attempt retried, as a hand cancel does: the
    attempt's run stays uncounted and the rung is launched again."""
    ladder = start(owner, versions(2), climbers(1), retryCount=1)
    [job] = claim_all(driver)
    run = push(driver, job, outcome="catastrophic", record={})
    [retry] = claim_all(driver)
    assert retry.attempt == 2
    if ending == "fail":
        fail(driver, retry, "canceled")
    else:
        push(driver, retry, outcome="canceled", record={})
    run_tasks()

    assert Run.objects.get(pk=run.pk).counted is False
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("running", None)
    [relaunched] = queued(ladder)
    assert (relaunched.origin, relaunched.attempt) == (job.origin, 1)


@pytest.mark.parametrize("outcome", ["timedOut", "limitExceeded", "catastrophic", "hung"])
def test_a_job_whose_run_counts_decides_nothing_here_its_run_goes_to_the_gate(
    owner, driver, run_tasks, outcome
):
    """ "A job whose run counts decides nothing here, since its run goes to the gate." — a model
    failure with no retries left is a failed job with a counted run: the gate fails the rung, and
    the climber is not blocked."""
    ladder = start(owner, versions(2), climbers(1), retryCount=0)
    work(driver, run_tasks, outcome)
    [job] = ladder_jobs(ladder)
    assert job.status == "failed"
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("failed", None)
    assert climber["attempts"] is None


@pytest.mark.parametrize("retry_count", [0, 1, 3])
def test_the_block_reports_the_attempts_the_blocking_launch_made(
    owner, owner_api, driver, run_tasks, retry_count
):
    """ "The block reports attempts, the number of attempts the blocking launch made: the first
    and each automatic retry." """
    ladder, _ = blocked_failing(owner, driver, run_tasks, retryCount=retry_count)
    [climber] = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()["climbers"]
    assert climber["attempts"] == retry_count + 1
    assert len(ladder_jobs(ladder)) == retry_count + 1


# Retry ------------------------------------------------------------------------------------------


def retry(api, ladder, key):
    return api.post(f"/api/ladders/{ladder.pk}/climbers/retry", {"climber": key}, format="json")


def test_retry_resumes_a_climber_blocked_as_failing(owner, owner_api, driver, run_tasks):
    """ "POST /ladders/{id}/climbers/retry retries a climber blocked as failing" """
    ladder, climber = blocked_failing(owner, driver, run_tasks)
    response = retry(owner_api, ladder, climber["key"])
    assert response.status_code == 200, response.json()
    [after] = response.json()["climbers"]
    assert (after["status"], after["blockedReason"]) == ("running", None)
    assert len(queued(ladder)) == 1
    work(driver, run_tasks, PERFECT)
    assert first_climber(ladder)["status"] == "completed"


def test_the_retry_is_recorded_on_the_dispatchs_climber(owner, owner_api, driver, run_tasks):
    """ "The retry is recorded on the dispatch's climber" """
    ladder, climber = blocked_failing(owner, driver, run_tasks)
    row = DispatchClimber.objects.get(dispatch__ladder=ladder)
    assert row.retried_at is None
    [failed] = ladder_jobs(ladder)
    assert retry(owner_api, ladder, climber["key"]).status_code == 200
    row.refresh_from_db()
    assert row.retried_at is not None
    assert row.retried_at >= failed.finished_at


def test_only_jobs_that_ended_after_the_retry_are_read_for_the_block(
    owner, owner_api, driver, run_tasks
):
    """ "...only jobs that ended after it are read for the block" — the earlier failure is
    forgotten, and a failure of the relaunch blocks the climber again."""
    ladder, climber = blocked_failing(owner, driver, run_tasks, retryCount=1)
    assert climber["attempts"] == 2
    assert retry(owner_api, ladder, climber["key"]).status_code == 200
    [relaunch] = claim_all(driver)
    assert relaunch.attempt == 1
    fail(driver, relaunch)  # retried once more ...
    run_tasks()
    assert first_climber(ladder)["status"] == "running"
    [second] = claim_all(driver)
    fail(driver, second)  # ... and now used up
    run_tasks()
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"], climber["attempts"]) == (
        "blocked",
        "failing",
        2,
    )
    assert len(ladder_jobs(ladder)) == 4


def test_the_pass_after_a_retry_relaunches_the_rung_under_the_dispatchs_limit(
    owner, owner_api, driver, run_tasks
):
    """ "...and the launch pass that follows relaunches the rung under the dispatch's limit." """
    ladder, climber = blocked_failing(owner, driver, run_tasks, runsPerCell=3, runsInFlightLimit=1)
    response = retry(owner_api, ladder, climber["key"])
    assert response.status_code == 200
    assert len(queued(ladder)) == 1  # three runs missing, room for one
    assert response.json()["dispatch"]["runs"]["inFlight"] == 1
    work(driver, run_tasks, PERFECT)
    assert first_climber(ladder)["slots"][0]["status"] == "passed"
    assert len(ladder_jobs(ladder, case="step-1")) == 1 + 3


def unlaunchable_model_climber(owner):
    combo = CombinationFactory(model="offline", catalog=False)
    entry = ModelEntry.objects.create(
        name="offline", provider="acme", launchable=False, created_by=owner
    )
    ladder = start(owner, versions(1), [combo])
    return ladder, combo, entry


def test_retry_resumes_a_climber_blocked_as_unlaunchable_once_its_catalog_entry_is_fixed(
    owner, owner_api, driver, run_tasks
):
    """ "POST /ladders/{id}/climbers/retry retries a climber blocked as ... unlaunchable." ... "A
    retry of an unlaunchable climber resolves its combination again, which helps once ... its
    model's catalog entry has been fixed." """
    ladder, combo, entry = unlaunchable_model_climber(owner)
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")
    assert ladder_jobs(ladder) == []

    response = retry(owner_api, ladder, combo.key)  # not fixed yet: still unlaunchable
    assert response.status_code == 200, response.json()
    assert response.json()["climbers"][0]["blockedReason"] == "unlaunchable"
    assert ladder_jobs(ladder) == []

    fixed = owner_api.patch(f"/api/models/{entry.pk}/", {"launchable": True}, format="json")
    assert fixed.status_code == 200, fixed.json()
    response = retry(owner_api, ladder, combo.key)
    assert response.status_code == 200, response.json()
    assert response.json()["climbers"][0]["status"] == "running"
    [job] = queued(ladder)
    assert job.combination_id == combo.pk


def test_retry_resumes_an_unlaunchable_gg_climber_once_its_configuration_is_fixed(
    owner, owner_api, run_tasks
):
    """ "A retry of an unlaunchable climber resolves its combination again, which helps once its
    configuration ... has been fixed." — a configuration with a role nobody binds cannot
    resolve; once the role is gone, the retry pins the climber's cells and launches."""
    configuration = GGConfigurationFactory(name="duo", roles=["planner", "coder"], created_by=owner)
    combo = gg_combination(configuration, {"planner": "thinker"})
    ladder = start(owner, versions(1), [combo])
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")
    assert DispatchClimber.objects.get(dispatch__ladder=ladder).combination_cell is None

    fixed = owner_api.put(
        f"/api/gg-configurations/{configuration.pk}/",
        {"name": "duo", "roles": ["planner"]},
        format="json",
    )
    assert fixed.status_code == 200, fixed.json()
    response = retry(owner_api, ladder, combo.key)
    assert response.status_code == 200, response.json()
    assert response.json()["climbers"][0]["status"] == "running"
    assert DispatchClimber.objects.get(dispatch__ladder=ladder).combination_cell is not None
    [job] = queued(ladder)
    assert job.cell_key.endswith(f"::gg:{configuration.pk}|gg|thinker|acme|thinker")


REFUSALS = {
    "running": "climber aider|m1|acme is running, not blocked",
    "cancelled": "climber aider|m1|acme is running, not blocked",
    "failed": "climber aider|m1|acme failed at rung 1, not blocked",
    "completed": "climber aider|m1|acme is completed, not blocked",
    "unrated": "climber aider|m1|acme is blocked as unrated: re-push its runs or Stop",
}
STANDS = {
    "running": ("running", None),
    "cancelled": ("running", None),
    "failed": ("failed", None),
    "completed": ("completed", None),
    "unrated": ("blocked", "unrated"),
}


@pytest.mark.parametrize("state", list(REFUSALS))
def test_retry_refuses_a_climber_not_blocked_as_failing_or_unlaunchable(
    owner, owner_api, driver, run_tasks, state
):
    """ "POST /ladders/{id}/climbers/retry retries a climber blocked as failing or unlaunchable"
    — and no other: the request is a 409 saying why, and nothing is recorded. A climber whose
    job was just cancelled by hand is running (its rung launchable), not blocked, even before
    the pass that relaunches it has run."""
    if state == "unrated":
        versions(1)
        rungs = [
            {"case": "step-1", "version": "2", "variant": "default", "engine": None, "runs": 1}
        ]
        ladder = start(owner, [], climbers(1), rungs=rungs)
    else:
        # A second climber keeps the dispatch running while the first is decided.
        ladder = start(owner, versions(1), climbers(2))
    first_job = ladder_jobs(ladder)[0] if state != "unrated" else None
    if state == "cancelled":
        assert owner_api.post(f"/api/jobs/{first_job.pk}/cancel").status_code == 200
    elif state in ("failed", "completed"):
        claim_all(driver)
        push(driver, first_job, record=BROKEN if state == "failed" else PERFECT)
        run_tasks()
    elif state == "unrated":
        work(driver, run_tasks, PERFECT)
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == STANDS[state]
    response = retry(owner_api, ladder, climber["key"])
    assert response.status_code == 409, response.json()
    assert REFUSALS[state] in response.json()["detail"]
    assert not DispatchClimber.objects.filter(
        dispatch__ladder=ladder, retried_at__isnull=False
    ).exists()
    if state == "cancelled":
        assert len(queued(ladder)) == 1  # the other climber's: nothing relaunched by the Retry


def test_the_consoles_retry_of_a_climber_that_is_not_blocked_says_why(owner, run_tasks):
    """The console's Retry button answers a climber that is not blocked with the reason, on the
    board, and records nothing."""
    ladder = start(owner, versions(1), climbers(1))
    browser = Browser(owner)
    response = browser.submit(
        f"/ladders/{ladder.pk}/retry", {"climber": "aider|m1|acme"}, follow=True
    )
    assert response.status_code == 200
    assert "climber aider|m1|acme is running, not blocked" in text_of(response)
    assert DispatchClimber.objects.get(dispatch__ladder=ladder).retried_at is None


def test_retry_answers_400_for_a_key_that_is_not_a_climber(owner, owner_api):
    ladder = start(owner, versions(1), climbers(1))
    response = retry(owner_api, ladder, "aider|nobody|acme")
    assert response.status_code == 400
    assert "climber" in response.json()["errors"]


def test_retry_of_a_ladder_with_no_running_dispatch_is_a_conflict(owner, owner_api):
    ladder = make_ladder(owner, versions(1), climbers(1))
    assert retry(owner_api, ladder, "aider|m1|acme").status_code == 409


def test_only_the_owner_retries_and_an_outsider_gets_404(
    owner, owner_api, reviewer, reviewer_api, outsider_api, driver, run_tasks
):
    ladder, climber = blocked_failing(owner, driver, run_tasks, reviewers=[reviewer.pk])
    assert retry(outsider_api, ladder, climber["key"]).status_code == 404
    assert retry(reviewer_api, ladder, climber["key"]).status_code == 403
    assert DispatchClimber.objects.get(dispatch__ladder=ladder).retried_at is None


def test_a_run_pushed_as_canceled_leaves_the_rung_launchable_like_a_cancel(owner, driver):
    """ "A canceled job leaves the rung launchable": a driver that pushes a run whose outcome is
    canceled ended the attempt by cancelling it, so the dispatch launches the rung again instead
    of blocking the climber as failing."""
    [step] = versions(1)
    [combo] = climbers(1)
    ladder = make_ladder(owner, [step], [combo], retryCount=0)
    services.start_dispatch(ladder=ladder)
    [job] = claim_all(driver)
    push(driver, job, outcome="canceled", record={})
    services.run_launch_pass(ladder_id=ladder.pk)
    climber = progress_of(ladder)["climbers"][0]
    assert climber["status"] == "running"
    assert len(ladder_jobs(ladder, status="queued")) == 1


# No silent stall: a fixed cause moves the climb on, or leaves it visibly blocked ---------------


def test_a_climber_unlaunchable_for_its_model_climbs_on_by_itself_once_the_model_is_launchable(
    owner, owner_api, run_tasks
):
    """A climber blocked as unlaunchable never reads running with nothing launched and nothing
    scheduled: fixing the catalog entry runs a pass, which launches the rung."""
    ladder, combo, entry = unlaunchable_model_climber(owner)
    run_tasks()  # the worker has run every pass the Run asked for
    assert progress_of(ladder)["dispatch"]["status"] == "needsAttention"

    fixed = owner_api.patch(f"/api/models/{entry.pk}/", {"launchable": True}, format="json")
    assert fixed.status_code == 200, fixed.json()
    run_tasks()

    [job] = queued(ladder)
    assert job.combination_id == combo.pk
    body = progress_of(ladder)
    assert body["dispatch"]["status"] == "running"
    assert body["climbers"][0]["status"] == "running"
    assert body["climbers"][0]["tally"]["inFlight"] == 1


def test_a_climber_whose_model_is_missing_climbs_on_once_the_model_is_added(
    owner, owner_api, run_tasks
):
    combo = CombinationFactory(model="newcomer", catalog=False)
    ladder = start(owner, versions(1), [combo])
    run_tasks()
    climber = first_climber(ladder)
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")

    added = owner_api.post(
        "/api/models/", {"name": "newcomer", "provider": "acme", "launchable": True}, format="json"
    )
    assert added.status_code == 201, added.json()
    run_tasks()

    [job] = queued(ladder)
    assert job.combination_id == combo.pk
    assert first_climber(ladder)["status"] == "running"


def test_a_climber_whose_gg_configuration_was_deleted_stays_visibly_blocked_with_retry(
    owner, owner_api, driver, run_tasks
):
    """Deleting a running gg climber's configuration cannot be undone by the catalog (a new
    configuration is another cell): the climber stays blocked as unlaunchable, the dispatch reads
    Needs attention, and Retry (or Stop) is offered — never a silent "running"."""
    configuration = GGConfigurationFactory(name="duo", roles=["planner", "coder"], created_by=owner)
    gg = gg_combination(configuration, {"planner": "p1", "coder": "c1"})
    ladder = start(owner, versions(2), [gg])
    [job] = queued(ladder)
    push(driver, claim_all(driver)[0], record=PERFECT)

    # The API refuses to delete a configuration a combination uses (409); one can still be gone,
    # deleted before that rule or by hand in the database.
    assert owner_api.delete(f"/api/gg-configurations/{configuration.pk}/").status_code == 409
    configuration.delete()
    run_tasks()

    body = progress_of(ladder)
    climber = body["climbers"][0]
    assert (climber["status"], climber["blockedReason"]) == ("blocked", "unlaunchable")
    assert climber["slots"][0]["status"] == "passed"
    assert body["dispatch"]["status"] == "needsAttention"
    assert retry(owner_api, ladder, gg.key).status_code == 200
    assert first_climber(ladder)["blockedReason"] == "unlaunchable"
