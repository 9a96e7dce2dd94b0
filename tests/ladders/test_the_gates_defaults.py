"""The gate's defaults are written once (``ladders.gate``): a ladder saved without a gate, a gate
given in part, the engine's reading and the console's editor all fill in the same values."""

from ladders import gate
from ladders.inputs import GateSerializer
from ladders.models import default_gate
from loopweb.console.forms import EditorState


def test_a_ladder_saved_without_a_gate_gets_the_gates_defaults():
    assert default_gate() == gate.defaults()
    assert gate.defaults() == {
        "floor": "scuffed",
        "threshold": {"count": 1},
        "unloadedCountsAsBroken": True,
        "earlyStop": False,
    }


def test_the_api_fills_in_what_a_gate_leaves_out_with_the_same_defaults():
    given = GateSerializer(data={})
    assert given.is_valid(), given.errors
    assert dict(given.validated_data) == gate.defaults()


def test_the_engine_reads_a_partial_gate_with_the_same_defaults():
    assert gate.Gate.from_json({}) == gate.Gate()
    assert gate.Gate.from_json({"floor": "great"}) == gate.Gate(floor="great")
    assert gate.completed({"threshold": None})["threshold"] == {"count": 1}


def test_the_editor_starts_from_the_same_defaults_and_never_changes_them():
    state = EditorState.from_config(
        {
            "name": "l",
            "rungs": [],
            "groups": [],
            "combinations": [],
            "gate": {},
            "runsPerCell": 1,
            "runsInFlightLimit": None,
            "retryCount": 1,
            "outerAxis": "rung",
            "reviewers": [],
        }
    )
    assert (state.floor, state.threshold_count, state.unloaded, state.early_stop) == (
        "scuffed",
        "1",
        True,
        False,
    )
    assert EditorState().to_api()["gate"] == gate.defaults()
    assert gate.DEFAULT_THRESHOLD == {"count": 1}
