"""API "Conventions": every 400 names its field in one error shape, and no input is a 500."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopweb.runs.api.fields import MAX_JSON_DEPTH
from loopweb.runs.models import Run
from tests.factories import (
    CaseFactory,
    CoverageGroupFactory,
    GGConfigurationFactory,
    ModelEntryFactory,
)
from tests.runs.helpers import assert_field_error, claim, finish, hand_job, push_body

pytestmark = pytest.mark.django_db


def post_json(api, url, raw: str):
    return api.generic("POST", url, raw.encode("utf-8", "surrogatepass"), "application/json")


def test_a_field_error_has_a_detail_naming_the_field_a_code_and_the_errors(owner_api):
    response = owner_api.post(
        "/api/cases/", {"slug": "a", "kind": "x", "title": "A"}, format="json"
    )

    body = assert_field_error(response, "kind")
    assert body["detail"].startswith("kind: ")
    assert body["code"] == "invalid_choice"
    assert set(body) == {"detail", "code", "errors"}


def test_nested_fields_are_named_with_dots(owner_api):
    CaseFactory(slug="jump-1")

    response = owner_api.post(
        "/api/cases/jump-1/versions/",
        {"version": "1", "checklist": [{"id": "a"}, {"id": "b", "critical": 1}]},
        format="json",
    )

    body = assert_field_error(response, "checklist.1.critical")
    assert body["detail"].startswith("checklist.1.critical: ")


@pytest.mark.parametrize(
    "raw", ["{", "not json", '{"max": NaN}', '{"max": Infinity}', '{"a": 1e400, ', "\x00"]
)
def test_a_body_that_is_not_json_is_a_400_on_body(driver_api, raw):
    response = post_json(driver_api, "/api/driver/claim", raw)

    body = assert_field_error(response, "body")
    assert body["code"] == "parse_error"


def test_a_body_nested_past_the_recursion_limit_is_a_400_on_body(driver_api):
    response = post_json(driver_api, "/api/runs/", "[" * 100_000 + "]" * 100_000)

    assert_field_error(response, "body")


def test_a_body_that_is_not_an_object_is_a_400(driver_api):
    assert driver_api.post("/api/driver/claim", [1, 2], format="json").status_code == 400


@pytest.fixture
def pushable(owner, driver, version, combination):
    return claim(driver, hand_job(owner, version, combination))


@pytest.mark.parametrize(
    ("raw_record", "problem"),
    [
        ('{"note": "a\\u0000b"}', "NUL"),
        ('{"a\\u0000": 1}', "NUL"),
        ('{"note": "\\ud800"}', "surrogate"),
        ('{"metrics": {"runtime_s": 1e400}}', "out of range"),
        ('{"metrics": {"runtime_s": -1e400}}', "out of range"),
    ],
)
def test_a_record_postgresql_cannot_store_is_a_400_on_record(
    driver_api, pushable, raw_record, problem
):
    raw = json.dumps(push_body(pushable)).replace('"record": {', f'"record": {raw_record[:-1]}, ')
    raw = raw.replace(", }", "}")

    body = assert_field_error(post_json(driver_api, "/api/runs/", raw), "record")

    assert problem in body["errors"]["record"][0]
    assert Run.objects.count() == 0


def test_a_record_nested_too_deeply_is_a_400_on_record(driver_api, pushable):
    record: dict = {}
    node = record
    for _ in range(MAX_JSON_DEPTH + 1):
        node["x"] = {}
        node = node["x"]

    response = driver_api.post("/api/runs/", push_body(pushable, record=record), format="json")

    assert_field_error(response, "record")


def test_a_record_just_within_the_depth_limit_is_stored(driver_api, pushable):
    record: dict = {}
    node = record
    for _ in range(MAX_JSON_DEPTH - 1):
        node["x"] = {}
        node = node["x"]

    response = driver_api.post("/api/runs/", push_body(pushable, record=record), format="json")

    assert response.status_code == 201, response.content


@pytest.mark.parametrize("field", ["signals", "acceptance_rule"])
def test_signals_and_rules_postgresql_cannot_store_are_a_400_on_their_field(
    driver_api, pushable, field
):
    body = push_body(pushable, **{field: [{"name": "a\x00"}]})

    assert_field_error(driver_api.post("/api/runs/", body, format="json"), field)


def test_a_checklist_item_with_a_nul_character_is_a_400_on_the_checklist(owner_api):
    CaseFactory(slug="jump-1")

    response = owner_api.post(
        "/api/cases/jump-1/versions/",
        {"version": "1", "checklist": [{"id": "a", "text": "x\x00y"}]},
        format="json",
    )

    assert_field_error(response, "checklist")


@pytest.mark.parametrize(
    ("url", "body", "field"),
    [
        ("/api/cases/", {"slug": "a", "title": "x\x00", "kind": "functional"}, "title"),
        ("/api/models/", {"name": "\x00", "provider": "p"}, "name"),
        (
            "/api/combinations/",
            {"kind": "harness", "harness": "h", "model": "\ud800", "provider": "p"},
            "model",
        ),
        ("/api/auth/token", {"username": "a\x00", "password": "b"}, "username"),
    ],
)
def test_text_fields_refuse_characters_postgresql_cannot_store(owner_api, url, body, field):
    raw = json.dumps(body)

    assert_field_error(post_json(owner_api, url, raw), field)


@pytest.mark.parametrize("huge", [2**63, 10**30])
def test_ids_out_of_range_are_not_found_not_errors(owner_api, driver_api, combination, huge):
    assert (
        driver_api.post(f"/api/driver/jobs/{huge}/status", {"status": "running"}).status_code == 404
    )
    assert owner_api.get(f"/api/jobs/{huge}/").status_code == 404
    assert owner_api.get(f"/api/runs/{huge}/").status_code == 404
    assert_field_error(
        driver_api.post("/api/runs/", {**push_body(), "job": huge}, format="json"), "job"
    )
    launch = {"case": "a", "version": "1", "combination": huge}
    assert_field_error(owner_api.post("/api/jobs/", launch, format="json"), "combination")
    assert_field_error(
        owner_api.post("/api/groups/", {"name": "g", "members": [huge]}, format="json"),
        "members.0",
    )
    gg = {"kind": "gg", "configuration": huge, "bindings": {}}
    assert_field_error(owner_api.post("/api/combinations/", gg, format="json"), "configuration")


@pytest.mark.parametrize("moment", ["0001-01-01T00:00:00+05:00", "9999-12-31T23:59:59-05:00"])
def test_a_finish_time_out_of_range_is_a_400_on_finished_at(driver_api, pushable, moment):
    body = {**push_body(pushable), "finishedAt": moment}

    assert_field_error(driver_api.post("/api/runs/", body, format="json"), "finishedAt")


def test_a_conflict_is_a_409_with_a_detail(owner, owner_api, version, combination):
    job = hand_job(owner, version, combination)
    owner_api.post(f"/api/jobs/{job.pk}/cancel")

    response = owner_api.post(f"/api/jobs/{job.pk}/cancel")

    assert response.status_code == 409
    assert response.json()["detail"]


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.dictionaries(
        st.sampled_from(
            [
                "job",
                "case",
                "version",
                "variant",
                "engine",
                "combination",
                "outcome",
                "record",
                "finishedAt",
                "commit",
                "mergeArtifact",
                "signals",
                "acceptance_rule",
            ]
        ),
        json_values,
    )
)
def test_no_run_push_is_a_server_error(driver_api, body):
    response = driver_api.post("/api/runs/", body, format="json")

    assert response.status_code in (200, 201, 400, 404, 409), response.content
    if response.status_code == 400:
        assert response.json()["errors"]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    url=st.sampled_from(
        [
            "/api/cases/",
            "/api/models/",
            "/api/gg-configurations/",
            "/api/combinations/",
            "/api/groups/",
            "/api/jobs/",
            "/api/driver/claim",
            "/api/auth/token",
        ]
    ),
    body=st.dictionaries(
        st.sampled_from(
            [
                "slug",
                "title",
                "kind",
                "name",
                "provider",
                "launchable",
                "roles",
                "harness",
                "model",
                "configuration",
                "bindings",
                "members",
                "case",
                "version",
                "combination",
                "retryCount",
                "max",
                "username",
                "password",
            ]
        ),
        json_values,
    ),
)
def test_no_catalog_or_launch_request_is_a_server_error(owner_api, driver_api, url, body):
    api = driver_api if url == "/api/driver/claim" else owner_api

    response = api.post(url, body, format="json")

    assert response.status_code < 500, response.content


def test_a_gg_configuration_with_roles_and_a_combination_survive_fuzzing_inputs(owner_api):
    configuration = GGConfigurationFactory(roles=["planner"])

    response = owner_api.post(
        "/api/combinations/",
        {"kind": "gg", "configuration": configuration.pk, "bindings": {"planner": "\x00"}},
        format="json",
    )

    assert_field_error(response, "bindings.planner")


@pytest.fixture
def objects(owner, driver, version, combination):
    run = finish(driver, hand_job(owner, version, combination))
    return {
        "run": run.pk,
        "group": CoverageGroupFactory(owner=owner, combinations=[combination]).pk,
        "configuration": GGConfigurationFactory().pk,
        "model": ModelEntryFactory().pk,
    }


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    target=st.sampled_from(
        [
            ("put", "/api/runs/{run}/"),
            ("post", "/api/runs/{run}/reviews"),
            ("put", "/api/groups/{group}/"),
            ("put", "/api/gg-configurations/{configuration}/"),
            ("patch", "/api/models/{model}/"),
        ]
    ),
    body=st.dictionaries(
        st.sampled_from(
            [
                "outcome",
                "record",
                "finishedAt",
                "aestheticRating",
                "writeup",
                "verdict",
                "name",
                "members",
                "roles",
                "provider",
                "launchable",
            ]
        ),
        json_values,
    ),
)
def test_no_update_or_review_is_a_server_error(owner_api, objects, target, body):
    method, url = target

    response = getattr(owner_api, method)(url.format(**objects), body, format="json")

    assert response.status_code < 500, response.content


def test_a_body_over_the_size_limit_is_a_400_on_body(driver_api, combination, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    body = push_body(case="jump-1", version="3", combination=combination.pk)
    body["record"] = {"blob": "x" * 20_000}

    response = driver_api.post("/api/runs/", body, format="json")

    assert_field_error(response, "body")
    assert response.json()["code"] == "too_large"
    assert Run.objects.count() == 0
