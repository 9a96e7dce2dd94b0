"""API.md "Provider budgets": staff write budgets, everyone signed in reads them with their live
figures; bad input is a 400 naming the field and the rule."""

import pytest

from loopweb.runs import services
from loopweb.runs.models import ProviderBudget
from tests.budgets.helpers import budget, queue

pytestmark = pytest.mark.django_db

URL = "/api/budgets/"


@pytest.fixture
def staff_api(staff, token_client):
    return token_client(staff)


def test_staff_create_a_budget_and_everyone_signed_in_reads_it(
    staff_api, owner_api, reviewer_api, driver_api, anon_api
):
    answer = staff_api.post(
        URL, {"provider": "acme", "maxInFlight": 16, "perMinute": 100}, format="json"
    )

    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert body == {
        "id": body["id"],
        "provider": "acme",
        "model": None,
        "maxInFlight": 16,
        "perMinute": 100,
        "enabled": True,
        "inFlight": 0,
        "startedLastMinute": 0,
        "inFlightCap": 16,
        "perMinuteCap": 100,
        "backoff": {"factor": 1.0, "until": None},
    }
    for api in (owner_api, reviewer_api, driver_api):
        listed = api.get(URL).json()
        assert listed["count"] == 1 and listed["results"][0]["provider"] == "acme"
        assert api.get(f"{URL}{body['id']}/").status_code == 200
    assert anon_api.get(URL).status_code in (401, 403)


def test_only_staff_write_budgets(owner_api, driver_api):
    limit = budget(max_in_flight=3)
    for api in (owner_api, driver_api):
        assert api.post(URL, {"provider": "zenith"}, format="json").status_code == 403
        assert api.patch(f"{URL}{limit.pk}/", {"maxInFlight": 9}, format="json").status_code == 403
        assert api.delete(f"{URL}{limit.pk}/").status_code == 403
    limit.refresh_from_db()
    assert limit.max_in_flight == 3


def test_staff_change_and_delete_a_budget(staff_api):
    limit = budget(model="acme-large", max_in_flight=3)

    answer = staff_api.patch(f"{URL}{limit.pk}/", {"maxInFlight": 8}, format="json")
    assert answer.status_code == 200
    assert answer.json()["maxInFlight"] == 8 and answer.json()["inFlightCap"] == 8
    answer = staff_api.put(
        f"{URL}{limit.pk}/",
        {"provider": "acme", "model": None, "perMinute": 5, "enabled": False},
        format="json",
    )
    assert answer.status_code == 200
    assert answer.json()["model"] is None and answer.json()["maxInFlight"] is None
    assert staff_api.delete(f"{URL}{limit.pk}/").status_code == 204
    assert not ProviderBudget.objects.exists()


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({}, "provider", "required"),
        ({"provider": "  "}, "provider", "blank"),
        ({"provider": "acme", "maxInFlight": 0}, "maxInFlight", "greater than or equal to 1"),
        ({"provider": "acme", "perMinute": -3}, "perMinute", "greater than or equal to 1"),
        ({"provider": "acme", "maxInFlight": "5"}, "maxInFlight", "valid integer"),
        ({"provider": "acme", "perMinute": 2.5}, "perMinute", "valid integer"),
        ({"provider": "acme", "enabled": "yes"}, "enabled", ""),
        ({"provider": "x" * 101}, "provider", "100 characters"),
    ],
)
def test_a_bad_budget_is_a_400_naming_the_field_and_the_rule(staff_api, body, field, words):
    answer = staff_api.post(URL, body, format="json")

    assert answer.status_code == 400
    errors = answer.json()["errors"]
    assert list(errors) == [field]
    assert words.lower() in " ".join(errors[field]).lower()


def test_a_second_budget_for_the_same_target_is_a_400_on_model(staff_api):
    budget(provider="acme")
    answer = staff_api.post(URL, {"provider": "acme"}, format="json")

    assert answer.status_code == 400
    assert answer.json()["errors"] == {
        "model": ["A budget for every model of acme already exists."]
    }
    assert staff_api.post(URL, {"provider": "acme", "model": "m"}, format="json").status_code == 201


def test_a_budget_reads_its_jobs_in_flight_and_started_in_the_last_minute(
    staff_api, owner, driver, version, acme, other
):
    limit = budget(max_in_flight=4)
    queue(owner, version, acme, n=3)
    queue(owner, version, other, n=2)
    services.claim_jobs(driver=driver, limit=10)

    body = staff_api.get(f"{URL}{limit.pk}/").json()

    assert (body["inFlight"], body["startedLastMinute"]) == (3, 3)


def test_the_budget_list_reads_a_fixed_number_of_queries(staff_api, django_assert_max_num_queries):
    for i in range(12):
        budget(provider=f"p{i}", max_in_flight=i + 1)
    # Token, count, page, jobs in flight by cell (no gg model: no catalog read).
    with django_assert_max_num_queries(5):
        assert staff_api.get(URL).json()["count"] == 12
