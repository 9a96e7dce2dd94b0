"""The driver client and ``loopweb-driver`` release a job whose executed function raised
``RateLimited`` (the provider's 429 before the model did anything): the job is queued again as
it was, the budget backs off, and the next claim of it runs."""

import threading

import pytest

from loopweb.driver import Driver, RateLimited, RunResult, cli
from loopweb.runs.models import ApiToken, Job, ProviderBudget
from tests.budgets.helpers import budget, queue
from tests.runs.helpers import PERFECT

pytestmark = pytest.mark.django_db(transaction=True)


def token_of(driver) -> str:
    _, raw = ApiToken.objects.issue(driver, name="driver")
    return raw


def test_the_driver_releases_a_rate_limited_job_and_runs_it_when_claimed_again(
    live_server, owner, driver, version, acme
):
    limit = budget(max_in_flight=8)
    [job] = queue(owner, version, acme)
    calls = []

    def execute(claimed):
        calls.append(claimed.attempt)
        if len(calls) == 1:
            raise RateLimited(retry_after=0)
        return RunResult(record=PERFECT)

    client = Driver(live_server.url, token_of(driver), poll_interval=0.05)
    assert client.serve(execute, max_jobs=2) == 2

    job.refresh_from_db()
    assert calls == [1, 1]
    assert (job.status, job.attempt, job.retry_id) == ("completed", 1, None)
    assert Job.objects.count() == 1
    limit.refresh_from_db()
    assert (limit.backoff_cap, limit.backoff_from) == (4, 8)


def test_loopweb_driver_releases_what_its_function_raised_rate_limited_on(
    live_server, owner, driver, version, acme
):
    budget(max_in_flight=2)
    queue(owner, version, acme, n=3)
    stop = threading.Event()
    seen = []

    def execute(claimed):
        seen.append(claimed.id)
        if len(seen) <= 2:
            raise RateLimited(retry_after=0)
        return RunResult(record=PERFECT)

    threads = cli.start(live_server.url, token_of(driver), execute=execute, poll=0.05, stop=stop)
    try:
        for _ in range(400):
            if Job.objects.filter(status="completed").count() == 3:
                break
            stop.wait(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=10)

    assert Job.objects.filter(status="completed", attempt=1).count() == 3
    assert Job.objects.count() == 3
    assert ProviderBudget.objects.get().backoff_from == 2
