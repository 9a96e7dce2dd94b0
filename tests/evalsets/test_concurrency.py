"""Measuring one checkpoint from two workers at once records it once (PostgreSQL, real threads)."""

import pytest

from evalsets import services
from evalsets.models import OutcomeResult, RevertDraft
from tests.evalsets.helpers import apply, journal, make_evalset, propose, t
from tests.support.threads import succeeded, together

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,  # needs concurrent writers
]

WORKERS = 4


def race(target, times: int) -> list:
    """Run ``target`` in ``times`` threads released together; return what each returned."""
    return succeeded(together(times, lambda index: target(), timeout=60))


@pytest.mark.parametrize("round_", range(3))
def test_evaluating_the_same_checkpoint_concurrently_records_it_once(owner, round_):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposal = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 1}])
    apply(proposal, t(110))
    journal(evalset, t(120), passed=2)

    outcomes = race(lambda: services.verify_proposal(proposal_id=proposal.pk), WORKERS)

    assert sum(len(o) for o in outcomes) == 1  # exactly one worker recorded it
    assert OutcomeResult.objects.filter(proposal=proposal).count() == 1
    assert RevertDraft.objects.filter(proposal=proposal).count() == 1


def test_the_sweep_and_proposal_tasks_racing_record_each_checkpoint_once(owner):
    evalset = make_evalset()
    journal(evalset, t(0), passed=10)
    proposals = [
        propose(owner, evalset, created_at=t(100), checkpoints=[1000, {"after_runs": 1}])
        for _ in range(3)
    ]
    for proposal in proposals:
        apply(proposal, t(110))
    journal(evalset, t(120), passed=10)

    race(lambda: services.verify_open(evalset_id=evalset.pk), WORKERS)

    assert OutcomeResult.objects.count() == 2 * len(proposals)


def test_two_concurrent_applies_apply_once_and_the_other_is_a_conflict(owner):
    from evalsets.models import Proposal
    from loopweb.runs.errors import Conflict

    evalset = make_evalset()
    proposal = propose(owner, evalset, created_at=t(100))

    def try_apply(minute):
        try:
            apply(Proposal.objects.get(pk=proposal.pk), t(minute))
        except Conflict:
            return "conflict"
        return minute

    barrier_minutes = iter(range(110, 110 + WORKERS))
    outcomes = race(lambda: try_apply(next(barrier_minutes)), WORKERS)
    assert outcomes.count("conflict") == WORKERS - 1
    (winner,) = [o for o in outcomes if o != "conflict"]
    proposal.refresh_from_db()
    assert proposal.applied_at == t(winner)
