"""Error field names are the contract's: a nested object's own error is named by the field
(``rungs``), never by the framework (``rungs.non_field_errors``); lists read as sentences."""

from rest_framework.exceptions import ErrorDetail

from loopweb.runs.errors import leaves, unknown
from tests.ladders.builders import config


def test_a_nested_objects_own_error_is_named_by_its_field():
    detail = {
        "rungs": {"non_field_errors": [ErrorDetail("Expected a list.", code="not_a_list")]},
        "gate": {"threshold": {"non_field_errors": [ErrorDetail("Give one.", code="invalid")]}},
        "non_field_errors": [ErrorDetail("Top level.", code="invalid")],
    }
    assert [path for path, _, _ in leaves(detail)] == [
        "rungs",
        "gate.threshold",
        "non_field_errors",
    ]


def test_unknown_items_read_as_a_sentence():
    assert unknown("user", ["nosuchuser"]) == "Unknown user: nosuchuser."
    assert unknown("combination id", [4, 5, 6]) == "Unknown combination ids: 4, 5 and 6."


def test_the_api_names_rungs_and_lists_unknown_users_in_words(owner_api, db):
    body = {**config(reviewers=["nosuchuser"]), "rungs": "not a list"}
    response = owner_api.post("/api/ladders/", body, format="json")
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert "rungs" in errors and not any("non_field_errors" in key for key in errors)
    assert errors["reviewers"] == ["Unknown user: nosuchuser."]
