"""/metrics has each enabled budget's jobs in flight, starts in the last minute and effective
caps, a back-off included."""

import pytest
from django.test import Client, override_settings

from loopweb.runs import services
from tests.budgets.helpers import budget, queue

pytestmark = pytest.mark.django_db


@override_settings(DEBUG=True, LOOPWEB_METRICS_TOKEN="")
def test_metrics_report_each_budgets_in_flight_starts_and_effective_cap(
    owner, driver, version, acme
):
    limit = budget(max_in_flight=4, per_minute=60)
    model = budget(model="zen-1", provider="zenith")
    budget(provider="off", enabled=False)
    queue(owner, version, acme, n=3)
    [job, *_] = services.claim_jobs(driver=driver, limit=3)
    services.release_job(job_id=job.pk, driver=driver, reason="rateLimited", retry_after=30)

    text = Client().get("/metrics").content.decode()

    acme_labels = f'budget="{limit.pk}",model="*",provider="acme"'
    assert f"loopweb_budget_in_flight{{{acme_labels}}} 2.0" in text
    assert f"loopweb_budget_started_last_minute{{{acme_labels}}} 3.0" in text
    assert f"loopweb_budget_in_flight_cap{{{acme_labels}}} 2.0" in text
    assert f"loopweb_budget_per_minute_cap{{{acme_labels}}} 30.0" in text
    assert f"loopweb_budget_backoff_factor{{{acme_labels}}} 0.5" in text
    zen = f'budget="{model.pk}",model="zen-1",provider="zenith"'
    assert f"loopweb_budget_in_flight{{{zen}}} 0.0" in text
    assert f"loopweb_budget_in_flight_cap{{{zen}}}" not in text
    assert 'provider="off"' not in text
