"""Agreement between reviewers and the runs they split on, through the API."""

import pytest

from loopweb.runs.models import Run
from tests.reviewing.world import climbed, entries, review, reviewer_named

pytestmark = pytest.mark.django_db


def test_kappa_for_each_pair_of_reviewers_alpha_across_all_and_each_against_the_validators(
    owner, owner_api, reviewer, driver, run_tasks
):
    sam = reviewer_named("sam")
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=5, reviewers=("rita", "sam"))
    runs = [e["run"] for e in entries(ladder)]
    assert len(runs) == 10
    # rita and sam on ten runs: verdicts agree on 8 of 10 (Cohen's 2 × 2 table 4, 1, 1, 4:
    # p_o = .8, p_e = .5, κ = .6); ratings identical.
    rita_verdicts = ["accept"] * 5 + ["reject"] * 5
    sam_verdicts = ["accept"] * 4 + ["reject"] + ["accept"] + ["reject"] * 4
    for i, run_id in enumerate(runs):
        review(run_id, reviewer, 1 + i % 5, rita_verdicts[i])
        review(run_id, sam, 1 + i % 5, sam_verdicts[i])
    # The owner reviews two runs, agreeing with rita.
    review(runs[0], owner, 1, "accept")
    review(runs[9], owner, 5, "reject")
    body = owner_api.get(f"/api/ladders/{ladder.pk}/agreement").json()
    assert body["runs"] == 10 and body["reviewedRuns"] == 10
    assert body["reviewers"] == ["olive", "rita", "sam"]
    pairs = {tuple(p["reviewers"]): p for p in body["pairs"]}
    rita_sam = pairs["rita", "sam"]
    assert rita_sam["verdict"] == {"shared": 10, "agreement": 0.8, "kappa": 0.6}
    assert rita_sam["rating"] == {"shared": 10, "agreement": 1.0, "kappa": 1.0}
    assert pairs["olive", "rita"]["verdict"]["kappa"] == 1.0
    assert body["alpha"]["rating"]["value"] == 1.0
    assert body["alpha"]["rating"]["units"] == 10
    assert body["alpha"]["verdict"]["level"] == "nominal"
    assert 0.5 < body["alpha"]["verdict"]["value"] < 0.7
    # Every run is flawless by its validators: a reject disagrees with the gate's reading.
    validators = {v["reviewer"]: v for v in body["validators"]}
    assert validators["rita"]["verdict"]["shared"] == 10
    assert validators["rita"]["verdict"]["agreement"] == 0.5
    # The gate accepts every run: agreeing half the time is what chance gives, κ = 0.
    assert validators["rita"]["verdict"]["kappa"] == 0.0


def test_the_validators_rating_is_read_on_the_aesthetic_scale(
    owner, owner_api, reviewer, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=2)
    runs = [e["run"] for e in entries(ladder)]
    scale = ["broken", "scuffed", "great", "flawless"]
    for run_id, rating in zip(runs, scale, strict=True):
        Run.objects.filter(pk=run_id).update(validator_rating=rating)
    for run_id, stars in zip(runs, [1, 2, 4, 5], strict=True):
        review(run_id, reviewer, stars, "accept" if stars >= 2 else "reject")
    [rita] = owner_api.get(f"/api/ladders/{ladder.pk}/agreement").json()["validators"]
    assert rita["rating"]["kappa"] == 1.0
    # The gate's floor is scuffed: broken is a reject, the rest accept.
    assert rita["verdict"] == {"shared": 4, "agreement": 1.0, "kappa": 1.0}


def test_the_disagreements_list_runs_where_reviewers_split_for_adjudication(
    owner, owner_api, reviewer, reviewer_api, driver, run_tasks
):
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=2)
    a, b, c, d = (e["run"] for e in entries(ladder))
    review(a, owner, 4, "accept")
    review(a, reviewer, 3, "reject")  # verdicts split
    review(b, owner, 5)
    review(b, reviewer, 2)  # ratings three steps apart
    review(c, owner, 4, "accept")
    review(c, reviewer, 3, "accept")  # one step: agreement
    review(d, owner, 1, "reject")  # one review: nothing to split
    body = reviewer_api.get(f"/api/ladders/{ladder.pk}/disagreements").json()
    assert body["count"] == 2
    split = {row["run"]: row for row in body["results"]}
    assert split[a]["reasons"] == ["verdict"]
    assert split[b]["reasons"] == ["rating"]
    assert split[a]["reviews"] == [
        {"reviewer": "olive", "aestheticRating": 4, "verdict": "accept"},
        {"reviewer": "rita", "aestheticRating": 3, "verdict": "reject"},
    ]
    assert {"rung", "climber", "validatorRating", "finishedAt"} <= set(split[a])


def test_reviews_by_someone_the_ladder_is_not_shared_with_do_not_count(
    owner, owner_api, reviewer, driver, run_tasks
):
    stranger = reviewer_named("zed")
    ladder = climbed(owner, driver, run_tasks, combos=2, runs=1)
    a, _ = (e["run"] for e in entries(ladder))
    review(a, owner, 5, "accept")
    review(a, stranger, 1, "reject")
    body = owner_api.get(f"/api/ladders/{ladder.pk}/agreement").json()
    assert body["reviewers"] == ["olive"] and body["pairs"] == []
    assert body["alpha"]["verdict"]["value"] is None
    assert owner_api.get(f"/api/ladders/{ladder.pk}/disagreements").json()["count"] == 0


def test_a_ladder_with_no_dispatch_reports_nothing(owner, owner_api):
    from tests.ladders.builders import climbers, make_ladder, versions

    ladder = make_ladder(owner, versions(1), climbers(2))
    body = owner_api.get(f"/api/ladders/{ladder.pk}/agreement").json()
    assert body["runs"] == 0 and body["pairs"] == [] and body["validators"] == []
    results = owner_api.get(f"/api/ladders/{ladder.pk}/pairwise/results").json()
    assert results == {"rung": None, "judgements": 0, "preferences": [], "ranking": []}
