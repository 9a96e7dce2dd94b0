"""Building blocks for verify gate tests: a timeline in the past, written through the services."""

import datetime as dt

from django.utils import timezone

from evalsets import services
from evalsets.models import Evalset, EvalsetRun, Proposal

PINS = [
    {"case": "jump-1", "version": "3", "variant": "default", "engine": None},
    {"case": "run-2", "version": "1", "variant": "default", "engine": "godot"},
]

#: The start of every test's timeline, far enough back that nothing is "in the future".
T0 = (timezone.now() - dt.timedelta(days=90)).replace(microsecond=0)


def t(minutes: float) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def make_evalset(name: str = "core", pins=None, created_by=None) -> Evalset:
    evalset, _ = services.create_evalset(name=name, pins=pins or PINS, created_by=created_by)
    return evalset


def journal(evalset: Evalset, at: dt.datetime, passed: int, failed: int = 0, **extra) -> EvalsetRun:
    """Journal a run at ``at`` as the server would have recorded it then (``recorded_at``)."""
    run = services.journal_run(
        evalset=evalset, summary={"passed": passed, "failed": failed, **extra}, journaled_at=at
    )
    EvalsetRun.objects.filter(pk=run.pk).update(recorded_at=at)
    run.recorded_at = at
    return run


def journal_back_dated(
    evalset: Evalset, at: dt.datetime, passed: int, failed: int = 0, **extra
) -> EvalsetRun:
    """Journal a run now (the server records it now) with a client ``journaled_at`` of ``at``."""
    return services.journal_run(
        evalset=evalset, summary={"passed": passed, "failed": failed, **extra}, journaled_at=at
    )


def policy(evalset: Evalset, **overrides) -> dict:
    return {"hash": evalset.hash, "field": "passed", "higher_is_better": True, **overrides}


def propose(
    owner,
    evalset: Evalset,
    *,
    created_at: dt.datetime,
    authored_by: str = "llm",
    applicable: bool = True,
    title: str = "Retry flaky builds once",
    **overrides,
) -> Proposal:
    proposal = services.create_proposal(
        owner=owner,
        title=title,
        authored_by=authored_by,
        applicable=applicable,
        outcome_evalset=policy(evalset, **overrides),
    )
    # Back-date the creation so the whole timeline sits in the past.
    Proposal.objects.filter(pk=proposal.pk).update(created_at=created_at)
    proposal.created_at = created_at
    return proposal


def apply(proposal: Proposal, at: dt.datetime) -> Proposal:
    return services.apply_proposal(proposal=proposal, applied_at=at)


def verify(proposal: Proposal, now: dt.datetime | None = None):
    return services.verify_proposal(proposal_id=proposal.pk, now=now)


def regressed_and_costlier(owner) -> tuple[Proposal, Proposal]:
    """Two applied proposals measured against one evalset: the first regressed (a revert
    draft), the second held within its effect but past its cost bound (an advisory flag)."""
    evalset = make_evalset()
    journal(evalset, t(0), passed=10, usd_micros=1)
    regressed = propose(owner, evalset, created_at=t(100), checkpoints=[{"after_runs": 1}])
    costlier = propose(
        owner,
        evalset,
        created_at=t(100),
        checkpoints=[{"after_runs": 1}],
        min_effect={"count": 100},
        cost={"field": "usd", "max_increase_ratio": 1},
    )
    for proposal in (regressed, costlier):
        apply(proposal, t(110))
    journal(evalset, t(120), passed=1, usd_micros=5)
    verify(regressed)
    verify(costlier)
    return regressed, costlier
