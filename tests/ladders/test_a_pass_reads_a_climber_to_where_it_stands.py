"""A launch pass evaluates each climber only as far as it stands (``evaluate(whole=False)``): a
climber stopped on a rung it has neither passed nor failed has no slots after it in the pass's
standing, pending every one, and everything else the pass reads is the whole standing's."""

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from ladders.gate import Gate
from ladders.standing import ClimberInput, Evidence, Failure, RungSnap, SlotRun, evaluate
from ladders.statuses import BLOCKED, PENDING, RUNNING
from loopweb.runs.cells import CasePin, CombinationCell, cell_key

NOON = dt.datetime(2030, 1, 1, 12, tzinfo=dt.UTC)
RUNGS = [RungSnap(f"r_{i}", CasePin(f"step-{i}", "1", "default"), 2) for i in range(4)]
CELLS = [CombinationCell("aider", f"m{i}", "acme") for i in range(3)]
RATINGS = [None, "flawless", "great", "passable", "scuffed", "broken"]
OUTCOMES = ["completed", "completed", "completed", "infrastructure", "timeout"]

slot_runs = st.lists(
    st.tuples(st.sampled_from(OUTCOMES), st.sampled_from(RATINGS), st.booleans()), max_size=3
)


@st.composite
def boards(draw):
    """Climbers of random cells, verdicts and problems, over random runs, jobs in flight and
    exhausted failures."""
    runs, in_flight, launched, failures = {}, {}, {}, {}
    next_id = 1
    for cell in CELLS:
        for rung in RUNGS:
            key = cell_key(rung.pin, cell)
            made = []
            for outcome, rating, loaded in draw(slot_runs):
                made.append(SlotRun(next_id, outcome, rating, loaded, False))
                next_id += 1
            runs[key] = made
            in_flight[key] = draw(st.integers(0, 2))
            launched[(rung.id, key)] = draw(st.integers(0, in_flight[key]))
            if draw(st.booleans()):
                failures[(rung.id, key)] = [Failure(NOON, draw(st.integers(1, 3)))]
    climbers = [
        ClimberInput(
            combination_key=f"aider|m{i}|acme",
            label=f"m{i}",
            pinned=draw(st.sampled_from([None, CELLS[i]])),
            live=draw(st.sampled_from([None, CELLS[i], CELLS[(i + 1) % 3]])),
            problem=draw(st.sampled_from([None, "its model is not launchable"])),
            verdicts={
                rung.id: verdict
                for rung in RUNGS
                if (verdict := draw(st.sampled_from([None, "passed", "failed"])))
            },
            retried_at=draw(st.sampled_from([None, NOON - dt.timedelta(hours=1)])),
        )
        for i in range(3)
    ]
    gate = Gate(count=draw(st.integers(1, 2)), early_stop=draw(st.booleans()))
    evidence = Evidence(
        runs=runs, cell_in_flight=in_flight, launched_in_flight=launched, failures=failures
    )
    return climbers, gate, evidence


@settings(max_examples=300, deadline=None)
@given(boards(), st.booleans())
def test_a_passs_standing_is_the_whole_one_up_to_where_each_climber_stands(board, running):
    climbers, gate, evidence = board
    common = {"rungs": RUNGS, "climbers": climbers, "gate": gate, "evidence": evidence}
    whole = evaluate(**common, running=running)
    passed = evaluate(**common, running=running, whole=False)

    assert passed.launched_in_flight == whole.launched_in_flight
    assert passed.settled == whole.settled
    for short, full in zip(passed.climbers, whole.climbers, strict=True):
        kept = len(short.slots)
        assert short.slots == full.slots[:kept]
        if kept < len(full.slots):
            assert running and full.status in (RUNNING, BLOCKED)
            assert {slot.status for slot in full.slots[kept:]} == {PENDING}
        short.slots = full.slots
        assert short == full  # status, reasons, current rung, tally, missing, new verdicts, …
