"""``cell`` alone names the coverage cell: the fields that held a combination cell or key were
renamed in place, so rows written before the rename read the same after it."""

import datetime as dt

import pytest

from tests.migrating import migrate_to, migrate_to_latest

BEFORE = [("runs", "0002_job_started_and_changes"), ("ladders", "0004_climber_pinned_key")]
AFTER = [("runs", "0003_combination_cell"), ("ladders", "0006_merge")]

CELL = {
    "harness": "aider",
    "model": "m1",
    "provider": "acme",
    "configuration": None,
    "boundModels": [],
}


@pytest.mark.django_db(transaction=True)
def test_jobs_runs_and_climbers_keep_their_combination_cells_and_keys():
    try:
        old = migrate_to(BEFORE)
        user = old.get_model("auth", "User").objects.create(username="olive")
        pin = {"case": "c", "version": "1", "variant": "default", "engine": None}
        key = "c@1/default/-::aider|m1|acme"
        job = old.get_model("runs", "Job").objects.create(
            owner_id=user.pk, cell=CELL, cell_key=key, **pin
        )
        run = old.get_model("runs", "Run").objects.create(
            job_id=job.pk,
            cell=CELL,
            cell_key=key,
            outcome="completed",
            finished_at=dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
            **pin,
        )
        ladder = old.get_model("ladders", "Ladder").objects.create(owner_id=user.pk, name="l")
        dispatch = old.get_model("ladders", "Dispatch").objects.create(
            ladder_id=ladder.pk,
            status="running",
            snapshot={},
            started_at=dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
        )
        climber = old.get_model("ladders", "DispatchClimber").objects.create(
            dispatch_id=dispatch.pk, position=0, key="aider|m1|acme", cell=CELL
        )

        new = migrate_to(AFTER)
        assert new.get_model("runs", "Job").objects.get(pk=job.pk).combination_cell == CELL
        assert new.get_model("runs", "Run").objects.get(pk=run.pk).combination_cell == CELL
        row = new.get_model("ladders", "DispatchClimber").objects.get(pk=climber.pk)
        assert (row.combination_key, row.combination_cell) == ("aider|m1|acme", CELL)
    finally:
        migrate_to_latest()
