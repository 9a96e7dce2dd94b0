"""The budgets' pure rules: what a job is under, back-off and recovery, the rolling minute, and
which queued jobs a claim takes."""

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from loopweb.runs import budgets as rules
from loopweb.runs.models import ProviderBudget

NOW = dt.datetime(2026, 12, 3, 12, 0, tzinfo=dt.UTC)


def make(**values) -> ProviderBudget:
    values.setdefault("provider", "acme")
    return ProviderBudget(id=values.pop("id", 1), **values)


def test_a_provider_budget_covers_every_model_of_the_provider_and_a_model_budget_one():
    provider, model = make(), make(model="acme-large")
    assert rules.covers(provider, ("acme", "acme-small"))
    assert not rules.covers(model, ("acme", "acme-small"))
    assert rules.covers(model, ("acme", "acme-large"))
    assert not rules.covers(provider, ("zenith", "acme-large"))


def test_a_gg_cell_calls_each_of_its_bound_models_with_its_own_provider():
    cell = {
        "harness": "gg",
        "model": "planner",
        "provider": "acme",
        "configuration": 3,
        "boundModels": ["coder", "planner"],
    }
    assert rules.targets(cell, {"coder": "zenith"}) == {("acme", "planner"), ("zenith", "coder")}
    harness = {"harness": "aider", "model": "m", "provider": "p", "configuration": None}
    assert rules.targets(harness, {}) == {("p", "m")}


def test_a_release_halves_the_cap_until_retry_after_then_it_grows_back_one_per_ten_seconds():
    budget = make(max_in_flight=8)
    rules.back_off(budget, NOW, in_flight=8, retry_after=30)
    assert rules.in_flight_cap(budget, NOW) == 4
    assert rules.factor(budget, NOW) == 0.5
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=29)) == 4
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=40)) == 5
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=69)) == 7
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=70)) == 8
    assert rules.recovering_cap(budget, NOW + dt.timedelta(seconds=70)) is None


def test_a_second_release_halves_again_but_never_below_one():
    budget = make(max_in_flight=4)
    rules.back_off(budget, NOW, in_flight=4, retry_after=None)
    rules.back_off(budget, NOW, in_flight=2, retry_after=None)
    assert rules.in_flight_cap(budget, NOW) == 1
    rules.back_off(budget, NOW, in_flight=1, retry_after=None)
    assert rules.in_flight_cap(budget, NOW) == 1
    # Without retryAfter the back-off holds a minute.
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=59)) == 1
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=80)) == 3


def test_a_budget_with_no_in_flight_cap_halves_what_it_had_in_flight():
    budget = make(per_minute=100)
    rules.back_off(budget, NOW, in_flight=6, retry_after=10)
    assert rules.in_flight_cap(budget, NOW) == 3
    assert rules.per_minute_cap(budget, NOW) == 50
    assert rules.in_flight_cap(budget, NOW + dt.timedelta(seconds=40)) is None


def test_the_rolling_minute_counts_the_last_sixty_seconds_and_one_more():
    budget = make(per_minute=5)
    rules.record_starts(budget, NOW, 3)
    rules.record_starts(budget, NOW + dt.timedelta(seconds=30), 2)
    assert rules.started_last_minute(budget, NOW + dt.timedelta(seconds=30)) == 5
    assert rules.room(budget, NOW + dt.timedelta(seconds=30), 0) == 0
    assert rules.started_last_minute(budget, NOW + dt.timedelta(seconds=60)) == 5
    assert rules.started_last_minute(budget, NOW + dt.timedelta(seconds=61)) == 2
    # Seconds older than the window are dropped as the next start is recorded.
    rules.record_starts(budget, NOW + dt.timedelta(seconds=85), 1)
    assert set(budget.starts) == {str(int(NOW.timestamp()) + s) for s in (30, 85)}


def candidates(*specs):
    return [rules.Candidate(i + 1, source, frozenset(b)) for i, (source, b) in enumerate(specs)]


def test_a_claim_takes_the_oldest_but_never_past_a_budgets_room():
    jobs = candidates(("a", {1}), ("a", {1}), ("b", set()), ("a", {1}))
    picked, _ = rules.pick(jobs, {1: 1}, {}, limit=3, clock=0.0)
    assert [c.id for c in picked] == [1, 3]


def test_sources_waiting_on_one_budget_take_turns():
    # Ladder a enqueued all of its jobs before ladder b.
    jobs = candidates(*[("a/", {1})] * 4, *[("b/", {1})] * 4)
    turns: dict = {}
    order = []
    for clock in range(6):
        picked, served = rules.pick(jobs, {1: 1}, turns, limit=1, clock=float(clock))
        order.append(picked[0].source)
        jobs.remove(picked[0])
        turns = {1: {**turns.get(1, {}), **served[1]}}
    assert order == ["a/", "b/", "a/", "b/", "a/", "b/"]


def test_within_one_claim_sources_take_turns_too():
    jobs = candidates(*[("a/", {1})] * 4, *[("b/", {1})] * 4)
    picked, _ = rules.pick(jobs, {1: 4}, {1: {"a/": 5.0}}, limit=4, clock=10.0)
    assert [c.source for c in picked] == ["b/", "a/", "b/", "a/"]


def test_the_budget_a_queued_job_waits_on():
    assert rules.blocking({2, 1}, {1: 0, 2: 0}) == 1
    assert rules.blocking({2}, {1: 0, 2: 3}) is None
    assert rules.blocking(set(), {1: 0}) is None


def test_an_origin_takes_turns_as_its_dispatch():
    assert rules.source("ladder:4/d1/r9") == "ladder:4/d1/"
    assert rules.source("manual") == "manual"


@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.sets(st.integers(1, 3))), max_size=30),
    st.dictionaries(st.integers(1, 3), st.integers(0, 5)),
    st.integers(1, 10),
)
def test_a_claim_never_takes_more_than_a_budgets_room_or_its_limit(specs, rooms, limit):
    jobs = candidates(*specs)
    picked, _ = rules.pick(jobs, rooms, {}, limit=limit, clock=0.0)
    assert len(picked) <= limit
    assert len({c.id for c in picked}) == len(picked)
    for budget_id, room in rooms.items():
        assert sum(budget_id in c.budgets for c in picked) <= room
    # What it left fits nowhere, or the claim was full.
    if len(picked) < limit:
        used = {b: sum(b in c.budgets for c in picked) for b in rooms}
        for c in jobs:
            if c not in picked:
                assert any(rooms.get(b, 0) - used.get(b, 0) <= 0 for b in c.budgets)
