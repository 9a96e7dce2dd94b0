"""Blind pairwise review through the API: the next pair, a judgement, and the results."""

import pytest

from loopweb.reviewing.models import PairwiseJudgement
from tests.reviewing.world import climbed, entries, rung_ids

pytestmark = pytest.mark.django_db


def judge(api, ladder, pair: dict, choice: str, *, expect: int = 201) -> dict:
    body = {
        "rung": pair["rung"],
        "left": pair["left"]["run"],
        "right": pair["right"]["run"],
        "choice": choice,
    }
    response = api.post(f"/api/ladders/{ladder.pk}/pairwise", body, format="json")
    assert response.status_code == expect, response.json()
    return response.json()


def next_pair(api, ladder, rung: str):
    response = api.get(f"/api/ladders/{ladder.pk}/pairwise/next", {"rung": rung})
    assert response.status_code in (200, 204), response.content
    return response.json() if response.status_code == 200 else None


def test_the_next_pair_is_two_runs_of_the_rung_by_two_climbers_with_no_climber_named(
    owner, reviewer, reviewer_api, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks)
    [rung] = rung_ids(ladder)
    climber_of = {e["run"]: e["climber"] for e in entries(ladder)}
    pair = next_pair(reviewer_api, ladder, rung)
    assert pair["rung"] == rung
    left, right = pair["left"]["run"], pair["right"]["run"]
    assert climber_of[left] != climber_of[right]
    # 3 climbers × 2 runs: 3 pairs of climbers × 4 pairs of runs.
    assert pair["remaining"] == 12
    text = str(pair)
    assert not any(key in text for key in set(climber_of.values()))
    assert "m1" not in text


def test_sides_are_drawn_at_random(owner, reviewer_api, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    [rung] = rung_ids(ladder)
    lefts = {next_pair(reviewer_api, ladder, rung)["left"]["run"] for _ in range(40)}
    assert len(lefts) == 2  # both runs were shown on the left (chance of failing: 2⁻³⁹)


def test_a_reviewer_judges_every_pair_once_and_then_none_is_left(
    owner, reviewer, reviewer_api, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=3, runs=1)
    [rung] = rung_ids(ladder)
    seen = set()
    while (pair := next_pair(reviewer_api, ladder, rung)) is not None:
        seen.add(frozenset((pair["left"]["run"], pair["right"]["run"])))
        made = judge(reviewer_api, ladder, pair, "left")
        assert made["reviewer"] == "rita" and made["choice"] == "left"
    assert len(seen) == 3
    again = {"rung": rung, "left": {"run": min(min(p) for p in seen)}}
    first = next(iter(seen))
    again = {"rung": rung, "left": {"run": max(first)}, "right": {"run": min(first)}}
    conflict = judge(reviewer_api, ladder, again, "tie", expect=409)
    assert conflict["code"] == "already_judged"
    assert PairwiseJudgement.objects.count() == 3


def test_a_judgement_stores_the_side_shown_left_and_the_climbers(
    owner, owner_api, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    [rung] = rung_ids(ladder)
    climber_of = {e["run"]: e["climber"] for e in entries(ladder)}
    pair = next_pair(owner_api, ladder, rung)
    judge(owner_api, ladder, pair, "right")
    [row] = PairwiseJudgement.objects.all()
    assert (row.left_id, row.right_id) == (pair["left"]["run"], pair["right"]["run"])
    assert row.right_climber == climber_of[row.right_id]
    assert row.winner == row.right_climber
    listed = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise").json()
    assert listed["count"] == 1
    assert listed["results"][0]["rightClimber"] == row.right_climber


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"choice": "both"}, "choice"),
        ({"choice": 1}, "choice"),
        ({"rung": "r_nope"}, "rung"),
        ({"left": 999_999}, "left"),
        ({"left": "12"}, "left"),
        ({"right": None}, "right"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(owner, owner_api, driver, run_tasks, change, field):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    [rung] = rung_ids(ladder)
    a, b = (e["run"] for e in entries(ladder))
    body = {"rung": rung, "left": a, "right": b, "choice": "tie", **change}
    response = owner_api.post(f"/api/ladders/{ladder.pk}/pairwise", body, format="json")
    assert response.status_code == 400, response.json()
    assert field in response.json()["errors"]
    assert PairwiseJudgement.objects.count() == 0


def test_two_runs_of_one_climber_are_not_a_pair(owner, owner_api, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=2)
    [rung] = rung_ids(ladder)
    by = {}
    for e in entries(ladder):
        by.setdefault(e["climber"], []).append(e["run"])
    a, b = next(iter(by.values()))
    body = {"rung": rung, "left": a, "right": b, "choice": "left"}
    response = owner_api.post(f"/api/ladders/{ladder.pk}/pairwise", body, format="json")
    assert response.status_code == 400
    assert "right" in response.json()["errors"]


def test_the_next_pair_needs_a_rung_of_the_ladder(owner, owner_api, driver, run_tasks):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    missing = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise/next")
    assert missing.status_code == 400 and "rung" in missing.json()["errors"]
    wrong = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise/next", {"rung": "r_x"})
    assert wrong.status_code == 400 and "rung" in wrong.json()["errors"]


def test_outsiders_are_told_nothing_and_staff_who_only_read_may_not_judge(
    owner, outsider_api, driver, run_tasks, staff
):
    from tests.conftest import _token_client

    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    [rung] = rung_ids(ladder)
    a, b = (e["run"] for e in entries(ladder))
    body = {"rung": rung, "left": a, "right": b, "choice": "left"}
    for path in ("pairwise", "pairwise/results", "agreement", "disagreements"):
        assert outsider_api.get(f"/api/ladders/{ladder.pk}/{path}").status_code == 404
    assert outsider_api.post(f"/api/ladders/{ladder.pk}/pairwise", body).status_code == 404
    staff_api = _token_client(staff)
    assert staff_api.get(f"/api/ladders/{ladder.pk}/pairwise/results").status_code == 200
    assert staff_api.post(f"/api/ladders/{ladder.pk}/pairwise", body).status_code == 403
    assert PairwiseJudgement.objects.count() == 0


def test_results_give_a_preference_table_and_a_ranking_with_intervals(
    owner, owner_api, reviewer_api, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=3, runs=1)
    [rung] = rung_ids(ladder)
    climber_of = {e["run"]: e["climber"] for e in entries(ladder)}
    best = sorted(set(climber_of.values()))[0]

    def prefer_best(api):
        while (pair := next_pair(api, ladder, rung)) is not None:
            left, right = (climber_of[pair[s]["run"]] for s in ("left", "right"))
            choice = "left" if left == best else "right" if right == best else "tie"
            judge(api, ladder, pair, choice)

    prefer_best(owner_api)
    prefer_best(reviewer_api)
    body = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise/results", {"rung": rung}).json()
    assert body["judgements"] == 6
    assert body["ranking"][0]["climber"] == best
    assert body["ranking"][0]["wins"] == 4 and body["ranking"][0]["comparisons"] == 4
    for row in body["ranking"]:
        assert row["low"] <= row["score"] <= row["high"]
    others = [r for r in body["ranking"] if r["climber"] != best]
    assert others[0]["score"] == pytest.approx(others[1]["score"], abs=1e-3)
    table = {(p["climber"], p["opponent"]): p for p in body["preferences"]}
    other = others[0]["climber"]
    assert table[best, other] == {
        "climber": best,
        "opponent": other,
        "wins": 2,
        "losses": 0,
        "ties": 0,
    }
    overall = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise/results").json()
    assert overall["rung"] is None and overall["judgements"] == 6


def test_a_rung_that_is_no_rung_id_is_a_400_and_one_the_ladder_lacks_does_not_exist(
    owner, owner_api, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    for path in ("pairwise", "pairwise/results", "pairwise/next"):
        response = owner_api.get(f"/api/ladders/{ladder.pk}/{path}", {"rung": "r\x00 x"})
        assert response.status_code == 400, path
        assert response.json()["errors"] == {"rung": ["Not a rung id."]}
    missing = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise/next", {"rung": "r_0"})
    assert missing.json()["code"] == "does_not_exist"
    a, b = (e["run"] for e in entries(ladder))
    body = {"rung": "r_0", "left": a, "right": b, "choice": "left"}
    refused = owner_api.post(f"/api/ladders/{ladder.pk}/pairwise", body, format="json")
    assert refused.status_code == 400 and refused.json()["code"] == "does_not_exist"
