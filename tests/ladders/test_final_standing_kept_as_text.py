"""A final standing is a document written and read whole: kept as JSON text (compressed with lz4
where PostgreSQL has it), and a standing frozen before the change reads the same after it (and
after the document's version 2, ``tests/history/test_an_ended_standing_is_stored_once.py``)."""

import datetime as dt
import json
import uuid
from decimal import Decimal

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection

from ladders.fields import JSONText
from ladders.models import FinalStanding
from tests.ladders.builders import climbers, make_ladder, versions
from tests.migrating import migrate_to, migrate_to_latest

BEFORE = [("ladders", "0007_final_standing_ending")]
AFTER = [("ladders", "0008_final_standing_climbers_as_text")]
CLIMBERS = [
    {
        "body": {"key": "aider|m1|acme", "label": "m1 · “quoted” ü", "slots": [{"rung": "r1"}]},
        "runs": [[1, 2]],
        "completed": [[2]],
    }
]


@pytest.mark.django_db(transaction=True)
def test_a_standing_frozen_before_reads_the_same_after():
    try:
        old = migrate_to(BEFORE)
        user = old.get_model("auth", "User").objects.create(username="olive")
        ladder = old.get_model("ladders", "Ladder").objects.create(owner_id=user.pk, name="l")
        at = dt.datetime(2030, 1, 1, tzinfo=dt.UTC)
        dispatch = old.get_model("ladders", "Dispatch").objects.create(
            ladder_id=ladder.pk, status="stopped", snapshot={}, started_at=at, ended_at=at
        )
        old.get_model("ladders", "FinalStanding").objects.create(
            dispatch_id=dispatch.pk, slot_counts={"skipped": 1}, climbers=CLIMBERS, frozen_at=at
        )
        new = migrate_to(AFTER)
        kept = new.get_model("ladders", "FinalStanding").objects.get(dispatch_id=dispatch.pk)
        assert kept.climbers == CLIMBERS
    finally:
        migrate_to_latest()


def test_it_is_the_text_json_writes_with_djangos_encoder_in_utf_8():
    value = [
        *CLIMBERS,
        {
            "at": dt.datetime(2030, 1, 1, 12, 30, 15, 123456, tzinfo=dt.UTC),
            "cost": Decimal("1.50"),
            "id": uuid.UUID(int=1),
            "big": 2**70,
        },
    ]
    text = JSONText().get_prep_value(value)
    assert text == json.dumps(
        value, cls=DjangoJSONEncoder, separators=(",", ":"), ensure_ascii=False
    )
    assert JSONText().from_db_value(text, None, connection) == json.loads(
        json.dumps(value, cls=DjangoJSONEncoder)
    )


def test_a_frozen_standing_round_trips(owner):
    from ladders import services

    ladder = make_ladder(owner, versions(2), climbers(2))
    dispatch = services.start_dispatch(ladder=ladder)
    services.stop_dispatch(ladder=ladder)
    final = FinalStanding.objects.get(dispatch=dispatch)
    assert [c["body"]["key"] for c in final.climbers] == ["aider|m1|acme", "aider|m2|acme"]
    assert all(len(c["runs"]) == 2 for c in final.climbers)


@pytest.mark.postgres
def test_on_postgresql_it_is_compressed_with_lz4_when_the_server_has_it(db):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT 'lz4' = ANY(enumvals) FROM pg_settings WHERE name = 'default_toast_compression'"
        )
        [has_lz4] = cursor.fetchone()
        cursor.execute(
            "SELECT attname, attcompression FROM pg_attribute"
            " WHERE attrelid = 'ladders_final_standing'::regclass"
            " AND attname IN ('head', 'bodies', 'slots')"
        )
        methods = dict(cursor.fetchall())
    assert methods == dict.fromkeys(("head", "bodies", "slots"), "l" if has_lz4 else "")
