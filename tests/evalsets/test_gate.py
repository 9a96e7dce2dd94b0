"""When the verify gate measures: journals, pushes, applies, the sweep; once per checkpoint."""

import datetime as dt
import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, InterfaceError, connection, transaction
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from evalsets import selectors, services, tasks
from evalsets.models import GATE_OPEN, EvalsetRun, OutcomeResult, Proposal
from loopweb.runs import services as run_services
from loopweb.runs.cells import CasePin
from tests.evalsets.helpers import apply, journal, make_evalset, propose, t, verify
from tests.factories import CombinationFactory

pytestmark = pytest.mark.django_db


def queued(task) -> int:
    return DBTaskResult.objects.filter(task_path=task.module_path, status="READY").count()


def push_outside_loopweb(owner):
    run, _ = run_services.push_run(
        pushed_by=owner,
        pin=CasePin("jump-1", "3", "default"),
        combination=CombinationFactory(),
        outcome="completed",
        record={},
        finished_at=timezone.now(),
    )
    return run


def baseline_and_proposal(owner, **policy):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), **policy)
    return evalset, proposal


def test_journaling_a_run_measures_the_proposals_of_that_evalset(owner, run_tasks):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    run_tasks()
    assert not OutcomeResult.objects.exists()
    journal(evalset, t(120), passed=12)
    assert queued(tasks.verify_evalset) == 1
    run_tasks()
    result = OutcomeResult.objects.get()
    assert (result.proposal, result.current, result.verdict) == (proposal, 12, "held")
    assert result.checkpoint == {"after_runs": 1}
    assert result.metric == f"evalset:{evalset.hash}:passed"


def test_a_run_of_another_evalset_brings_nothing_due(owner, run_tasks):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    other = make_evalset("other", pins=[{"case": "x", "version": "1"}])
    journal(other, t(120), passed=1)
    run_tasks()
    assert not OutcomeResult.objects.exists()


def test_after_runs_counts_only_runs_journaled_since_the_apply(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 2}])
    journal(evalset, t(105), passed=10)  # before the apply: does not count
    apply(proposal, t(110))
    journal(evalset, t(120), passed=9)
    assert verify(proposal) == []
    journal(evalset, t(130), passed=11)
    (result,) = verify(proposal)
    assert (result.baseline, result.current) == (10, 11)


def test_current_is_the_newest_run_since_the_apply_at_the_moment_of_measuring(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_ms": 3_600_000}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=4)
    newest = journal(evalset, t(130), passed=11)
    (result,) = verify(proposal, now=t(200))
    assert result.current_run == newest


def test_a_time_checkpoint_comes_due_when_its_time_has_passed(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_ms": 3_600_000}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    assert verify(proposal, now=t(169)) == []
    (result,) = verify(proposal, now=t(170))
    assert result.checkpoint == {"after_ms": 3_600_000}


def test_a_pushed_run_is_a_grain_and_brings_grain_checkpoints_due(owner, run_tasks):
    evalset = make_evalset()
    journal(evalset, timezone.now() - dt.timedelta(hours=3), passed=10)
    proposal = propose(
        owner,
        evalset,
        created_at=timezone.now() - dt.timedelta(hours=2),
        checkpoints=[{"after_grains": 2}],
    )
    services.apply_proposal(proposal=proposal)
    journal(evalset, timezone.now(), passed=10)
    run_tasks()
    assert not OutcomeResult.objects.exists()

    push_outside_loopweb(owner)
    assert queued(tasks.verify_after_push) == 1
    run_tasks()
    assert not OutcomeResult.objects.exists()

    push_outside_loopweb(owner)
    run_tasks()
    assert OutcomeResult.objects.get().checkpoint == {"after_grains": 2}


def test_a_run_pushed_before_the_apply_is_no_grain_of_it(owner):
    # An after_grains checkpoint counts by the rule after_runs counts by: what the server had
    # recorded at or after the apply.
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(
        owner,
        evalset,
        created_at=timezone.now() - dt.timedelta(minutes=1),
        checkpoints=[{"after_grains": 1}],
    )
    push_outside_loopweb(owner)
    services.apply_proposal(proposal=proposal)
    journal(evalset, timezone.now(), passed=10)
    assert [step.state for step in selectors.timeline(proposal)] == ["waiting"]
    assert verify(proposal) == []
    push_outside_loopweb(owner)
    assert [step.state for step in selectors.timeline(proposal)] == ["due"]
    assert len(verify(proposal)) == 1


def test_a_re_push_is_not_a_grain(owner, run_tasks):
    evalset = make_evalset()
    journal(evalset, timezone.now() - dt.timedelta(hours=3), passed=10)
    proposal = propose(
        owner,
        evalset,
        created_at=timezone.now() - dt.timedelta(hours=2),
        checkpoints=[{"after_grains": 1}],
    )
    services.apply_proposal(proposal=proposal)
    run = push_outside_loopweb(owner)
    run_tasks()
    run_services.repush_run(run=run, outcome="completed", record={}, finished_at=timezone.now())
    assert queued(tasks.verify_after_push) == 0


def test_a_push_enqueues_nothing_when_no_proposal_waits_on_grains(owner):
    baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    push_outside_loopweb(owner)
    assert queued(tasks.verify_after_push) == 0


def test_the_push_task_is_stored_with_the_push_and_rolls_back_with_it(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_grains": 1}])
    apply(proposal, t(110))
    with pytest.raises(RuntimeError), transaction.atomic():
        push_outside_loopweb(owner)
        assert queued(tasks.verify_after_push) == 1
        raise RuntimeError("the push fails after the signal")
    assert queued(tasks.verify_after_push) == 0


def test_an_apply_queues_a_measurement_now_and_one_at_each_time_checkpoint(owner):
    _, proposal = baseline_and_proposal(
        owner, checkpoints=[{"after_runs": 0}, 60_000, {"after_ms": 120_000}]
    )
    apply(proposal, t(110))
    moments = sorted(
        DBTaskResult.objects.filter(task_path=tasks.verify_proposal.module_path).values_list(
            "run_after", flat=True
        )
    )
    assert moments == [t(111), t(112), get_date_max()]  # the last one runs right away


def test_the_periodic_sweep_measures_time_checkpoints_that_came_due(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_ms": 1000}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    assert services.verify_open(now=t(110)) == 0
    call_command("verify_gate")
    assert OutcomeResult.objects.filter(proposal=proposal).count() == 1


def test_the_periodic_task_sweeps_too(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_ms": 1000}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    assert tasks.verify_gate.call() == 1


def a_proposal_that_raises(monkeypatch, broken: Proposal, error: Exception) -> None:
    measure = services.verify_proposal

    def verify_proposal(*, proposal_id, now=None):
        if proposal_id == broken.pk:
            raise error
        return measure(proposal_id=proposal_id, now=now)

    monkeypatch.setattr(services, "verify_proposal", verify_proposal)


def test_a_proposal_that_cannot_be_measured_holds_up_no_other(owner, monkeypatch, caplog):
    # The sweep goes in id order: the first proposal failing every time must not starve the rest.
    evalset, first = baseline_and_proposal(owner, checkpoints=[{"after_ms": 1000}])
    second = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_ms": 1000}])
    apply(first, t(110))
    apply(second, t(111))
    journal(evalset, t(120), passed=10)
    a_proposal_that_raises(monkeypatch, first, ValueError("a policy it cannot read"))
    with pytest.raises(ExceptionGroup) as failed:
        services.verify_open()
    assert OutcomeResult.objects.filter(proposal=second).count() == 1
    assert not OutcomeResult.objects.filter(proposal=first).exists()
    assert [str(e) for e in failed.value.exceptions] == ["a policy it cannot read"]
    assert f"proposal {first.pk} could not be measured" in caplog.text
    # The command says so and fails; the chore's worker logs it and runs it again when due.
    with pytest.raises(CommandError, match=f"proposal {first.pk}"):
        call_command("verify_gate")

    # Repeating, the command says so and sweeps again (its pause is where this test ends it).
    class Paused(Exception):
        pass

    def pause(seconds):
        raise Paused(seconds)

    monkeypatch.setattr("loopweb.runs.management.repeating.time.sleep", pause)
    errors = io.StringIO()
    with pytest.raises(Paused):
        call_command("verify_gate", "--every", "5", stderr=errors)
    assert f"proposal {first.pk} could not be measured" in errors.getvalue()


def test_a_lost_database_ends_the_sweep_at_once(owner, monkeypatch):
    evalset, first = baseline_and_proposal(owner, checkpoints=[{"after_ms": 1000}])
    second = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_ms": 1000}])
    apply(first, t(110))
    apply(second, t(111))
    journal(evalset, t(120), passed=10)
    lost = InterfaceError("connection already closed")
    a_proposal_that_raises(monkeypatch, first, lost)
    with pytest.raises(InterfaceError) as raised:
        services.verify_open()
    assert raised.value is lost  # as the worker's wait for the database recognises it
    assert not OutcomeResult.objects.exists()


def test_the_command_refuses_a_negative_interval(db):
    with pytest.raises(CommandError):
        call_command("verify_gate", "--every", "-1")


def test_each_checkpoint_is_recorded_once_and_the_proposal_closes_when_all_are(owner):
    evalset, proposal = baseline_and_proposal(
        owner, checkpoints=[{"after_runs": 1}, {"after_runs": 2}]
    )
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    assert len(verify(proposal)) == 1
    assert verify(proposal) == []
    journal(evalset, t(130), passed=10)
    assert len(verify(proposal)) == 1
    assert OutcomeResult.objects.filter(proposal=proposal).count() == 2
    proposal.refresh_from_db()
    assert proposal.verify_complete
    assert verify(proposal) == []


def test_a_measured_proposal_closes_with_the_outcome_measured(owner, owner_api):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    verify(proposal)
    proposal.refresh_from_db()
    assert (proposal.verify_complete, proposal.gate_outcome) == (True, "measured")
    body = owner_api.get(f"/api/proposals/{proposal.pk}/outcomes").data
    assert (body["gate"], body["gate_outcome"]) == ("complete", "measured")


#: A schedule over an hour after the apply at t(110), with a run at t(120): over at t(170).
AN_HOUR = [{"after_runs": 1}, 3_600_000]


def no_baseline_run(owner, evalset):
    return propose(owner, evalset, created_at=t(100), checkpoints=AN_HOUR)


def forward_dated_baseline(owner, evalset):
    """The one run recorded before the proposal was created, dated (by its client, within the
    clock's skew) after the apply: a baseline candidate, but not before the apply."""
    run = journal(evalset, t(200), passed=10)
    EvalsetRun.objects.filter(pk=run.pk).update(recorded_at=t(50))
    return propose(owner, evalset, created_at=t(100), checkpoints=AN_HOUR)


def unreadable_baseline(owner, evalset):
    """The newest run before the apply lacks the field: ``newest_before_apply`` has no value."""
    journal(evalset, t(0), passed=10)
    return propose(owner, evalset, created_at=t(100), field="accuracy", checkpoints=AN_HOUR)


@pytest.mark.parametrize(
    ("make", "outcome", "gate", "skipped"),
    [
        (no_baseline_run, "no_baseline", "skipped", "no_baseline_run"),
        # A baseline run, but no baseline value: the candidates and the apply are fixed, so no
        # later run gives it one, and it is closed as well, not swept for ever.
        (forward_dated_baseline, "unmeasurable", "complete", None),
        (unreadable_baseline, "unmeasurable", "complete", None),
    ],
)
def test_an_applied_proposal_that_can_never_be_measured_closes_once_its_schedule_is_over(
    owner, owner_api, make, outcome, gate, skipped
):
    evalset = make_evalset()
    proposal = make(owner, evalset)
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10, accuracy=0.5)
    assert verify(proposal, now=t(130)) == []  # the hour is not over: it stays open
    proposal.refresh_from_db()
    assert (proposal.verify_complete, proposal.gate_outcome) == (False, "")
    assert verify(proposal, now=t(170)) == []
    proposal.refresh_from_db()
    assert (proposal.verify_complete, proposal.gate_outcome) == (True, outcome)
    assert proposal.closed_at == t(170)
    assert not OutcomeResult.objects.exists()
    body = owner_api.get(f"/api/proposals/{proposal.pk}/outcomes").data
    assert (body["gate"], body["skipped"], body["gate_outcome"]) == (gate, skipped, outcome)
    assert owner_api.get(f"/api/proposals/{proposal.pk}/").data["gate_outcome"] == outcome
    assert services.verify_open(now=t(200)) == 0
    assert not Proposal.objects.filter(GATE_OPEN).exists()


def test_a_closed_no_baseline_proposal_leaves_the_sweep(owner, django_assert_max_num_queries):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[60_000])
    apply(proposal, t(110))
    services.verify_open(now=t(120))
    assert not Proposal.objects.filter(pk=proposal.pk, verify_complete=False).exists()
    with django_assert_max_num_queries(1):
        assert services.verify_open(now=t(130)) == 0


def test_an_unapplied_proposal_with_no_baseline_stays_open(owner):
    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[60_000])
    assert verify(proposal, now=t(500)) == []
    proposal.refresh_from_db()
    assert (proposal.verify_complete, proposal.gate_outcome) == (False, "")


def test_checkpoints_that_come_due_together_share_one_measurement(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[1000, 2000, {"after_runs": 1}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    results = verify(proposal, now=t(200))
    assert [r.checkpoint for r in results] == [
        {"after_ms": 1000},
        {"after_ms": 2000},
        {"after_runs": 1},
    ]
    assert len({r.current_run_id for r in results}) == 1


@pytest.mark.parametrize(
    ("authored_by", "applicable"), [("human", True), ("llm", False), ("human", False)]
)
def test_proposals_the_gate_skips_are_never_measured(owner, authored_by, applicable):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    skipped = propose(
        owner,
        evalset,
        created_at=t(100),
        authored_by=authored_by,
        applicable=applicable,
        checkpoints=[{"after_runs": 1}],
    )
    apply(skipped, t(110))
    journal(evalset, t(120), passed=1)
    assert verify(skipped) == []
    assert services.verify_open() == 0
    assert not OutcomeResult.objects.exists()


def test_an_unapplied_proposal_is_not_measured(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 0}])
    journal(evalset, t(120), passed=10)
    assert verify(proposal) == []


def test_a_second_apply_is_a_conflict(owner):
    _, proposal = baseline_and_proposal(owner)
    apply(proposal, t(110))
    from loopweb.runs.errors import Conflict

    with pytest.raises(Conflict):
        apply(Proposal.objects.get(pk=proposal.pk), t(111))


def test_the_database_records_a_checkpoint_at_most_once(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    (result,) = verify(proposal)
    result.pk = None
    with pytest.raises(IntegrityError), transaction.atomic():
        result.save()


@pytest.mark.postgres  # adds a constraint inside the test's transaction
def test_an_integrity_error_is_raised_never_read_as_a_checkpoint_recorded_already(owner):
    evalset, proposal = baseline_and_proposal(owner, checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=10)
    # Some constraint other than "one result per checkpoint" refuses the result.
    with connection.cursor() as cursor:
        cursor.execute(
            "ALTER TABLE evalsets_outcomeresult ADD CONSTRAINT refuse_every_result CHECK (false)"
        )
    with pytest.raises(IntegrityError, match="refuse_every_result"):
        verify(proposal)
    assert not OutcomeResult.objects.exists()


def test_journal_run_is_the_service_the_ladders_app_calls(owner):
    evalset = make_evalset()
    with transaction.atomic():  # the caller's transaction
        run = services.journal_run(
            evalset=evalset, summary={"passed": 3, "failed": 1, "usd_micros": 5}
        )
    assert run.summary == {"passed": 3, "failed": 1, "usd_micros": 5}
    assert run.journaled_at <= timezone.now()
    assert queued(tasks.verify_evalset) == 1
