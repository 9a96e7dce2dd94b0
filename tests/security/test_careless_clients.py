"""What a careless client sends is answered as HTTP and the contract say: ``If-None-Match: *``
is a 304 for a board that exists, a ``?since=`` that is not a version this server gave is a 400
naming it, an explicit ``?format=csv`` wins over an ``Accept`` header, and the token endpoint's
429 is in the schema its clients read."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from ladders import services
from tests.ladders.builders import climbers, make_ladder, versions

pytestmark = pytest.mark.django_db


@pytest.fixture
def ladder(owner):
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder)
    return ladder


@pytest.mark.django_db(transaction=True)  # a board's version sees only committed writes
def test_if_none_match_star_is_a_304_for_a_board_that_exists(owner_api, ladder):
    response = owner_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH="*")
    assert response.status_code == 304
    again = owner_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304, "the version a * answered is the board's current one"


def test_if_none_match_star_reveals_no_other_owners_board(outsider_api, ladder):
    response = outsider_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH="*")
    assert response.status_code == 404


@pytest.mark.parametrize("since", ["", "nonsense", "1.2", "x_y_z.0.a", "9" * 5000, "1_2_.².0"])
def test_a_since_that_is_no_version_is_a_400_naming_it(owner_api, ladder, since):
    response = owner_api.get(f"/api/ladders/{ladder.pk}/progress", {"since": since})
    assert response.status_code == 400, response.content[:200]
    assert "since" in response.json()["errors"]


def test_a_version_this_server_gave_is_still_read(owner_api, ladder):
    """(Whether it can be followed is ``tests/ladders/test_read_your_writes.py``'s to say.)"""
    version = owner_api.get(f"/api/ladders/{ladder.pk}/progress")["ETag"].strip('"')
    response = owner_api.get(f"/api/ladders/{ladder.pk}/progress", {"since": version})
    assert response.status_code == 200
    assert "since" in response.json()


@pytest.mark.parametrize("path", ["progress", "compare?a=current&b=current&"])
def test_an_explicit_format_wins_over_the_accept_header(owner_api, ladder, path):
    joiner = "" if path.endswith("&") else "?"
    response = owner_api.get(
        f"/api/ladders/{ladder.pk}/{path}{joiner}format=csv", HTTP_ACCEPT="application/json"
    )
    assert response.status_code == 200, response.content[:200]
    assert response["Content-Type"].startswith("text/csv")


def test_the_token_endpoints_429_is_in_the_schema():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    responses = schema["paths"]["/api/auth/token"]["post"]["responses"]
    assert "429" in responses
    assert "401" in responses
