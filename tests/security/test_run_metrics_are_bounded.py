"""A run's ``record.metrics`` is free JSON but for its known numbers, which are totalled into a
dispatch's cost: a count of tokens, micro-dollars or milliseconds is a non-negative integer no
larger than ``METRIC_MAX``, and ``runtime_s`` a non-negative number of seconds, or each null. A
push with anything else is a 400 naming the field; totals never read 1.19e21 again."""

import pytest

from loopweb.runs.models import Run
from loopweb.runs.numbers import METRIC_MAX
from tests.factories import CaseVersionFactory, CombinationFactory
from tests.runs.helpers import PERFECT, claim, hand_job

pytestmark = pytest.mark.django_db


@pytest.fixture
def job(owner, driver):
    return claim(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()))


def push(driver_api, job, metrics):
    record = {**PERFECT, "metrics": metrics}
    body = {
        "job": job.pk,
        "outcome": "completed",
        "record": record,
        "finishedAt": "2030-01-01T00:00:00Z",
    }
    return driver_api.post("/api/runs/", body, format="json")


@pytest.mark.parametrize(
    ("metrics", "field"),
    [
        ({"output_tokens": -5}, "record.metrics.output_tokens"),
        ({"usd_micros": 2**70}, "record.metrics.usd_micros"),
        ({"wall_ms": 1e300}, "record.metrics.wall_ms"),
        ({"input_tokens": METRIC_MAX + 1}, "record.metrics.input_tokens"),
        ({"input_tokens": 1.5}, "record.metrics.input_tokens"),
        ({"usd_micros": "12"}, "record.metrics.usd_micros"),
        ({"usd_micros": True}, "record.metrics.usd_micros"),
        ({"runtime_s": -1}, "record.metrics.runtime_s"),
        ({"runtime_s": 1e300}, "record.metrics.runtime_s"),
    ],
)
def test_a_metric_out_of_range_refuses_the_push_naming_it(driver_api, job, metrics, field):
    response = push(driver_api, job, metrics)
    assert response.status_code == 400, response.content
    assert field in response.json()["errors"], response.json()
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "metrics",
    [
        {"input_tokens": 0, "output_tokens": METRIC_MAX, "usd_micros": 1_250_000, "wall_ms": 3.0},
        {"input_tokens": None, "runtime_s": 12.5, "tokens_per_second": -3, "note": "free"},
        {},
    ],
)
def test_metrics_in_range_and_keys_of_the_drivers_own_are_kept(driver_api, job, metrics):
    response = push(driver_api, job, metrics)
    assert response.status_code == 201, response.content
    assert response.json()["record"]["metrics"] == metrics
