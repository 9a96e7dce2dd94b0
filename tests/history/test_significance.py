"""How sure a compare is (API.md "Significance"): each climber's verdict from Fisher's exact test
over the rungs between its two heights, Holm-adjusted across the climbers whose height changed;
McNemar's exact test over the flipped slots; per-rung evidence; the differences between the two
configurations; ``?alpha=``; the CSV; a Wilson interval for every slot's pass rate."""

import csv
import io

import pytest

from ladders import services
from ladders.models import Ladder
from tests.factories import CaseVersionFactory
from tests.history.helpers import PAID, PAID_BROKEN, history, record
from tests.ladders.builders import climbers, config, make_ladder, rung, versions, work


def compare(api, ladder, a, b, **params):
    response = api.get(f"/api/ladders/{ladder.pk}/compare", {"a": a, "b": b, **params})
    assert response.status_code == 200, response.content
    return response.json()


def failing_then_passing(owner, owner_api, driver, run_tasks, runs: int):
    """One rung, ``runs`` runs a rung: the climber fails every run in record A; then the rung
    pins the case's next version (new runs, the same rung position) and it passes every run in
    record B."""
    [step] = versions(1)
    [m1] = climbers(1)
    ladder = make_ladder(owner, [step], [m1], runsPerCell=runs)
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID_BROKEN)
    newer = CaseVersionFactory(case=step.case, version="2")
    data = config(rungs=[rung(newer)], combinations=[m1.pk], runsPerCell=runs)
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    b, a = history(owner_api, ladder)["results"]
    return ladder, a["id"], b["id"]


def test_0_of_5_then_5_of_5_compares_up_with_p_0_0079(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=5)
    body = compare(owner_api, ladder, a, b)
    [row] = body["climbers"]
    assert row["change"] == "up"
    assert row["significance"] == {
        "verdict": "up",
        "pValue": pytest.approx(2 / 252),
        "adjustedP": pytest.approx(2 / 252),
    }
    [evidence] = row["evidence"]
    assert evidence["rung"] == 1
    assert evidence["pValue"] == pytest.approx(0.0079, abs=5e-5)
    assert (evidence["a"]["passed"], evidence["a"]["counted"]) == (0, 5)
    assert (evidence["b"]["passed"], evidence["b"]["counted"]) == (5, 5)
    # Wilson 95 %: 0 of 5 is 0–43 %, 5 of 5 is 57–100 %.
    assert evidence["a"] == {"passed": 0, "counted": 5, "low": 0.0, "high": 0.4345}
    assert evidence["b"] == {"passed": 5, "counted": 5, "low": 0.5655, "high": 1.0}
    significance = body["significance"]
    assert significance["alpha"] == 0.05
    assert (significance["test"], significance["correction"]) == ("fisher_exact", "holm")
    # One slot flipped failed → passed: McNemar's exact test of 1 of 1 is 1.
    assert significance["flips"] == {"up": 1, "down": 0}
    assert significance["pValue"] == 1.0
    assert significance["power"]["runsPerRung"] == 49
    assert body["configurationDiffers"] == [
        {
            "what": "rungs.1",
            "a": {"case": "step-1", "version": "1", "variant": "default", "engine": None},
            "b": {"case": "step-1", "version": "2", "variant": "default", "engine": None},
        }
    ]


def test_the_same_change_with_one_run_per_rung_is_inconclusive(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=1)
    body = compare(owner_api, ladder, a, b)
    [row] = body["climbers"]
    assert row["change"] == "up"  # the raw heights, as before
    assert row["significance"] == {"verdict": "inconclusive", "pValue": 1.0, "adjustedP": 1.0}
    assert body["changes"]["up"] == 1
    assert body["verdicts"] == {
        "up": 0,
        "down": 0,
        "same": 0,
        "inconclusive": 1,
        "new": 0,
        "gone": 0,
    }


def test_a_stricter_alpha_makes_the_change_inconclusive(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=5)
    body = compare(owner_api, ladder, a, b, alpha="0.001")
    assert body["significance"]["alpha"] == 0.001
    assert body["climbers"][0]["significance"]["verdict"] == "inconclusive"


def test_a_record_against_itself_is_same_with_no_p_value(owner, owner_api, driver, run_tasks):
    ladder, a, _ = failing_then_passing(owner, owner_api, driver, run_tasks, runs=1)
    body = compare(owner_api, ladder, a, a)
    [row] = body["climbers"]
    assert row["significance"] == {"verdict": "same", "pValue": None, "adjustedP": None}
    assert body["configurationDiffers"] == []
    assert body["significance"]["flips"] == {"up": 0, "down": 0}


@pytest.mark.parametrize("alpha", ["abc", "0", "0.5", "1", "-0.05", "nan", "inf", "", "1e400"])
def test_a_bad_alpha_is_a_400_naming_it(owner, owner_api, alpha):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    response = owner_api.get(
        f"/api/ladders/{ladder.pk}/compare", {"a": "current", "b": "current", "alpha": alpha}
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == ["alpha"]
    assert "between 0 and 0.5" in errors["alpha"][0]


def test_the_configuration_differences_are_named(owner, owner_api, driver, run_tasks):
    steps = versions(2)
    [m1, m2] = climbers(2)
    ladder = make_ladder(owner, steps, [m1])
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    data = config(
        rungs=[rung(steps[0])],
        combinations=[m1.pk, m2.pk],
        runsPerCell=3,
        retryCount=2,
        outerAxis="climber",
        gate={"floor": "passable", "threshold": {"count": 2}},
    )
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    b, a = history(owner_api, ladder)["results"]
    body = compare(owner_api, ladder, a["id"], b["id"])
    differs = {d["what"]: (d["a"], d["b"]) for d in body["configurationDiffers"]}
    assert differs["rungs"] == (2, 1)
    assert differs["runsPerRung"] == (1, 3)
    assert differs["gate.floor"] == ("scuffed", "passable")
    assert differs["gate.threshold"] == ({"count": 1}, {"count": 2})
    assert differs["retryCount"] == (1, 2)
    assert differs["outerAxis"] == ("rung", "climber")
    assert differs["climbers"] == ([], [m2.key])


def test_the_compare_csv_carries_the_significance(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=5)
    response = owner_api.get(f"/api/ladders/{ladder.pk}/compare", {"a": a, "b": b, "format": "csv"})
    [row] = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert row["change"] == "up"
    assert row["verdict"] == "up"
    assert float(row["p_value"]) == pytest.approx(0.0079, abs=5e-5)
    assert float(row["adjusted_p"]) == pytest.approx(0.0079, abs=5e-5)
    assert row["evidence"] == "1:0/5>5/5"


def test_a_record_s_slots_carry_their_pass_rate(owner, owner_api, driver, run_tasks):
    ladder, a, _ = failing_then_passing(owner, owner_api, driver, run_tasks, runs=5)
    [climber] = record(owner_api, ladder, a)["climbers"]
    [slot] = climber["slots"]
    assert slot["passRate"] == {
        "passed": 0,
        "counted": 5,
        "low": 0.0,
        "high": 0.4345,
    }
    response = owner_api.get(f"/api/ladders/{ladder.pk}/history/{a}", {"format": "csv"})
    [row] = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert (row["pass_rate_low"], row["pass_rate_high"]) == ("0.0", "0.4345")


def test_progress_slots_carry_their_pass_rate(owner, owner_api, driver, run_tasks):
    steps = versions(2)
    ladder = make_ladder(owner, steps, climbers(1), runsPerCell=3)
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    body = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    [climber] = body["climbers"]
    rates = [slot["passRate"] for slot in climber["slots"]]
    assert [(r["passed"], r["counted"]) for r in rates] == [(3, 3), (3, 3)]
    assert rates[0]["low"] == pytest.approx(0.4385, abs=5e-5)
    assert rates[0]["high"] == 1.0


def test_a_slot_with_nothing_counted_has_no_pass_rate(owner, owner_api):
    ladder = make_ladder(owner, versions(2), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    body = owner_api.get(f"/api/ladders/{ladder.pk}/progress").json()
    assert [s["passRate"] for s in body["climbers"][0]["slots"]] == [None, None]


def test_the_power_hint_plans_for_the_change_asked(owner, owner_api, driver, run_tasks):
    ladder, a, b = failing_then_passing(owner, owner_api, driver, run_tasks, runs=1)
    power = compare(owner_api, ladder, a, b, change="50")["significance"]["power"]
    assert (power["change"], power["runsPerRung"]) == (0.5, 19)
    assert power["fewestRunsPerRung"] == {"a": 1, "b": 1}


@pytest.mark.parametrize("change", ["0", "101", "x", "-5", "nan"])
def test_a_bad_change_is_a_400_naming_it(owner, owner_api, change):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    response = owner_api.get(
        f"/api/ladders/{ladder.pk}/compare", {"a": "current", "b": "current", "change": change}
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == ["change"]
    assert "between 1 and 100" in errors["change"][0]
