"""Slots of a board whose next job waits on a provider budget at its cap, as the board and the
slot panel say it (``loopweb.runs.budgeting.waiting_jobs``). Waiting is not a problem: it never
makes a board read Needs attention."""

from dataclasses import dataclass, field

from ladders.origins import dispatch_prefix, split
from loopweb.runs.budgeting import WaitingJob, waiting_jobs

#: Slots named under a budget on the board; the rest are counted.
NAMED = 8


@dataclass
class BudgetWait:
    budget: str
    figures: str
    slots: list[str] = field(default_factory=list)
    count: int = 0

    @property
    def more(self) -> int:
        return self.count - len(self.slots)


def budget_label(job: WaitingJob) -> str:
    budget = job.budget
    return (
        f"{budget.provider} ({budget.model})"
        if budget.model
        else f"{budget.provider} (every model)"
    )


def figures_text(job: WaitingJob) -> str:
    f = job.figures
    parts = []
    if f.in_flight_cap is not None:
        parts.append(f"{f.in_flight} of {f.in_flight_cap} in flight")
    if f.per_minute_cap is not None:
        parts.append(f"{f.started_last_minute} of {f.per_minute_cap} started in the last minute")
    if f.factor < 1:
        parts.append("backed off after a rate limit")
    return ", ".join(parts)


def board_waits(ladder_id: int, progress: dict) -> list[BudgetWait]:
    """The running dispatch's waiting slots, by budget."""
    dispatch = progress.get("dispatch")
    if not dispatch or progress["ladder"].get("status") not in ("running", "needsAttention"):
        return []
    jobs = waiting_jobs(dispatch_prefix(ladder_id, dispatch["id"]))
    if not jobs:
        return []
    numbers = {r["id"]: i + 1 for i, r in enumerate(dispatch["rungs"])}
    names = {
        (
            slot["rung"],
            slot.get("cellKey"),
        ): f"{climber['label']} on rung {numbers.get(slot['rung'], '?')}"
        for climber in progress["climbers"]
        for slot in climber["slots"]
    }
    waits: dict[int, BudgetWait] = {}
    seen = set()
    for job in jobs:
        rung = split(job.origin)[1]
        if (rung, job.cell_key) in seen:
            continue
        seen.add((rung, job.cell_key))
        wait = waits.setdefault(job.budget.pk, BudgetWait(budget_label(job), figures_text(job)))
        wait.count += 1
        if len(wait.slots) < NAMED:
            wait.slots.append(names.get((rung, job.cell_key), job.cell_key))
    return list(waits.values())


def slot_wait(origin: str, cell_key: str) -> str:
    """What the slot panel says of a slot whose job waits on a budget ("" when none does)."""
    for job in waiting_jobs(origin):
        if job.origin == origin and job.cell_key == cell_key:
            return f"Waiting for the {budget_label(job)} budget: {figures_text(job)}."
    return ""
