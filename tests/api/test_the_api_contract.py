"""API.md "Conventions" and the OpenAPI schema: the schema is the contract. A field takes the
JSON type the schema names and nothing that merely looks like it, a constraint the server
enforces is stated in the schema, request bodies are JSON, and every error under /api/ answers
the API's JSON error shape, Django's own included. (``tests/fuzz`` checks the whole schema with
schemathesis; these are the cases found by it, one by one.)"""

import re

import pytest
from django.conf import settings
from django.test import Client

from loopweb.runs.models import CoverageGroup
from tests.factories import CaseFactory, CaseVersionFactory, CombinationFactory
from tests.runs.helpers import claim, finish, hand_job

pytestmark = pytest.mark.django_db


def assert_400_on(response, field: str) -> dict:
    assert response.status_code == 400, (response.status_code, response.content[:300])
    body = response.json()
    assert field in body["errors"], body
    return body


@pytest.fixture
def schema(anon_api):
    response = anon_api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return response.json()


def component(schema, name: str) -> dict:
    return schema["components"]["schemas"][name]


def request_schema(schema, path: str, method: str) -> dict:
    body = schema["paths"][path][method]["requestBody"]
    assert set(body["content"]) == {"application/json"}, body["content"].keys()
    found = body["content"]["application/json"]["schema"]
    if "$ref" in found:
        found = component(schema, found["$ref"].rsplit("/", 1)[1])
    return found


# -- a field takes the JSON type the schema names ---------------------------------------------


def test_a_string_is_not_a_boolean(owner_api):
    body = {"name": "gpt-z", "provider": "acme", "launchable": "true"}
    assert_400_on(owner_api.post("/api/models/", body, format="json"), "launchable")


@pytest.mark.parametrize("value", ["yes", 1, "false"])
def test_a_gates_early_stop_is_a_boolean(owner_api, value):
    body = {"name": "climb", "gate": {"earlyStop": value}}
    assert_400_on(owner_api.post("/api/ladders/", body, format="json"), "gate.earlyStop")


def test_a_proposal_says_whether_it_is_applicable_with_a_boolean(owner_api):
    body = {"title": "t", "authored_by": "llm", "applicable": "true", "outcome_evalset": {}}
    assert_400_on(owner_api.post("/api/proposals/", body, format="json"), "applicable")


@pytest.mark.parametrize("value", ["3", True, 2.5])
def test_a_string_or_a_boolean_is_not_a_number(driver_api, value):
    assert_400_on(driver_api.post("/api/driver/claim", {"max": value}, format="json"), "max")


def test_an_integer_may_be_written_with_a_zero_fraction_as_json_schema_reads_it(driver_api):
    assert driver_api.post("/api/driver/claim", {"max": 2.0}, format="json").status_code == 200


def test_a_number_is_not_a_string(owner_api):
    CaseFactory(slug="jump-1")
    version = {"version": "1", "engines": [5]}
    body = assert_400_on(
        owner_api.post("/api/cases/jump-1/versions/", version, format="json"), "engines.0"
    )
    assert body["code"] == "invalid"
    roles = {"name": "pair", "roles": ["planner", 7]}
    assert_400_on(owner_api.post("/api/gg-configurations/", roles, format="json"), "roles.1")


def test_an_id_given_as_a_string_is_not_an_id(owner_api):
    launch = {"case": "jump-1", "version": "1", "combination": str(CombinationFactory().pk)}
    assert_400_on(owner_api.post("/api/jobs/", launch, format="json"), "combination")


def test_an_array_is_not_an_object(driver_api):
    assert_400_on(driver_api.post("/api/driver/claim", [], format="json"), "non_field_errors")


def test_a_pattern_is_matched_whole_and_not_trimmed_into_shape(owner_api):
    CaseFactory(slug="jump-1")
    for version in (" 1", "1\n"):
        body = {"version": version}
        response = owner_api.post("/api/cases/jump-1/versions/", body, format="json")
        assert_400_on(response, "version")


@pytest.mark.parametrize(
    "moment", ["2026-03-01 12:00:00Z", "2026-03-01T12:00:00", "1899-12-31T00:00:00Z"]
)
def test_a_timestamp_is_rfc_3339_with_a_zone_between_1900_and_9998(owner_api, moment):
    CaseFactory(slug="jump-1")
    body = {"version": "1", "ingestedAt": moment}
    assert_400_on(owner_api.post("/api/cases/jump-1/versions/", body, format="json"), "ingestedAt")


def test_a_timestamp_with_an_offset_postgresql_cannot_hold_is_stored_as_its_instant(
    owner_api, owner, driver, combination_and_version
):
    combination, version = combination_and_version
    run = finish(driver, claim(driver, hand_job(owner, version, combination)))
    signal = {
        "id": "t",
        "kind": "verdict",
        "name": "tests",
        "value": "pass",
        "observed_at": "2026-03-01T00:20:00-23:44",
        "tier": "verified",
    }
    response = owner_api.post(f"/api/runs/{run.pk}/signals", signal, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["observed_at"] == "2026-03-02T00:04:00Z"


# -- query parameters -------------------------------------------------------------------------


@pytest.mark.parametrize("size", ["abc", "0", "501", "2.5", ""])
def test_a_page_size_is_an_integer_from_1_to_500(owner_api, size):
    assert_400_on(owner_api.get("/api/runs/", {"pageSize": size}), "pageSize")


@pytest.mark.parametrize("page", ["", "abc", "0", "-1", "2.5", "last", " 1"])
def test_a_page_is_an_integer_of_1_or_more(owner_api, page):
    """An empty ``page`` is not the first page: the schema says an integer from 1."""
    assert_400_on(owner_api.get("/api/jobs/", {"page": page}), "page")


@pytest.mark.parametrize("past", ["2", "8268275584270146786557952", "9" * 5000])
def test_a_page_past_the_last_is_not_found(owner_api, past):
    """Any integer of 1 or more is a page (the schema sets no maximum): one past the last,
    however many digits it has, is a 404."""
    assert owner_api.get("/api/jobs/", {"page": "1"}).status_code == 200
    assert owner_api.get("/api/jobs/", {"page": past}).status_code == 404


def test_a_page_with_leading_zeros_is_that_page(owner_api):
    """However many zeros lead it, page 1 is the first page (not one past any last)."""
    assert owner_api.get("/api/jobs/", {"page": "0" * 30 + "1"}).status_code == 200


@pytest.mark.parametrize("value", ["maybe", "1", "True", ""])
def test_a_boolean_filter_is_true_or_false(owner_api, value):
    assert_400_on(owner_api.get("/api/runs/", {"reviewed": value}), "reviewed")
    assert_400_on(owner_api.get("/api/runs/", {"published": value}), "published")


def test_a_boolean_filter_filters(owner_api):
    assert owner_api.get("/api/runs/", {"reviewed": "false", "pageSize": 5}).status_code == 200


def test_a_choice_filter_is_one_of_its_choices(owner_api):
    assert_400_on(owner_api.get("/api/jobs/", {"status": "sleeping"}), "status")
    assert_400_on(owner_api.get("/api/jobs/", {"status": ""}), "status")


# -- ids --------------------------------------------------------------------------------------


@pytest.mark.parametrize("huge", [2**63, 10**30])
def test_an_id_past_the_id_range_is_a_400_on_its_field(owner_api, huge):
    body = {"name": "g", "members": [huge]}
    assert_400_on(owner_api.post("/api/groups/", body, format="json"), "members.0")
    ladder = {"name": "climb", "combinations": [huge], "groups": [huge]}
    response = owner_api.post("/api/ladders/", ladder, format="json")
    assert_400_on(response, "combinations.0")
    assert_400_on(response, "groups.0")
    assert not CoverageGroup.objects.exists()


@pytest.mark.parametrize(
    "url", ["/api/cases/a%00b/", "/api/cases/a%00b/versions/", "/api/evalsets/ab%00/"]
)
def test_a_path_part_holding_nul_names_nothing(owner_api, url):
    response = owner_api.get(url)
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


@pytest.mark.parametrize("url", ["/api/jobs/?origin=a%00", "/api/runs/?cellKey=%00"])
def test_a_filter_holding_nul_is_a_400(owner_api, url):
    assert owner_api.get(url).status_code == 400


# -- JSON bodies, JSON errors -----------------------------------------------------------------


def test_a_form_body_is_refused_with_415_in_the_api_error_shape(owner_api):
    response = owner_api.post("/api/groups/", {"name": "g"}, format="multipart")
    assert response.status_code == 415
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"]
    assert not CoverageGroup.objects.exists()


def signed_in_with_a_csrf_cookie(user) -> Client:
    """A browser session whose CSRF check reads the form it posts (it has the cookie)."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    client.cookies[settings.CSRF_COOKIE_NAME] = "a" * 32
    return client


@pytest.mark.parametrize("fmt", ["multipart", "urlencoded"])
def test_a_form_with_too_many_fields_is_a_json_error_not_an_html_page(owner_api, owner, fmt):
    fields = {f"f{i}": "1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1)}
    if fmt == "multipart":
        response = owner_api.post("/api/groups/", fields, format="multipart")
    else:
        client = signed_in_with_a_csrf_cookie(owner)
        raw = "&".join(f"{k}={v}" for k, v in fields.items())
        response = client.post(
            "/api/groups/", raw, content_type="application/x-www-form-urlencoded"
        )
    assert response.status_code == 415
    assert response["Content-Type"] == "application/json"
    assert response.json()["detail"]


def test_a_page_outside_api_keeps_djangos_html_400(owner):
    client = signed_in_with_a_csrf_cookie(owner)
    fields = "&".join(f"f{i}=1" for i in range(settings.DATA_UPLOAD_MAX_NUMBER_FIELDS + 1))
    response = client.post(
        "/ladders/new/", fields, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")


def test_a_host_not_allowed_under_api_is_a_json_400(anon_api):
    response = anon_api.get("/api/schema/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert response.json()["code"] == "bad_request"


def test_the_api_answers_json_only(owner_api):
    response = owner_api.get("/api/runs/", HTTP_ACCEPT="text/html")
    assert response.status_code == 406
    assert response.json()["detail"]


# -- the schema states the constraints the server enforces -----------------------------------


def test_every_request_body_is_json_and_states_its_requirements(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if "requestBody" in operation:
                assert set(operation["requestBody"]["content"]) == {"application/json"}, path
                assert "415" in operation["responses"], (method, path)


def test_the_schema_states_the_evalset_and_proposal_formats(schema):
    pins = request_schema(schema, "/api/evalsets/", "post")["properties"]["pins"]
    assert (pins["minItems"], pins["maxItems"], pins["uniqueItems"]) == (1, 500, True)
    proposal = request_schema(schema, "/api/proposals/", "post")["properties"]
    assert proposal["applicable"]["type"] == "boolean"
    policy = component(schema, proposal["outcome_evalset"]["$ref"].rsplit("/", 1)[1])
    assert policy["type"] == "object" and policy["additionalProperties"] is False
    assert set(policy["required"]) == {"hash", "field", "higher_is_better"}


def test_the_schema_states_a_signals_value_by_its_kind(schema):
    signal = component(schema, "SignalInput")
    assert signal["additionalProperties"] is False
    verdict = next(
        rule for rule in signal["allOf"] if rule["if"]["properties"]["kind"] == {"const": "verdict"}
    )
    assert verdict["then"]["properties"]["value"]["enum"] == [
        "accept",
        "reject",
        "pass",
        "fail",
        "error",
    ]


def test_the_schema_states_distinct_items_and_bounded_ids(schema):
    members = request_schema(schema, "/api/groups/", "post")["properties"]["members"]
    assert members["uniqueItems"] is True
    assert members["items"]["maximum"] == 2**63 - 1
    parameters = schema["paths"]["/api/runs/"]["get"]["parameters"]
    page_size = next(p for p in parameters if p["name"] == "pageSize")["schema"]
    assert (page_size["minimum"], page_size["maximum"]) == (1, 500)
    reviewed = next(p for p in parameters if p["name"] == "reviewed")["schema"]
    assert reviewed["type"] == "boolean"


def test_the_schema_states_that_text_is_neither_blank_nor_holds_nul(schema):
    name = request_schema(schema, "/api/groups/", "post")["properties"]["name"]
    pattern = re.compile(name["pattern"])
    assert pattern.search("climbers")
    assert not pattern.search("   ")
    assert not pattern.search("a\x00b")


@pytest.fixture
def combination_and_version(db):
    return CombinationFactory(), CaseVersionFactory()
