"""Compare any two records, or the running dispatch with the last record: each climber's height
in both and which way it moved (up, down, same, new, gone), the slots whose verdict flipped, and
the cost differences."""

import pytest

from ladders import services
from ladders.models import Ladder
from tests.history.helpers import PAID, PAID_BROKEN, compare, history
from tests.ladders.builders import climbers, config, make_ladder, rung, versions, work


def outcomes(table):
    """A driver result by (model, case): PAID unless the table says PAID_BROKEN."""

    def result(job):
        return PAID_BROKEN if (job.combination.model, job.case) in table else PAID

    return result


@pytest.fixture
def two_records(owner, owner_api, driver, run_tasks):
    """Record 1: up (m1 fails rung 1), down (m2 passes all), same (m3 fails rung 2), gone (m4).
    Record 2: m1 passes all, m2 fails rung 2, m3 fails rung 2 again, m5 new."""
    steps = versions(3)
    m1, m2, m3, m4, m5 = climbers(5)
    ladder = make_ladder(owner, steps, [m1, m2, m3, m4])
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, outcomes({("m1", "step-1"), ("m3", "step-2"), ("m4", "step-3")}))
    data = config(rungs=[rung(v) for v in steps], combinations=[m1.pk, m2.pk, m3.pk, m5.pk])
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    # New runs are needed: the same cells would read the same runs, so raise the targets (and
    # the bar with them).
    data["runsPerCell"] = 3
    data["gate"]["threshold"] = {"count": 2}
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, outcomes({("m2", "step-2"), ("m3", "step-2")}))
    newer, older = history(owner_api, ladder)["results"]
    return ladder, older, newer


def test_every_kind_of_difference(owner_api, two_records):
    ladder, older, newer = two_records
    body = compare(owner_api, ladder, older["id"], newer["id"])
    assert (body["a"]["id"], body["b"]["id"]) == (older["id"], newer["id"])
    rows = {c["key"].split("|")[1]: c for c in body["climbers"]}
    assert {m: (c["a"], c["b"], c["change"]) for m, c in rows.items()} == {
        "m1": ({"reached": 0, "status": "failed"}, {"reached": 3, "status": "completed"}, "up"),
        "m2": ({"reached": 3, "status": "completed"}, {"reached": 1, "status": "failed"}, "down"),
        "m3": ({"reached": 1, "status": "failed"}, {"reached": 1, "status": "failed"}, "same"),
        "m5": (None, {"reached": 3, "status": "completed"}, "new"),
        "m4": ({"reached": 2, "status": "failed"}, None, "gone"),
    }
    assert [c["key"].split("|")[1] for c in body["climbers"]] == ["m1", "m2", "m3", "m5", "m4"]
    assert body["changes"] == {"up": 1, "down": 1, "same": 1, "new": 1, "gone": 1}
    # A flip is a verdict changed: decided in both, passed one way and failed the other. A slot
    # decided in one record only (skipped or pending in the other) is listed apart. Each names
    # its climber by its label too.
    flips = {(f["climber"].split("|")[1], f["rungNumber"], f["a"], f["b"]) for f in body["flipped"]}
    assert flips == {("m1", 1, "failed", "passed"), ("m2", 2, "passed", "failed")}
    apart = {
        (f["climber"].split("|")[1], f["rungNumber"], f["a"], f["b"]) for f in body["decidedInOne"]
    }
    assert apart == {
        ("m1", 2, "skipped", "passed"),
        ("m1", 3, "skipped", "passed"),
        ("m2", 3, "passed", "skipped"),
    }
    assert {f["label"] for f in body["flipped"]} == {rows["m1"]["label"], rows["m2"]["label"]}
    # Costs: the second dispatch read the three runs of each cell m5 reached.
    m5 = rows["m5"]["totals"]
    assert m5["a"] is None and m5["difference"] is None
    assert m5["b"]["usdMicros"] == 9 * 1000
    diff = body["totals"]["difference"]
    assert diff["usdMicros"] == newer["totals"]["usdMicros"] - older["totals"]["usdMicros"]
    m3 = rows["m3"]["totals"]
    assert m3["difference"]["usdMicros"] == m3["b"]["usdMicros"] - m3["a"]["usdMicros"]


def test_the_same_record_against_itself_is_all_same(owner_api, two_records):
    ladder, older, _ = two_records
    body = compare(owner_api, ladder, older["id"], older["id"])
    assert {c["change"] for c in body["climbers"]} == {"same"}
    assert body["flipped"] == [] and body["decidedInOne"] == []
    assert set(body["totals"]["difference"].values()) == {0}


def test_the_running_dispatch_compares_live_with_the_last_record(
    owner, owner_api, driver, run_tasks
):
    steps = versions(2)
    [m1] = climbers(1)
    ladder = make_ladder(owner, steps, [m1])
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    [last] = history(owner_api, ladder)["results"]
    data = config(rungs=[rung(v) for v in steps], combinations=[m1.pk], runsPerCell=2)
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    services.start_dispatch(ladder=ladder, by=owner)
    body = compare(owner_api, ladder, last["id"], "current")
    assert body["b"]["status"] == "running"
    [row] = body["climbers"]
    assert (row["b"], row["change"]) == ({"reached": 0, "status": "running"}, "down")
    work(driver, run_tasks, PAID_BROKEN, rounds=1)  # rung 1's second run: still passes
    body = compare(owner_api, ladder, last["id"], "current")
    assert body["climbers"][0]["b"]["reached"] == 1
    # Only the run this dispatch launched (rung 1's second) costs it anything: rung 1's first
    # run and the run of rung 2 its slot reads now are from before, reused.
    assert body["totals"]["b"]["usdMicros"] == 700


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"b": "current"}, "a"),
        ({"a": "", "b": "current"}, "a"),
        ({"a": "current", "b": "x1"}, "b"),
        ({"a": "current", "b": "-1"}, "b"),
        ({"a": "current", "b": "99999999999999999999999"}, "b"),
        ({"a": "current", "b": "12345"}, "b"),
    ],
)
def test_a_bad_side_is_a_400_naming_it(owner, owner_api, params, field):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    response = owner_api.get(f"/api/ladders/{ladder.pk}/compare", params)
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]


def test_current_before_any_run_is_a_400(owner, owner_api):
    ladder = make_ladder(owner, versions(1), climbers(1))
    response = owner_api.get(f"/api/ladders/{ladder.pk}/compare?a=current&b=current")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"a", "b"}
