"""The push's floors do the contract's own writes, the same ones a push does: a push compared
with them is compared with its own job (``bench.push_floor``)."""

import pytest
from django.test import override_settings

from loopweb.runs.models import Change, Job
from tests.factories import CaseVersionFactory, CombinationFactory
from tests.runs.helpers import PERFECT, claim, hand_job

pytestmark = [pytest.mark.django_db, pytest.mark.postgres]


def writes_of(job: Job) -> dict:
    """What a push of the job wrote, named by what it is rather than by ids."""
    job.refresh_from_db()
    run = job.run
    return {
        "job": (job.status, job.finished_at is not None, job.lease_holder_id, job.retry_id),
        "run": (
            run.cell_key,
            run.owner_id,
            run.pushed_by_id,
            run.outcome,
            run.counted,
            run.validator_rating,
            run.build_loaded,
        ),
        "signals": [
            (s.signal_id, s.kind, s.name, s.value, s.unit, s.better, s.scale, s.tier, s.source)
            for s in run.signals.all()
        ],
        "marks": sorted(Change.objects.filter(key=job.cell_key).values_list("key", flat=True)),
    }


@override_settings(ROOT_URLCONF="bench.urls")
def test_both_floors_write_what_a_push_writes(owner, driver, driver_api):
    # A record the push rates flawless, as both floors store it.
    record = {**PERFECT, "metrics": {"runtime_s": 12.5}}
    written = {}
    for path in ("/api/runs/", "/bench/push", "/bench/push-orm"):
        # A cell of its own for each, so each one's marks are its own.
        job = claim(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()))
        body = {
            "job": job.pk,
            "outcome": "completed",
            "record": record,
            "finishedAt": "2026-11-30T00:00:00Z",
        }

        response = driver_api.post(path, body, format="json")

        assert response.status_code == 201, (path, response.content)
        found = writes_of(job)
        written[path] = {**found, "run": found["run"][1:], "marks": len(found["marks"])}
        assert found["run"][0] == job.cell_key

    push = written.pop("/api/runs/")
    assert push["job"] == ("completed", True, driver.pk, None)
    assert push["run"][-2:] == ("flawless", True)
    signal = (
        "runtime_s:1",
        "score",
        "runtime_s",
        12.5,
        "s",
        "lower",
        "log",
        "measured",
        "platform",
    )
    assert push["signals"] == [signal]
    assert push["marks"] >= 1
    assert written == {"/bench/push": push, "/bench/push-orm": push}
