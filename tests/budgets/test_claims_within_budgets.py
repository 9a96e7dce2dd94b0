"""API.md "Provider budgets": a claim never hands out a job whose budget is at its cap; jobs
under other budgets are claimed instead, and sources waiting on one budget take turns."""

import pytest
from django.utils import timezone

from loopweb.runs import services
from loopweb.runs.models import Job
from tests.budgets.helpers import a_minute_passes, budget, leased, queue, starts, turns
from tests.factories import CombinationFactory, GGConfigurationFactory, ModelEntryFactory
from tests.ladders.builders import push

pytestmark = pytest.mark.django_db


def claim(driver, n=1) -> list[Job]:
    return services.claim_jobs(driver=driver, limit=n)


def test_a_claim_stops_at_a_budgets_in_flight_cap(owner, driver, version, acme):
    budget(max_in_flight=3)
    queue(owner, version, acme, n=5)

    assert len(claim(driver, 10)) == 3
    assert claim(driver, 10) == []
    assert leased() == 3


def test_a_budget_at_its_cap_never_blocks_another_providers_jobs(
    owner, driver, version, acme, other
):
    budget(max_in_flight=1)
    first = queue(owner, version, acme, n=3)
    zenith = queue(owner, version, other, n=2)

    claimed = claim(driver, 10)

    assert sorted(j.pk for j in claimed) == sorted([first[0].pk, *(j.pk for j in zenith)])


def test_an_ended_job_frees_its_place(owner, driver, version, acme):
    budget(max_in_flight=1)
    queue(owner, version, acme, n=2)
    [job] = claim(driver)
    assert claim(driver) == []

    push(driver, job)

    assert len(claim(driver)) == 1


def test_a_model_budget_caps_that_model_only(owner, driver, version, acme, acme_small):
    budget(model="acme-large", max_in_flight=1)
    queue(owner, version, acme, n=2)
    queue(owner, version, acme_small, n=2)

    claimed = claim(driver, 10)

    assert sorted(j.combination_cell["model"] for j in claimed) == [
        "acme-large",
        "acme-small",
        "acme-small",
    ]


def test_a_job_must_fit_both_its_provider_and_its_model_budget(
    owner, driver, version, acme, acme_small
):
    budget(max_in_flight=2)
    budget(model="acme-large", max_in_flight=5)
    queue(owner, version, acme, n=3)
    queue(owner, version, acme_small, n=3)

    assert len(claim(driver, 10)) == 2


def test_a_gg_combination_is_under_the_budgets_of_each_of_its_models(owner, driver, version):
    ModelEntryFactory(name="plan-1", provider="acme")
    ModelEntryFactory(name="code-1", provider="zenith")
    configuration = GGConfigurationFactory(roles=["planner", "coder"])
    gg = CombinationFactory(
        kind="gg",
        harness="",
        model="",
        provider="",
        configuration_id=configuration.pk,
        bindings={"planner": "plan-1", "coder": "code-1"},
    )
    budget(provider="zenith", max_in_flight=1)
    queue(owner, version, gg, n=3)

    assert len(claim(driver, 10)) == 1


def test_a_per_minute_cap_counts_the_jobs_started_in_the_last_minute(owner, driver, version, acme):
    limit = budget(per_minute=2)
    queue(owner, version, acme, n=4)

    assert len(claim(driver, 10)) == 2
    assert claim(driver, 10) == []
    # A minute later (the starts were recorded by the second) the cap has room again.
    a_minute_passes(limit)
    assert len(claim(driver, 10)) == 2


def test_a_disabled_budget_caps_nothing(owner, driver, version, acme):
    budget(max_in_flight=1, enabled=False)
    queue(owner, version, acme, n=3)

    assert len(claim(driver, 10)) == 3


def test_dispatches_waiting_on_one_budget_take_turns(owner, driver, version, acme):
    budget(max_in_flight=1)
    queue(owner, version, acme, origin="ladder:1/d1/r1", n=4)
    queue(owner, version, acme, origin="ladder:2/d2/r1", n=4)
    order = []
    for _ in range(6):
        [job] = claim(driver)
        order.append(job.origin.split("/")[0])
        services.fail_job(job_id=job.pk, driver=driver, failure="harnessError")

    assert order == ["ladder:1", "ladder:2"] * 3


def test_a_claim_records_its_starts_and_the_budget_reads_them(owner, driver, version, acme):
    limit = budget(max_in_flight=10)
    queue(owner, version, acme, n=3)
    claim(driver, 3)

    recorded = starts(limit)
    assert sum(recorded.values()) == 3
    now = timezone.now()
    assert all(int(s) <= now.timestamp() < int(s) + 2 for s in recorded)
    assert turns(limit).keys() == {"manual"}


def test_a_claim_under_budgets_runs_a_bounded_number_of_queries(
    owner, driver_api, version, acme, other, django_assert_max_num_queries
):
    """The token; the enabled budgets and the queued candidates (one statement on PostgreSQL);
    the cells of their combinations (SQLite, once a minute a process); then on PostgreSQL the one
    locking call and the claimed jobs with their combinations (SQLite: the lock, the jobs in
    flight, the lease, the budgets' state, inside a transaction); then the reply's retries and gg
    names when there are some. (A budget created or changed by other ways than the API has its
    places laid out at the claim after.)"""
    budget(max_in_flight=30)
    budget(provider="zenith", max_in_flight=30)
    queue(owner, version, acme, n=15)
    queue(owner, version, other, n=15)
    driver_api.post("/api/driver/claim", {"max": 1}, format="json")
    for n in (2, 20):
        with django_assert_max_num_queries(10):
            answer = driver_api.post("/api/driver/claim", {"max": n}, format="json")
        assert len(answer.json()) == n


@pytest.mark.postgres
def test_a_claim_under_budgets_on_postgresql_is_three_statements(
    owner, driver_api, version, acme, other, django_assert_num_queries
):
    """The token; the enabled budgets with the queued candidates; the call that takes the jobs
    with their places and answers them with their combinations."""
    budget(max_in_flight=30, per_minute=100)
    budget(provider="zenith", max_in_flight=30)
    queue(owner, version, acme, n=5)
    queue(owner, version, other, n=5)
    driver_api.post("/api/driver/claim", {"max": 1}, format="json")  # lays out the places

    with django_assert_num_queries(3):
        answer = driver_api.post("/api/driver/claim", {"max": 4}, format="json")

    assert len(answer.json()) == 4
    assert leased() == 5
