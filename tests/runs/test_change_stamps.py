"""``loopweb.runs.changes.visible``: whether a change is visible in a snapshot token, read in
Python as the database reads it (PostgreSQL's ``pg_visible_in_snapshot``; SQLite's counter)."""

import pytest
from django.db import connection

from loopweb.runs import changes

TOKENS = ["100_100_", "100_110_", "100_110_100-104-109", "7_9_8", "1_2_1"]


@pytest.mark.postgres
@pytest.mark.django_db
@pytest.mark.parametrize("token", TOKENS)
def test_a_stamp_is_visible_in_a_token_exactly_when_postgresql_says_so(token):
    stamps = list(range(1, 120))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s, pg_visible_in_snapshot(s::text::xid8, %s::pg_snapshot)"
            " FROM unnest(%s::bigint[]) AS s",
            [changes.snapshot_of(token), stamps],
        )
        expected = dict(cursor.fetchall())
    assert {s: changes.visible(s, token) for s in stamps} == expected


def test_on_sqlite_a_stamp_is_visible_up_to_the_counter():
    assert [changes.visible(s, "n5") for s in (1, 5, 6, 50)] == [True, True, False, False]
    assert changes.visible(1, "n0") is False
