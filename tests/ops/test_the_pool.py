"""A pooled connection is checked before it is lent: without a round trip when it came back a
moment ago and its socket is quiet; with one when the server may have ended it.

The pool here is psycopg's, given ``loopweb.ops.pool``'s two functions as the settings give
them to Django's, on the test database.
"""

import os
import select
import subprocess
import sys

import pytest
from django.db import connection
from psycopg_pool import ConnectionPool

from loopweb.ops import pool as checks
from tests.support.processes import BASE_DIR

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]


@pytest.fixture
def pool():
    db = connection.settings_dict
    conninfo = (
        f"host={db['HOST'] or '127.0.0.1'} port={db['PORT'] or 5432} "
        f"user={db['USER'] or 'postgres'} dbname={db['NAME']}"
    )
    lender = ConnectionPool(
        conninfo,
        min_size=1,
        max_size=1,
        kwargs={"autocommit": True, "password": db["PASSWORD"] or None},
        check=checks.check,
        reset=checks.returned,
        open=True,
    )
    yield lender
    lender.close()


@pytest.fixture
def round_trips(monkeypatch):
    """The connections psycopg's round-trip check was made on."""
    made = []
    real = ConnectionPool.check_connection

    def counted(conn):
        made.append(conn)
        real(conn)

    monkeypatch.setattr(ConnectionPool, "check_connection", staticmethod(counted))
    return made


def backend(lender) -> tuple:
    with lender.connection() as conn:
        return conn, conn.execute("SELECT pg_backend_pid()").fetchone()[0]


def test_a_connection_back_a_moment_ago_is_lent_without_a_round_trip(pool, round_trips):
    first, pid = backend(pool)
    assert round_trips == [first]  # never lent before: checked on the server
    again, same = backend(pool)
    assert (again, same) == (first, pid)
    assert round_trips == [first]


def test_a_connection_the_server_ended_in_the_pool_is_never_lent(pool, round_trips):
    ended, pid = backend(pool)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    # The server's notice (or the closed socket) reaches the idle connection's socket.
    assert select.select([ended.fileno()], [], [], 10)[0]

    conn, other = backend(pool)
    assert other != pid
    assert conn is not ended
    assert ended in round_trips  # the round trip found it dead, and the pool replaced it


def test_a_connection_idle_longer_than_the_limit_gets_the_round_trip(
    pool, round_trips, monkeypatch
):
    first, _ = backend(pool)
    monkeypatch.setattr(checks, "ROUND_TRIP_AFTER", 0.0)
    backend(pool)
    assert round_trips == [first, first]


def test_the_settings_give_the_pool_these_checks():
    """A production process's pool (DEBUG off, on PostgreSQL) checks with this module."""
    env = {
        **os.environ,
        "DEBUG": "0",
        "DB_POOL": "1",
        "SECRET_KEY": "s" * 50,
        "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/loopweb",
        "DJANGO_SETTINGS_MODULE": "loopweb.settings",
    }
    shown = subprocess.run(  # noqa: S603 - our own settings
        [
            sys.executable,
            "-c",
            "from django.conf import settings; p = settings.DATABASES['default']['OPTIONS']"
            "['pool']; print(p['check'].__module__, p['check'].__name__, p['reset'].__name__)",
        ],
        env=env,
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert shown == ["loopweb.ops.pool", "check", "returned"]
