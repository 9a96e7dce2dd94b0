"""Seed 000, "Signals": fields, limits, E195 and who may read and add them."""

import datetime as dt

import pytest

from signals_app.models import Signal
from tests.factories import UserFactory
from tests.signals.conftest import DROP, FINISHED, assert_400, signal, signals_url

pytestmark = pytest.mark.django_db


def post(client, run, body):
    return client.post(signals_url(run), body, format="json")


# -- what a signal is -------------------------------------------------------------------------


def test_a_verdict_a_score_and_an_event_are_stored_and_read_back(owner_api, run):
    body = [
        signal(id="t1", at_attempt="2", ext={"job": "ci-7"}),
        signal(
            id="b1",
            kind="score",
            name="bench_score",
            value=2450,
            unit="points",
            better="higher",
            threshold=2400,
            scale="linear",
            tier="measured",
        ),
        signal(id="e1", kind="event", name="issue", value="GH-12", tier="reported"),
    ]
    response = post(owner_api, run, body)
    assert response.status_code == 201, response.json()
    listed = owner_api.get(signals_url(run)).json()
    assert listed["count"] == 3
    first, score, event = listed["results"]
    assert first["id"] == "t1" and first["at_attempt"] == "2" and first["ext"] == {"job": "ci-7"}
    assert first["observed_at"] == "2026-03-01T12:05:00Z"
    assert score["value"] == 2450 and score["unit"] == "points" and score["threshold"] == 2400
    assert score["better"] == "higher" and score["scale"] == "linear"
    assert event["value"] == "GH-12" and event["kind"] == "event"
    assert first["recorded_by"] == "olive" and first["source"] == "api" and first["run"] == run.pk


def test_a_single_signal_answers_a_single_object(owner_api, run):
    response = post(owner_api, run, signal())
    assert response.status_code == 201
    assert response.json()["id"] == "tests-1"


def test_signals_are_listed_in_the_order_they_were_added(owner_api, run):
    for n in range(3):
        post(owner_api, run, signal(id=f"s{n}", observed_at=f"2026-03-0{3 - n}T00:00:00Z"))
    ids = [s["id"] for s in owner_api.get(signals_url(run)).json()["results"]]
    assert ids == ["s0", "s1", "s2"]


def test_the_list_is_paginated(owner_api, run):
    post(owner_api, run, [signal(id=f"s{n}") for n in range(3)])
    body = owner_api.get(signals_url(run)).json()
    assert set(body) >= {"count", "next", "previous", "results"}


def test_signals_are_append_only(owner_api, run):
    post(owner_api, run, signal())
    for method in ("put", "patch", "delete"):
        response = getattr(owner_api, method)(signals_url(run), signal(), format="json")
        assert response.status_code == 405
    assert Signal.objects.count() == 1


# -- field rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "field", "code"),
    [
        ({"id": DROP}, "id", "required"),
        ({"id": None}, "id", "required"),
        ({"id": 7}, "id", "invalid"),
        ({"id": "  "}, "id", "blank"),
        ({"id": "x" * 201}, "id", "max_length"),
        ({"kind": DROP}, "kind", "required"),
        ({"kind": "opinion"}, "kind", "invalid_choice"),
        ({"name": DROP}, "name", "required"),
        ({"name": "n" * 201}, "name", "max_length"),
        ({"name": ["tests"]}, "name", "invalid"),
        ({"value": DROP}, "value", "required"),
        ({"unit": "u" * 101}, "unit", "max_length"),
        ({"unit": 3}, "unit", "invalid"),
        ({"better": "more"}, "better", "invalid_choice"),
        ({"threshold": "high"}, "threshold", "invalid"),
        ({"threshold": True}, "threshold", "invalid"),
        ({"scale": "exp"}, "scale", "invalid_choice"),
        ({"at_attempt": "a" * 201}, "at_attempt", "max_length"),
        ({"at_attempt": 2}, "at_attempt", "invalid"),
        ({"observed_at": DROP}, "observed_at", "required"),
        ({"observed_at": "yesterday"}, "observed_at", "invalid"),
        ({"observed_at": "2026-03-01T12:00:00"}, "observed_at", "invalid"),
        ({"observed_at": "2026-03-01"}, "observed_at", "invalid"),
        ({"observed_at": "1066-10-14T09:00:00Z"}, "observed_at", "invalid"),
        ({"observed_at": 1767225600}, "observed_at", "invalid"),
        ({"tier": DROP}, "tier", "required"),
        ({"tier": "rumoured"}, "tier", "invalid_choice"),
        ({"ext": [1, 2]}, "ext", "invalid"),
        ({"ext": {"note": "a\x00b"}}, "ext", "null_characters_not_allowed"),
        ({"name": "te\x00sts"}, "name", "null_characters_not_allowed"),
        ({"colour": "red"}, "colour", "unknown_field"),
    ],
)
def test_every_field_rule_answers_400_naming_its_field(owner_api, run, fields, field, code):
    body = assert_400(post(owner_api, run, signal(**fields)), field, code)
    assert body["detail"].startswith(field)
    assert not Signal.objects.exists()


@pytest.mark.parametrize(
    "fields",
    [
        {"id": "x" * 200, "name": "n" * 200, "at_attempt": "a" * 200},
        {"kind": "score", "name": "quality", "value": 0.5, "unit": "u" * 100},
        {"observed_at": "2026-03-01T14:00:00+02:00"},
        {"observed_at": "2026-03-01T12:00:00.123456Z"},
        {"kind": "event", "name": "revert", "value": "r" * 500},
        {"unit": None, "better": None, "threshold": None, "scale": None, "ext": None},
    ],
)
def test_limits_are_inclusive_and_optional_fields_may_be_null(owner_api, run, fields):
    assert post(owner_api, run, signal(**fields)).status_code == 201


def test_a_value_is_at_most_500_characters(owner_api, run):
    body = signal(kind="event", name="issue", value="x" * 501)
    assert_400(post(owner_api, run, body), "value", "max_length")


def test_observed_at_keeps_its_time_zone_as_an_instant(owner_api, run):
    post(owner_api, run, signal(observed_at="2026-03-01T14:00:00+02:00"))
    assert Signal.objects.get().observed_at == FINISHED


# -- E195: a signal's kind fixes what its value may be -----------------------------------------


@pytest.mark.parametrize("word", ["accept", "reject", "pass", "fail", "error"])
def test_a_verdict_is_one_of_the_five_words(owner_api, run, word):
    assert post(owner_api, run, signal(value=word)).status_code == 201


@pytest.mark.parametrize("value", ["passed", "PASS", "ok", 1, True, 0.5, {"v": "pass"}])
def test_any_other_verdict_value_is_E195(owner_api, run, value):
    assert_400(post(owner_api, run, signal(value=value)), "value", "E195")


@pytest.mark.parametrize("value", [0, -3, 2.5, 1e300, 123456789012345678901234567890])
def test_a_score_is_a_number(owner_api, run, value):
    body = signal(kind="score", name="bench_score", value=value)
    assert post(owner_api, run, body).status_code == 201
    assert float(Signal.objects.get().value) == float(value)
    assert post(owner_api, run, body).status_code == 200  # the same signal again


@pytest.mark.parametrize("value", ["12", True, False, [1], {"n": 1}, 10**400])
def test_a_score_that_is_not_a_finite_number_is_E195(owner_api, run, value):
    """True is not a score, and neither is a number too large to be finite."""
    body = signal(kind="score", name="bench_score", value=value)
    assert_400(post(owner_api, run, body), "value", "E195")


def test_only_a_score_may_be_null(owner_api, run):
    score = signal(id="s", kind="score", name="bench_score", value=None)
    assert post(owner_api, run, score).status_code == 201
    assert Signal.objects.get().value is None
    assert_400(post(owner_api, run, signal(value=None)), "value", "E195")
    event = signal(kind="event", name="revert", value=None)
    assert_400(post(owner_api, run, event), "value", "E195")


@pytest.mark.parametrize("value", [5, 7.5, True, "", "  ", ["r"]])
def test_an_event_value_is_a_reference_string(owner_api, run, value):
    body = signal(kind="event", name="revert", value=value)
    assert_400(post(owner_api, run, body), "value", "E195")


@pytest.mark.parametrize("value", [0, 0.0, 0.25, 1, 1.0, None])
def test_a_fraction_score_in_zero_to_one_is_accepted(owner_api, run, value):
    body = signal(kind="score", name="pass_rate", value=value, scale="fraction")
    assert post(owner_api, run, body).status_code == 201


@pytest.mark.parametrize("value", [-0.01, 1.01, 2, -1])
def test_a_fraction_score_outside_zero_to_one_is_E195(owner_api, run, value):
    body = signal(kind="score", name="pass_rate", value=value, scale="fraction")
    assert_400(post(owner_api, run, body), "value", "E195")


@pytest.mark.parametrize("scale", ["linear", "log", None])
def test_other_scales_take_any_number(owner_api, run, scale):
    body = signal(kind="score", name="runtime", value=3600, scale=scale)
    assert post(owner_api, run, body).status_code == 201


def test_a_list_names_the_offending_item_by_its_index_and_stores_nothing(owner_api, run):
    body = [signal(id="a"), signal(id="b", value="maybe"), signal(id="c")]
    response = post(owner_api, run, body)
    errors = assert_400(response, "1.value", "E195")["errors"]
    assert list(errors) == ["1.value"]
    assert not Signal.objects.exists()


def test_a_list_reports_every_offending_field(owner_api, run):
    body = [signal(id="a", tier="rumoured"), signal(id="b", value=None)]
    errors = assert_400(post(owner_api, run, body), "0.tier")["errors"]
    assert "1.value" in errors
    assert post(owner_api, run, body).json()["code"] == "E195"


@pytest.mark.parametrize("body", ["[]", '"tests"', "5", "null", "true"])
def test_a_body_that_is_neither_a_signal_nor_a_list_names_the_body(owner_api, run, body):
    response = owner_api.post(signals_url(run), body, content_type="application/json")
    assert_400(response, "body")


def test_malformed_json_is_a_400_naming_the_body(owner_api, run):
    response = owner_api.post(signals_url(run), "{", content_type="application/json")
    assert_400(response, "body")


def test_a_list_of_more_than_a_thousand_signals_is_refused(owner_api, run):
    body = [signal(id=str(n)) for n in range(1001)]
    assert_400(post(owner_api, run, body), "body", "max_length")


def test_an_item_that_is_not_an_object_is_named_by_index(owner_api, run):
    assert_400(post(owner_api, run, [signal(), "x"]), "1")


def test_a_form_post_is_refused(owner_api, run):
    response = owner_api.post(signals_url(run), signal(), format="multipart")
    assert response.status_code == 415


# -- ids --------------------------------------------------------------------------------------


def test_an_id_is_unique_within_its_run(owner_api, run):
    post(owner_api, run, signal(id="t"))
    assert_400(post(owner_api, run, signal(id="t", value="fail")), "id", "unique")
    assert Signal.objects.count() == 1


def test_resending_the_same_signal_appends_nothing(owner_api, run):
    assert post(owner_api, run, signal(id="t")).status_code == 201
    again = post(owner_api, run, signal(id="t", observed_at="2026-03-01T13:05:00+01:00"))
    assert again.status_code == 200
    assert again.json()["id"] == "t"
    assert Signal.objects.count() == 1


def test_one_id_twice_in_a_list_with_different_content_is_refused(owner_api, run):
    body = [signal(id="t"), signal(id="t", value="fail")]
    assert_400(post(owner_api, run, body), "1.id", "unique")
    assert not Signal.objects.exists()


def test_the_same_id_may_be_used_on_another_run(owner_api, run, make_run):
    other = make_run()
    assert post(owner_api, run, signal(id="t")).status_code == 201
    assert post(owner_api, other, signal(id="t")).status_code == 201


# -- E195: a name keeps the kind of its first signal --------------------------------------------


def test_a_later_signal_of_a_name_with_another_kind_is_E195(owner_api, run):
    post(owner_api, run, signal(id="t1", name="qa"))
    score = signal(id="t2", name="qa", kind="score", value=3)
    body = assert_400(post(owner_api, run, score), "kind", "E195")
    assert "verdict" in body["errors"]["kind"][0]
    assert post(owner_api, run, signal(id="t3", name="qa", value="fail")).status_code == 201


def test_one_name_with_two_kinds_in_one_list_is_E195_at_the_second(owner_api, run):
    body = [signal(id="a"), signal(id="b", kind="event", value="PR-1")]
    assert_400(post(owner_api, run, body), "1.kind", "E195")
    assert not Signal.objects.exists()


def test_the_name_kind_rule_is_per_run(owner_api, run, make_run):
    other = make_run()
    post(owner_api, run, signal(id="t", name="qa"))
    score = signal(id="t", name="qa", kind="score", value=1)
    assert post(owner_api, other, score).status_code == 201


# -- who may read and add signals ---------------------------------------------------------------


def test_an_outsider_can_neither_read_nor_add_signals_to_another_owners_run(outsider_api, run):
    response = outsider_api.get(signals_url(run))
    assert (response.status_code, response.json()) == (404, {"detail": "Not found."})
    assert post(outsider_api, run, signal()).status_code == 404
    assert post(outsider_api, run, signal(value="maybe")).status_code == 404
    assert not Signal.objects.exists()


def test_an_unknown_run_is_404(owner_api):
    assert owner_api.get("/api/runs/999999/signals").status_code == 404
    assert owner_api.get(f"/api/runs/{10**30}/signals").status_code == 404


def test_anonymous_callers_are_refused(anon_api, run):
    assert anon_api.get(signals_url(run)).status_code in (401, 403)
    assert post(anon_api, run, signal()).status_code in (401, 403)


def test_drivers_and_staff_may_add_signals_to_any_run(driver_api, token_client, run):
    staff = token_client(UserFactory(username="stella", is_staff=True))
    assert post(driver_api, run, signal(id="d")).status_code == 201
    assert post(staff, run, signal(id="s")).status_code == 201


def test_anyone_may_read_a_published_runs_signals_but_only_its_owner_adds_them(
    outsider_api, owner_api, run
):
    run.published = True
    run.save()
    assert outsider_api.get(signals_url(run)).status_code == 200
    assert post(outsider_api, run, signal()).status_code == 403
    response = post(owner_api, run, signal())
    assert response.status_code == 201
    assert response.json()["recorded_by"] == "olive"


def test_a_reviewer_reads_signals_but_adds_verdicts_only_through_reviews(reviewer_api, run):
    assert reviewer_api.get(signals_url(run)).status_code == 404
    run.published = True
    run.save()
    assert reviewer_api.get(signals_url(run)).status_code == 200
    assert post(reviewer_api, run, signal()).status_code == 403
    assert not Signal.objects.exists()


def test_deleting_a_run_deletes_its_signals(owner_api, run):
    post(owner_api, run, signal())
    run.delete()
    assert not Signal.objects.exists()


def test_observed_at_need_not_be_after_the_run(owner_api, run):
    early = (FINISHED - dt.timedelta(days=30)).isoformat()
    assert post(owner_api, run, signal(observed_at=early)).status_code == 201


def test_an_E195_detail_names_the_E195_field_when_other_errors_come_first(owner_api, run):
    body = assert_400(post(owner_api, run, signal(name=DROP, value="maybe")), "value", "E195")
    assert "name" in body["errors"]
    assert body["detail"].startswith("value: ")


def test_an_E195_detail_names_the_first_E195_field_of_a_list(owner_api, run):
    body = [signal(id="a", tier="sure"), signal(id="b", kind="score", value="high")]
    response = assert_400(post(owner_api, run, body), "1.value", "E195")
    assert response["detail"].startswith("1.value: ")


# -- a score's own threshold ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "threshold", "better", "expected"),
    [
        (2450, 2400, "higher", "pass"),
        (2400, 2400, "higher", "pass"),
        (2399.5, 2400, "higher", "fail"),
        (3, 5, "lower", "pass"),
        (5, 5, "lower", "pass"),
        (5.01, 5, "lower", "fail"),
        (None, 5, "lower", None),
        (3, DROP, "higher", None),
        (3, 5, DROP, None),
    ],
)
def test_a_scores_own_threshold_reads_pass_or_fail(
    owner_api, run, value, threshold, better, expected
):
    body = signal(
        id="s", kind="score", name="perf", value=value, threshold=threshold, better=better
    )
    response = post(owner_api, run, body)
    assert response.status_code == 201, response.json()
    assert response.json()["threshold_result"] == expected
    listed = owner_api.get(signals_url(run)).json()["results"]
    assert listed[0]["threshold_result"] == expected


def test_a_threshold_means_nothing_on_a_verdict_or_an_event(owner_api, run):
    body = [
        signal(id="v", threshold=1, better="higher"),
        signal(id="e", kind="event", name="issue", value="GH-1", threshold=1, better="higher"),
    ]
    results = [s["threshold_result"] for s in post(owner_api, run, body).json()]
    assert results == [None, None]


def test_a_scores_threshold_never_decides_the_rules_score_part(owner_api, run):
    from loopweb.runs.models import Run

    rule = {
        "name": "perf>=2500",
        "description": "perf reaches 2500",
        "requires": [],
        "score": {"name": "perf", "target": 2500, "better": "higher"},
    }
    Run.objects.filter(pk=run.pk).update(acceptance_rule=rule)
    body = signal(id="p", kind="score", name="perf", value=2450, threshold=2400, better="higher")
    assert post(owner_api, run, body).json()["threshold_result"] == "pass"
    outcome = owner_api.get(f"/api/runs/{run.pk}/outcome").json()
    assert outcome["result"] == "failure"
