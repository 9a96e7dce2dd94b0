"""An ended standing's document (``ladders.document``): its two stored parts make the whole again,
and every older form reads as version 2."""

from hypothesis import given
from hypothesis import strategies as st

from ladders import document

STATUSES = st.sampled_from(["passed", "failed", "skipped", "pending", "running", "blocked"])


def climber(key, statuses, status="completed"):
    return {
        "body": {
            "key": key,
            "label": key.upper(),
            "status": status,
            "blockedReason": "failing" if status == "blocked" else None,
            "problem": None,
            "attempts": 1,
            "currentRung": "r_0",
            "cellKey": None,
            "tally": None,
            "slots": [
                {"rung": f"r_{i}", "status": s, "cellKey": None, "tally": None, "passRate": None}
                for i, s in enumerate(statuses)
            ],
        },
        "runs": [[i] for i in range(len(statuses))],
        "completed": [[] for _ in statuses],
        "skippedByStop": 0,
    }


@given(st.lists(st.lists(STATUSES, min_size=1, max_size=5), max_size=4))
def test_a_documents_parts_make_its_climbers_again(slot_statuses):
    climbers = [climber(f"k{i}", s) for i, s in enumerate(slot_statuses)]
    head, bodies, slots = document.compose({"id": "d_1"}, climbers)
    assert head == {"schemaVersion": document.SCHEMA_VERSION, "dispatch": {"id": "d_1"}}
    assert document.entries(bodies, slots) == climbers
    whole = document.join(head, bodies, slots)
    for stored, given_ in zip(whole["climbers"], climbers, strict=True):
        assert stored["slots"] == given_["body"]["slots"]
        assert stored["reached"] == document.reached([s["status"] for s in stored["slots"]])


def test_how_high_a_climber_reached_stops_at_its_first_rung_not_passed():
    assert document.reached([]) == 0
    assert document.reached(["passed", "passed", "failed", "passed"]) == 2
    assert document.reached(["skipped", "passed"]) == 0


def test_a_version_1_standing_reads_a_climber_a_stop_caught_as_stopped():
    caught = climber("k", ["passed", "skipped"], status="blocked")
    del caught["skippedByStop"]  # frozen before they were counted
    head, bodies, slots = document.from_v1({"id": "d_1"}, [caught])
    [entry] = document.entries(bodies, slots)
    assert entry["body"]["status"] == "stopped"
    assert entry["body"]["blockedReason"] is None
    assert entry["skippedByStop"] is None
    assert bodies[0]["reached"] == 1


def test_a_record_before_the_document_reads_as_a_document_without_its_runs():
    head, bodies, slots = document.from_record(
        {"id": "d_1"},
        [
            {
                "key": "k",
                "label": "K",
                "status": "blocked",
                "blockedReason": "failing",
                "currentRung": "r_2",
                "reached": 1,
                "totals": {},
            }
        ],
        [[["passed", [1, 1, 0, 1, 0, 0, 1], None], ["skipped", None, None]]],
        ["r_1", "r_2"],
    )
    [light] = bodies
    assert (light["status"], light["blockedReason"], light["reached"]) == ("stopped", None, 1)
    [held] = slots
    assert held["runs"] == [[], []]
    assert held["slots"][0]["tally"]["passing"] == 1
    assert held["slots"][1] == {"rung": "r_2", "status": "skipped", "cellKey": None, "tally": None}
