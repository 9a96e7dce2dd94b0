"""Two ladders of two owners whose rungs read one cell, their passes racing.

A job someone else queued for a cell holds the slot's place (seed 004, "A rung slot's runs"):
run one after the other, the second pass sees the first one's job in flight and launches
nothing. Run at the same moment, each pass used to read the cell before the other's job was
committed, and both launched: a double launch the per-ladder claim cannot prevent. A pass now
locks the cells it is about to launch into and re-reads their room under the locks.
"""

import pytest

from ladders import services
from loopweb.runs.models import Job
from tests.factories import UserFactory
from tests.ladders.builders import climbers, make_ladder, versions
from tests.support.threads import succeeded, together

# PostgreSQL: passes racing on the advisory locks of the cells they launch into.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("stress"),
    pytest.mark.postgres,
]

TRIALS = 12


def race(*ladders) -> None:
    """The ladders' launch passes, started at the same moment."""
    launch = services.run_launch_pass
    succeeded(together(len(ladders), lambda i: launch(ladder_id=ladders[i].pk), timeout=30))


def test_two_ladders_racing_on_one_cell_launch_it_once(owner):
    other = UserFactory(username="oscar", role="owner")
    doubled = []
    for trial in range(TRIALS):
        [step] = versions(1, prefix=f"shared{trial}")
        combos = climbers(1, prefix=f"m{trial}x")
        first = make_ladder(owner, [step], combos)
        second = make_ladder(other, [step], combos)
        services.start_dispatch(ladder=first, run_pass=False)
        services.start_dispatch(ladder=second, run_pass=False)

        race(first, second)

        launched = Job.objects.filter(case=step.case.slug).count()
        if launched != 1:
            doubled.append((trial, launched))
    assert not doubled, f"(trial, jobs) launched for a cell both slots need once: {doubled}"


def test_passes_sharing_cells_in_opposite_orders_do_not_deadlock(owner):
    """Each pass locks its cells in one global order, whatever its rung order."""
    other = UserFactory(username="oscar", role="owner")
    steps = versions(3, prefix="cross")
    combos = climbers(2, prefix="x")
    ladders = []
    for i in range(4):
        rungs = steps if i % 2 else list(reversed(steps))
        ladder = make_ladder(owner if i < 2 else other, rungs, combos if i % 2 else combos[::-1])
        services.start_dispatch(ladder=ladder, run_pass=False)
        ladders.append(ladder)

    race(*ladders)

    # Each cell of the first rungs is launched once, whichever ladder got there first.
    cells = Job.objects.values_list("cell_key", flat=True)
    assert len(cells) == len(set(cells))
