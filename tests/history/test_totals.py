"""What a dispatch's runs cost: every run it launched (retried attempts included) and every run
its slots read, each once; runs that report no metrics are "not reported", never zero."""

from ladders import services
from loopweb.history import costs
from tests.history.helpers import PAID, compare, costing, history, record
from tests.ladders.builders import PERFECT, climbers, make_ladder, outside, versions, work


def test_retried_attempts_are_paid_for_and_runs_without_metrics_are_kept_apart(
    owner, owner_api, driver, run_tasks
):
    ladder = make_ladder(owner, versions(2), climbers(2), retryCount=1)
    services.start_dispatch(ladder=ladder, by=owner)
    attempts = {}

    def result(job):
        # m1: its first attempt on rung 1 hangs (a paid model failure) and is retried.
        attempts[job.pk] = job.attempt
        if job.combination.model == "m1" and job.case == "step-1" and job.attempt == 1:
            return ("hung", costing({}, 400, 40, 4, 1000))
        if job.combination.model == "m2":
            return PERFECT  # reports nothing
        return PAID

    work(driver, run_tasks, result)
    [row] = history(owner_api, ladder)["results"]
    m1, m2 = row["climbers"]
    assert m1["totals"] == {
        "usdMicros": 400 + 2 * 1000,
        "inputTokens": 40 + 2 * 100,
        "outputTokens": 4 + 2 * 10,
        "wallMs": 1000 + 2 * 5000,
        "notReported": 0,
        "runs": 3,
    }
    assert m2["totals"] == {**costs.empty(), "notReported": 2, "runs": 2}
    assert row["totals"] == costs.total([m1["totals"], m2["totals"]])


def test_runs_the_dispatch_read_but_someone_else_launched_cost_it_nothing(
    owner, owner_api, driver, run_tasks
):
    """A run from before the Run decides its slot (runs from anywhere count), but the record
    counts cost and time only for the runs the dispatch launched: that one is counted apart,
    as reused."""
    [step] = versions(1)
    [combo] = climbers(1)
    outside(driver, step, combo, costing(PERFECT, 250, 1, 2, 3))
    ladder = make_ladder(owner, [step], [combo])
    services.start_dispatch(ladder=ladder, by=owner)  # decided by the existing run
    [row] = history(owner_api, ladder)["results"]
    assert row["status"] == "finished"
    assert row["totals"]["usdMicros"] == 0 and row["totals"]["runs"] == 0
    assert row["runs"]["reused"] == 1
    one = record(owner_api, ladder, row["id"])
    assert one["climbers"][0]["slots"][0]["status"] == "passed"
    assert one["climbers"][0]["slots"][0]["totals"] is None


def test_partial_and_malformed_metrics():
    assert costs.reported({"usd_micros": 5}) == (5, 0, 0, 0)
    assert costs.reported({"usd_micros": 5.0, "wall_ms": 2}) == (5, 0, 0, 2)
    assert costs.reported({"usd_micros": "5", "input_tokens": True}) is None
    assert costs.reported({"usd_micros": -1}) is None
    assert costs.reported({"runtime_s": 3}) is None
    assert costs.reported(None) is None
    assert costs.reported([1, 2]) is None
    totals = costs.empty()
    costs.add(totals, None)
    costs.add(totals, (1, 2, 3, 4))
    assert totals == {
        "usdMicros": 1,
        "inputTokens": 2,
        "outputTokens": 3,
        "wallMs": 4,
        "notReported": 1,
        "runs": 2,
    }


def test_a_running_dispatch_is_costed_live(owner, owner_api, driver, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID, rounds=1)  # rung 1 passed, rung 2 launched
    body = compare(owner_api, ladder, "current", "current")
    assert body["a"]["id"] == "current" and body["a"]["status"] == "running"
    assert body["totals"]["a"]["usdMicros"] == 1000
