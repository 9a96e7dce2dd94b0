"""Runs stored before checklist overrides existed have none: their stored rating is their
validator rating from the migration on (runs 0010), and the copy records no change for a
board to read."""

import datetime as dt

import pytest

from tests.migrating import migrate_to, migrate_to_latest

BEFORE = [("runs", "0009_review_values")]
AFTER = [("runs", "0010_checklist_overrides")]


@pytest.mark.django_db(transaction=True)
def test_earlier_runs_store_their_validator_rating():
    try:
        old = migrate_to(BEFORE)
        pin = {"case": "c", "version": "1", "variant": "default", "engine": None}
        runs = {
            rating: old.get_model("runs", "Run")
            .objects.create(
                cell_key=f"c@1/default/-::h|{rating}|p",
                outcome="completed",
                validator_rating=rating,
                finished_at=dt.datetime(2030, 1, 1, tzinfo=dt.UTC),
                **pin,
            )
            .pk
            for rating in ("great", "broken", None)
        }
        changes = old.get_model("runs", "Change").objects.count()

        new = migrate_to(AFTER)

        Run = new.get_model("runs", "Run")
        for rating, pk in runs.items():
            assert Run.objects.get(pk=pk).stored_rating == rating
        assert new.get_model("runs", "Change").objects.count() == changes
    finally:
        migrate_to_latest()
