"""Seed 000, "Acceptance rule": the user's rule, its fields and E195, and the rule a run stores."""

import pytest

from loopweb.runs.models import Run
from signals_app.models import AcceptanceRule
from tests.signals.conftest import DROP, assert_400, signal, signals_url

pytestmark = pytest.mark.django_db

URL = "/api/account/acceptance-rule"

DEFAULT = {
    "name": "tests",
    "description": "tests pass",
    "requires": ["tests"],
    "score": None,
    "excludes_events": ["revert", "incident"],
    "window_days": 14,
    "ext": None,
}


def rule(**fields) -> dict:
    body = {
        "name": "tests+referee",
        "description": "tests pass and referee accepts",
        "requires": ["tests", "referee"],
        "score": None,
    }
    body.update(fields)
    return {k: v for k, v in body.items() if v is not DROP}


def perf(**score) -> dict:
    target = {"name": "bench_score", "target": 2400, "better": "higher", **score}
    return rule(name="perf>=2400", requires=[], score=target)


def put(client, body):
    return client.put(URL, body, format="json")


# -- the user's rule ----------------------------------------------------------------------------


def test_before_any_put_the_rule_is_the_default(owner_api):
    response = owner_api.get(URL)
    assert response.status_code == 200
    assert response.json() == DEFAULT
    assert not AcceptanceRule.objects.exists()


def test_a_put_rule_is_read_back_with_its_defaults_filled_in(owner_api):
    response = put(owner_api, rule())
    assert response.status_code == 200
    expected = {**rule(), "excludes_events": ["revert", "incident"], "window_days": 14, "ext": None}
    assert response.json() == expected
    assert owner_api.get(URL).json() == expected


def test_a_rule_with_only_a_score(owner_api):
    body = perf(scale="linear", ext={"suite": "v2"})
    stored = put(owner_api, body).json()
    assert stored["requires"] == []
    assert stored["score"] == {
        "name": "bench_score",
        "target": 2400,
        "better": "higher",
        "scale": "linear",
        "ext": {"suite": "v2"},
    }


def test_a_put_replaces_the_whole_rule(owner_api):
    put(owner_api, rule(excludes_events=["hotfix"], window_days=3, ext={"a": 1}))
    stored = put(owner_api, rule()).json()
    assert stored["excludes_events"] == ["revert", "incident"]
    assert stored["window_days"] == 14
    assert stored["ext"] is None
    assert AcceptanceRule.objects.count() == 1


def test_empty_lists_and_a_zero_window_are_kept(owner_api):
    stored = put(owner_api, rule(requires=[], excludes_events=[], window_days=0)).json()
    assert (stored["requires"], stored["excludes_events"], stored["window_days"]) == ([], [], 0)


def test_each_user_has_their_own_rule(owner_api, outsider_api):
    put(owner_api, rule())
    assert outsider_api.get(URL).json() == DEFAULT


def test_anonymous_callers_have_no_rule(anon_api):
    assert anon_api.get(URL).status_code in (401, 403)
    assert put(anon_api, rule()).status_code in (401, 403)


# -- field rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "code"),
    [
        ({"name": DROP}, "name", "required"),
        ({"name": ""}, "name", "blank"),
        ({"name": "n" * 201}, "name", "max_length"),
        ({"description": DROP}, "description", "required"),
        ({"description": "d" * 501}, "description", "max_length"),
        ({"description": 5}, "description", "invalid"),
        ({"requires": "tests"}, "requires", "invalid"),
        ({"requires": ["tests", 3]}, "requires.1", "invalid"),
        ({"requires": ["tests", "tests"]}, "requires.1", "duplicate"),
        ({"requires": ["x" * 201]}, "requires.0", "max_length"),
        ({"excludes_events": "revert"}, "excludes_events", "invalid"),
        ({"excludes_events": [""]}, "excludes_events.0", "blank"),
        ({"window_days": -1}, "window_days", "min_value"),
        ({"window_days": 1.5}, "window_days", "invalid"),
        ({"window_days": "14"}, "window_days", "invalid"),
        ({"window_days": True}, "window_days", "invalid"),
        ({"window_days": 36501}, "window_days", "max_value"),
        ({"ext": "note"}, "ext", "invalid"),
        ({"score": 2400}, "score", "invalid"),
        ({"score": {"target": 1, "better": "higher"}}, "score.name", "required"),
        ({"score": {"name": "q", "better": "higher"}}, "score.target", "required"),
        ({"score": {"name": "q", "target": "1", "better": "higher"}}, "score.target", "invalid"),
        ({"score": {"name": "q", "target": True, "better": "higher"}}, "score.target", "invalid"),
        ({"score": {"name": "q", "target": 1}}, "score.better", "required"),
        ({"score": {"name": "q", "target": 1, "better": "up"}}, "score.better", "invalid_choice"),
        (
            {"score": {"name": "q", "target": 1, "better": "higher", "scale": "exp"}},
            "score.scale",
            "invalid_choice",
        ),
        (
            {"score": {"name": "q", "target": 1, "better": "higher", "unit": "s"}},
            "score.unit",
            "unknown_field",
        ),
        ({"threshold": 3}, "threshold", "unknown_field"),
    ],
)
def test_every_field_rule_answers_400_naming_its_field(owner_api, fields, field, code):
    assert_400(put(owner_api, rule(**fields)), field, code)
    assert not AcceptanceRule.objects.exists()


@pytest.mark.parametrize("body", ["[]", '"tests"', "null"])
def test_a_rule_is_an_object(owner_api, body):
    assert_400(owner_api.put(URL, body, content_type="application/json"), "body")


def test_a_whole_number_of_days_may_be_written_as_json_schema_reads_an_integer(owner_api):
    assert put(owner_api, rule(window_days=14.0)).json()["window_days"] == 14


def test_limits_are_inclusive(owner_api):
    body = rule(name="n" * 200, description="d" * 500, window_days=36500)
    assert put(owner_api, body).status_code == 200


# -- E195 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", [1.5, -0.1, 2400])
def test_a_fraction_target_outside_zero_to_one_is_E195(owner_api, target):
    response = put(owner_api, perf(name="pass_rate", target=target, scale="fraction"))
    assert_400(response, "score.target", "E195")


@pytest.mark.parametrize("target", [0, 0.95, 1])
def test_a_fraction_target_in_zero_to_one_is_accepted(owner_api, target):
    assert (
        put(owner_api, perf(name="pass_rate", target=target, scale="fraction")).status_code == 200
    )


@pytest.mark.parametrize("name", ["tests", "referee", "pair_referee", "merge", "ci"])
def test_score_name_never_names_a_recommended_verdict(owner_api, name):
    assert_400(put(owner_api, perf(name=name)), "score.name", "E195")


@pytest.mark.parametrize("name", ["issue", "incident", "revert", "hotfix"])
def test_score_name_never_names_a_recommended_event(owner_api, name):
    assert_400(put(owner_api, perf(name=name)), "score.name", "E195")


@pytest.mark.parametrize("name", ["bench_score", "runtime_s", "quality"])
def test_requires_never_names_a_recommended_score(owner_api, name):
    body = assert_400(put(owner_api, rule(requires=["tests", name])), "requires.1", "E195")
    assert list(body["errors"]) == ["requires.1"]


@pytest.mark.parametrize("name", ["issue", "incident", "revert", "hotfix"])
def test_requires_never_names_a_recommended_event(owner_api, name):
    assert_400(put(owner_api, rule(requires=[name])), "requires.0", "E195")


def test_score_name_never_names_one_of_the_rules_own_required_verdicts(owner_api):
    body = rule(requires=["qa"], score={"name": "qa", "target": 1, "better": "higher"})
    assert_400(put(owner_api, body), "score.name", "E195")


def test_names_seed_000_does_not_recommend_are_free(owner_api):
    body = rule(requires=["lint"], score={"name": "perf", "target": 1, "better": "lower"})
    assert put(owner_api, body).status_code == 200


# -- the rule a run stores --------------------------------------------------------------------


def test_a_run_stores_its_owners_rule_in_effect_when_it_was_recorded(owner_api, make_run):
    put(owner_api, rule())
    run = make_run()
    assert run.acceptance_rule == owner_api.get(URL).json()
    put(owner_api, perf())
    run.refresh_from_db()
    assert run.acceptance_rule["name"] == "tests+referee"
    outcome = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert outcome["rule"]["name"] == "tests+referee"
    assert outcome["rule_source"] == "run"


def test_a_run_of_an_owner_without_a_rule_stores_the_default(run):
    assert run.acceptance_rule == DEFAULT


def test_a_run_that_stored_no_rule_reads_its_owners_current_rule(owner_api, run):
    Run.objects.filter(pk=run.pk).update(acceptance_rule=None)
    put(owner_api, perf())
    outcome = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert outcome["rule"]["name"] == "perf>=2400"
    assert outcome["rule_source"] == "owner"


def test_a_rule_given_with_the_push_is_stored_instead(owner_api, push, claimed_job):
    put(owner_api, rule())
    response = push(claimed_job, acceptance_rule=perf())
    assert response.status_code == 201, response.json()
    assert response.json()["acceptance_rule"]["name"] == "perf>=2400"
    assert Run.objects.get().acceptance_rule["window_days"] == 14


def test_a_null_rule_with_the_push_means_the_owners(owner_api, push, claimed_job):
    put(owner_api, rule())
    assert push(claimed_job, acceptance_rule=None).json()["acceptance_rule"]["name"] == (
        "tests+referee"
    )


def test_a_pushed_rule_breaking_E195_refuses_the_whole_push(push, claimed_job):
    response = push(claimed_job, acceptance_rule=perf(target=2, scale="fraction"))
    assert_400(response, "acceptance_rule.score.target", "E195")
    assert not Run.objects.exists()
    claimed_job.refresh_from_db()
    assert claimed_job.status == "pending"


def test_a_pushed_rule_is_checked_against_the_recommended_names(push, claimed_job):
    response = push(claimed_job, acceptance_rule=rule(requires=["runtime_s"]))
    assert_400(response, "acceptance_rule.requires.0", "E195")
    assert not Run.objects.exists()


def test_a_pushed_rule_may_not_require_a_name_that_is_a_score_on_the_run(push, claimed_job):
    signals = [signal(id="p", kind="score", name="perf", value=3)]
    response = push(claimed_job, signals=signals, acceptance_rule=rule(requires=["perf"]))
    assert_400(response, "acceptance_rule.requires.0", "E195")
    assert not Run.objects.exists()


def test_a_pushed_rule_may_not_score_a_name_that_is_a_verdict_on_the_run(push, claimed_job):
    signals = [signal(id="q", name="qa")]
    target = {"name": "qa", "target": 1, "better": "higher"}
    response = push(claimed_job, signals=signals, acceptance_rule=rule(requires=[], score=target))
    assert_400(response, "acceptance_rule.score.name", "E195")


def test_a_pushed_rule_may_not_name_an_event_on_the_run_at_all(push, claimed_job):
    signals = [signal(id="d", kind="event", name="deploy", value="D-1")]
    response = push(claimed_job, signals=signals, acceptance_rule=rule(requires=["deploy"]))
    assert_400(response, "acceptance_rule.requires.0", "E195")
    target = {"name": "deploy", "target": 1, "better": "higher"}
    response = push(claimed_job, signals=signals, acceptance_rule=rule(requires=[], score=target))
    assert_400(response, "acceptance_rule.score.name", "E195")
    assert not Run.objects.exists()


def test_a_pushed_rule_may_not_require_the_platforms_runtime(push, claimed_job):
    response = push(
        claimed_job,
        record={"metrics": {"runtime_s": 12}},
        acceptance_rule=rule(requires=["runtime_s"]),
    )
    assert_400(response, "acceptance_rule.requires.0", "E195")


def test_a_pushed_rule_that_is_not_an_object_names_its_field(push, claimed_job):
    assert_400(push(claimed_job, acceptance_rule="tests"), "acceptance_rule")


def test_a_repush_keeps_the_stored_rule_unless_it_gives_one(owner_api, push, claimed_job):
    put(owner_api, rule())
    run_id = push(claimed_job).json()["id"]
    put(owner_api, perf())
    assert push(claimed_job).json()["acceptance_rule"]["name"] == "tests+referee"
    response = push(claimed_job, method="put", run_id=run_id)
    assert response.json()["acceptance_rule"]["name"] == "tests+referee"
    response = push(claimed_job, method="put", run_id=run_id, acceptance_rule=perf(target=1))
    assert response.json()["acceptance_rule"]["score"]["target"] == 1


def test_a_run_stores_the_owners_rule_not_the_pushers(owner_api, driver_api, push, claimed_job):
    put(owner_api, rule())
    put(driver_api, perf())
    assert push(claimed_job).json()["acceptance_rule"]["name"] == "tests+referee"


def test_a_posted_signal_does_not_touch_the_stored_rule(owner_api, run):
    before = run.acceptance_rule
    owner_api.post(signals_url(run), signal(), format="json")
    run.refresh_from_db()
    assert run.acceptance_rule == before


# -- the rule's names have one kind, and the run's signals agree with them ---------------------


def test_score_name_never_names_one_of_the_rules_own_excluded_events(owner_api):
    body = rule(
        requires=[],
        score={"name": "rollback", "target": 1, "better": "lower"},
        excludes_events=["rollback"],
    )
    body = assert_400(put(owner_api, body), "score.name", "E195")
    assert "excludes_events.0" in body["errors"]["score.name"][0]


def test_requires_never_names_one_of_the_rules_own_excluded_events(owner_api):
    body = assert_400(
        put(owner_api, rule(requires=["tests", "rollback"], excludes_events=["rollback"])),
        "requires.1",
        "E195",
    )
    assert "excludes_events.0" in body["errors"]["requires.1"][0]


@pytest.mark.parametrize("name", ["tests", "referee", "bench_score", "runtime_s"])
def test_excludes_events_never_names_a_recommended_verdict_or_score(owner_api, name):
    body = rule(requires=[], excludes_events=["revert", name])
    assert_400(put(owner_api, body), "excludes_events.1", "E195")


def test_a_pushed_rule_may_not_exclude_a_name_that_is_a_verdict_on_the_run(push, claimed_job):
    signals = [signal(id="qa-1", name="qa")]
    response = push(claimed_job, signals=signals, acceptance_rule=rule(excludes_events=["qa"]))
    body = assert_400(response, "acceptance_rule.excludes_events.0", "E195")
    assert "'qa-1'" in body["errors"]["acceptance_rule.excludes_events.0"][0]


def test_a_pushed_rule_refused_by_the_runs_signals_names_the_signal(push, claimed_job):
    signals = [signal(id="perf-7", kind="score", name="perf", value=3)]
    response = push(claimed_job, signals=signals, acceptance_rule=rule(requires=["perf"]))
    body = assert_400(response, "acceptance_rule.requires.0", "E195")
    assert "'perf-7'" in body["errors"]["acceptance_rule.requires.0"][0]


def test_a_push_under_the_owners_rule_may_not_make_a_required_verdict_a_score(
    owner_api, push, claimed_job
):
    put(owner_api, rule(requires=["lint"]))
    response = push(claimed_job, signals=[signal(id="lint-1", kind="score", name="lint", value=1)])
    body = assert_400(response, "signals.0.kind", "E195")
    message = body["errors"]["signals.0.kind"][0]
    assert "requires.0" in message and "'lint-1'" in message
    assert not Run.objects.exists()


def test_a_push_under_the_owners_rule_may_not_make_its_score_a_verdict(
    owner_api, push, claimed_job
):
    put(owner_api, rule(requires=[], score={"name": "perf", "target": 1, "better": "higher"}))
    response = push(claimed_job, signals=[signal(id="p", name="perf")])
    body = assert_400(response, "signals.0.kind", "E195")
    assert "score.name" in body["errors"]["signals.0.kind"][0]
    assert not Run.objects.exists()


def test_a_push_under_the_owners_rule_may_not_make_an_excluded_event_a_verdict(
    owner_api, push, claimed_job
):
    put(owner_api, rule(excludes_events=["rollback"]))
    response = push(claimed_job, signals=[signal(id="r", name="rollback")])
    body = assert_400(response, "signals.0.kind", "E195")
    assert "excludes_events.0" in body["errors"]["signals.0.kind"][0]


def test_a_push_whose_signals_agree_with_the_owners_rule_is_stored(owner_api, push, claimed_job):
    put(owner_api, rule(requires=["lint"]))
    response = push(claimed_job, signals=[signal(id="lint-1", name="lint", value="pass")])
    assert response.status_code == 201, response.json()


def test_a_repush_checks_its_signals_against_the_rule_the_run_stored(owner_api, push, claimed_job):
    put(owner_api, rule(requires=["lint"]))
    run_id = push(claimed_job).json()["id"]
    put(owner_api, rule(requires=[]))
    score = signal(id="lint-1", kind="score", name="lint", value=1)
    response = push(claimed_job, method="put", run_id=run_id, signals=[score])
    assert_400(response, "signals.0.kind", "E195")
    assert not Run.objects.get().signals.exists()


def test_a_repush_giving_a_rule_checks_its_signals_against_that_rule(owner_api, push, claimed_job):
    put(owner_api, rule(requires=["lint"]))
    run_id = push(claimed_job).json()["id"]
    score = signal(id="lint-1", kind="score", name="lint", value=1)
    response = push(
        claimed_job,
        method="put",
        run_id=run_id,
        signals=[score],
        acceptance_rule=rule(name="no lint", requires=[]),
    )
    assert response.status_code == 200, response.json()
    assert Run.objects.get().acceptance_rule["requires"] == []


def test_a_later_signal_may_not_give_a_name_of_the_stored_rule_another_kind(owner_api, run):
    Run.objects.filter(pk=run.pk).update(acceptance_rule=rule(requires=["lint"]))
    response = owner_api.post(
        signals_url(run), signal(id="lint-9", kind="score", name="lint", value=1), format="json"
    )
    body = assert_400(response, "kind", "E195")
    message = body["errors"]["kind"][0]
    assert "requires.0" in message and "'lint-9'" in message
    assert not run.signals.exists()


def test_a_later_signal_in_a_list_is_named_by_its_index(owner_api, run):
    stored = rule(requires=[], score={"name": "perf", "target": 1, "better": "higher"})
    Run.objects.filter(pk=run.pk).update(acceptance_rule=stored)
    body = [signal(id="a", name="lint"), signal(id="b", name="perf")]
    assert_400(owner_api.post(signals_url(run), body, format="json"), "1.kind", "E195")
    assert not run.signals.exists()


def test_a_late_event_may_not_name_a_verdict_the_runs_rule_requires(driver_api, make_run):
    clean = make_run(commit="abc123")
    clash = make_run(commit="abc123", acceptance_rule=rule(requires=["tests", "deploy"]))
    event = {
        "commit": "abc123",
        "name": "deploy",
        "value": "D-1",
        "observed_at": "2026-03-03T10:00:00Z",
        "tier": "verified",
    }
    body = assert_400(driver_api.post("/api/signals/events", event, format="json"), "name", "E195")
    message = body["errors"]["name"][0]
    assert f"run {clash.pk}" in message and "requires.1" in message
    assert not clean.signals.exists()


def test_a_referee_verdict_may_not_contradict_a_rule_stored_before_names_were_checked(
    owner_api, run
):
    # A rule stored before excludes_events was checked against the recommended names.
    Run.objects.filter(pk=run.pk).update(
        acceptance_rule=rule(requires=["tests"], excludes_events=["referee"])
    )
    response = owner_api.post(
        f"/api/runs/{run.pk}/reviews",
        {"aestheticRating": 4, "writeup": "ok", "verdict": "accept"},
        format="json",
    )
    body = assert_400(response, "verdict", "E195")
    assert "excludes_events.0" in body["errors"]["verdict"][0]
    assert not run.signals.exists()
