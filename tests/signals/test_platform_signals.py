"""SPEC §7, platform-emitted signals: runtime_s on push, referee on review, and the signals a
push carries. Each is written in the transaction of the push or review that caused it."""

import pytest

from ladders.services import start_dispatch
from loopweb.runs.models import Review, Run
from loopweb.runs.numbers import RUNTIME_MAX
from signals_app.models import Signal
from tests.ladders.builders import make_ladder
from tests.signals.conftest import assert_400, signal, signals_url

pytestmark = pytest.mark.django_db


def runtime(value) -> dict:
    return {"metrics": {"runtime_s": value, "wall_ms": 1}}


def runtimes(run_id) -> list[tuple[str, object]]:
    signals = Signal.objects.filter(run_id=run_id, name="runtime_s").order_by("id")
    return [(s.signal_id, s.value) for s in signals]


# -- runtime_s --------------------------------------------------------------------------------


def test_a_push_records_runtime_s_from_the_record(push, claimed_job):
    response = push(claimed_job, record=runtime(42.5))
    assert response.status_code == 201, response.json()
    stored = Signal.objects.get()
    assert stored.signal_id == "runtime_s:1"
    assert (stored.kind, stored.name, stored.value) == ("score", "runtime_s", 42.5)
    assert (stored.better, stored.scale, stored.unit, stored.tier) == (
        "lower",
        "log",
        "s",
        "measured",
    )
    assert stored.source == "platform" and stored.recorded_by is None


@pytest.mark.parametrize(
    "record", [{}, {"metrics": {}}, {"metrics": {"runtime_s": None}}, {"metrics": "fast"}]
)
def test_no_runtime_in_the_record_means_no_runtime_signal(push, claimed_job, record):
    assert push(claimed_job, record=record).status_code == 201
    assert not Signal.objects.exists()


@pytest.mark.parametrize("value", ["12", True, [12], {"s": 12}])
def test_a_runtime_that_is_not_a_number_refuses_the_push(push, claimed_job, value):
    assert_400(push(claimed_job, record=runtime(value)), "record.metrics.runtime_s", "E195")
    assert not Run.objects.exists()


def test_a_repush_appends_runtime_s_only_when_it_changed(push, claimed_job):
    run_id = push(claimed_job, record=runtime(10)).json()["id"]
    push(claimed_job, record=runtime(10))
    assert runtimes(run_id) == [("runtime_s:1", 10)]
    push(claimed_job, record=runtime(12), method="put", run_id=run_id)
    assert runtimes(run_id) == [("runtime_s:1", 10), ("runtime_s:2", 12)]
    push(claimed_job, record=runtime(10), method="put", run_id=run_id)
    assert runtimes(run_id)[-1] == ("runtime_s:3", 10)


def test_an_unchanged_huge_runtime_is_not_appended_again(push, claimed_job):
    huge = RUNTIME_MAX - 0.123456789  # the largest a push takes, with digits a float rounds
    run_id = push(claimed_job, record=runtime(huge)).json()["id"]
    push(claimed_job, record=runtime(huge), method="put", run_id=run_id)
    assert len(runtimes(run_id)) == 1


def test_the_re_pushed_runtime_is_the_one_a_rule_reads(owner_api, push, claimed_job):
    owner_api.put(
        "/api/account/acceptance-rule",
        {
            "name": "fast",
            "description": "under a minute",
            "requires": [],
            "score": {"name": "runtime_s", "target": 60, "better": "lower", "scale": "log"},
        },
        format="json",
    )
    run_id = push(claimed_job, record=runtime(90)).json()["id"]
    assert owner_api.get(f"/api/runs/{run_id}/outcome").json()["result"] == "failure"
    push(claimed_job, record=runtime(45), method="put", run_id=run_id)
    outcome = owner_api.get(f"/api/runs/{run_id}/outcome").json()
    assert outcome["result"] == "success"
    assert outcome["tier"] == "measured"
    assert outcome["parts"][0]["signal"] == "runtime_s:2"


def test_a_minted_id_never_collides_with_one_a_client_chose(owner_api, push, claimed_job):
    run_id = push(claimed_job).json()["id"]
    taken = signal(id="runtime_s:1", kind="score", name="runtime_s", value=1)
    owner_api.post(f"/api/runs/{run_id}/signals", taken, format="json")
    push(claimed_job, record=runtime(7), method="put", run_id=run_id)
    assert ("runtime_s:1~2", 7) in runtimes(run_id)


def test_runtime_s_on_a_run_where_it_is_not_a_score_refuses_the_repush(
    owner_api, push, claimed_job
):
    run_id = push(claimed_job).json()["id"]
    owner_api.post(f"/api/runs/{run_id}/signals", signal(id="v", name="runtime_s"), format="json")
    response = push(claimed_job, record=runtime(7), method="put", run_id=run_id)
    assert_400(response, "record.metrics.runtime_s", "E195")
    assert Run.objects.get().record == {}


# -- the signals a push carries ---------------------------------------------------------------


def test_a_push_stores_the_signals_it_carries(push, claimed_job, driver):
    body = [signal(id="t"), signal(id="q", kind="score", name="quality", value=0.8)]
    run_id = push(claimed_job, signals=body).json()["id"]
    stored = Signal.objects.filter(run_id=run_id).order_by("id")
    assert [(s.signal_id, s.source, s.recorded_by) for s in stored] == [
        ("t", "push", driver),
        ("q", "push", driver),
    ]


def test_a_push_may_carry_a_single_signal(push, claimed_job):
    assert push(claimed_job, signals=signal(id="t")).status_code == 201
    assert Signal.objects.get().signal_id == "t"


def test_a_bad_signal_in_a_push_refuses_the_whole_push(push, claimed_job):
    response = push(claimed_job, record=runtime(3), signals=[signal(), signal(id="x", value=None)])
    assert_400(response, "signals.1.value", "E195")
    assert not Run.objects.exists()
    assert not Signal.objects.exists()
    claimed_job.refresh_from_db()
    assert (claimed_job.status, claimed_job.finished_at) == ("pending", None)


def test_a_bad_single_signal_in_a_push_is_named_under_signals(push, claimed_job):
    assert_400(push(claimed_job, signals=signal(tier="?")), "signals.tier", "invalid_choice")


@pytest.mark.parametrize("given", ["tests", 5, True])
def test_signals_that_are_neither_a_signal_nor_a_list_name_the_field(push, claimed_job, given):
    assert_400(push(claimed_job, signals=given), "signals")


def test_a_pushed_signal_may_not_give_runtime_s_another_kind(push, claimed_job):
    response = push(claimed_job, record=runtime(3), signals=[signal(id="v", name="runtime_s")])
    assert_400(response, "signals.0.kind", "E195")
    assert not Run.objects.exists()


def test_a_driver_resending_its_push_does_not_duplicate_signals(push, claimed_job):
    body = [signal(id="t")]
    first = push(claimed_job, record=runtime(3), signals=body)
    again = push(claimed_job, record=runtime(3), signals=body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert Signal.objects.count() == 2


def test_a_repush_with_a_changed_signal_under_an_old_id_is_refused(push, claimed_job):
    run_id = push(claimed_job, signals=[signal(id="t")]).json()["id"]
    response = push(
        claimed_job, method="put", run_id=run_id, signals=[signal(id="t", value="fail")]
    )
    assert_400(response, "signals.0.id", "unique")


# -- referee ----------------------------------------------------------------------------------


def review(client, run, **fields):
    body = {"aestheticRating": 4, "writeup": "fine", **fields}
    return client.post(f"/api/runs/{run.pk}/reviews", body, format="json")


@pytest.mark.parametrize("verdict", ["accept", "reject"])
def test_a_review_with_a_verdict_records_a_referee_verdict(owner_api, owner, run, verdict):
    response = review(owner_api, run, verdict=verdict)
    assert response.status_code == 201, response.json()
    stored = run.signals.get()
    review_id = response.json()["id"]
    assert stored.signal_id == f"referee:{review_id}"
    assert (stored.kind, stored.name, stored.value, stored.tier) == (
        "verdict",
        "referee",
        verdict,
        "reported",
    )
    assert stored.at_attempt == "1"
    assert stored.ext == {"review": review_id}
    assert stored.observed_at == Review.objects.get().created_at
    assert (stored.source, stored.recorded_by) == ("review", owner)


@pytest.mark.parametrize("fields", [{}, {"verdict": None}, {"verdict": ""}])
def test_a_review_without_a_verdict_records_no_signal(owner_api, run, fields):
    assert review(owner_api, run, **fields).status_code == 201
    assert not run.signals.exists()


def test_a_reviewers_verdict_reads_in_a_rule_requiring_referee(
    reviewer_api, owner_api, run, owner, reviewer, version, combination
):
    """The owner shares a ladder that reads the run with the reviewer, who may then review it."""
    ladder = make_ladder(owner, [version], [combination], reviewers=[reviewer.pk])
    start_dispatch(ladder=ladder)
    owner_api.post(signals_url(run), signal(id="t"), format="json")
    Run.objects.filter(pk=run.pk).update(
        acceptance_rule={
            "name": "tests+referee",
            "description": "tests pass and referee accepts",
            "requires": ["tests", "referee"],
            "score": None,
        }
    )
    assert owner_api.get(f"/api/runs/{run.pk}/outcome").json()["result"] == "unknown"
    review(reviewer_api, run, verdict="accept")
    outcome = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert (outcome["result"], outcome["tier"]) == ("success", "reported")


def test_a_review_whose_referee_verdict_breaks_E195_is_refused(owner_api, run):
    body = signal(id="r", kind="score", name="referee", value=3)
    owner_api.post(signals_url(run), body, format="json")
    assert_400(review(owner_api, run, verdict="accept"), "verdict", "E195")
    assert not Review.objects.exists()
