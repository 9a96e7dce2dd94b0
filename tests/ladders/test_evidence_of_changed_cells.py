"""A board whose cells changed replaces the evidence of those cells alone
(``ladders.standing.Evidence.replaced``): pure, no database."""

from datetime import UTC, datetime

from ladders.standing import Evidence, Failure, SlotRun

AT = datetime(2026, 12, 3, tzinfo=UTC)


def run(i: int) -> SlotRun:
    return SlotRun(i, "completed", "pass", True, False)


def test_the_changed_cells_evidence_is_the_fresh_read_and_the_rest_is_kept():
    kept = Evidence(
        runs={"a": [run(1)], "b": [run(2)], "c": [run(3)]},
        cell_in_flight={"a": 1, "b": 2},
        launched_in_flight={("r1", "a"): 1, ("r1", "b"): 2},
        failures={("r1", "b"): [Failure(AT, 1)], ("r2", "c"): [Failure(AT, 2)]},
        last_launch={("r1", "b"): AT},
    )
    # The fresh read of cells b and c: b has a run more and nothing in flight, c has nothing.
    fresh = Evidence(runs={"b": [run(2), run(4)]}, failures={("r1", "b"): [Failure(AT, 3)]})

    now = kept.replaced({"b", "c"}, fresh)

    assert now.runs == {"a": [run(1)], "b": [run(2), run(4)]}
    assert now.cell_in_flight == {"a": 1}
    assert now.launched_in_flight == {("r1", "a"): 1}
    assert now.failures == {("r1", "b"): [Failure(AT, 3)]}
    assert now.last_launch == {}
    assert kept.runs["b"] == [run(2)]  # the evidence replaced is left as it was
