"""How a pooled PostgreSQL connection is checked before a request is lent it.

psycopg's own check (``ConnectionPool.check_connection``) is a round trip to the server on every
borrow: on a polled board's 304, one of its three. A connection the server ended while it sat
in the pool (a restart, a failover, ``pg_terminate_backend``) has had a termination notice
written to its socket, or the socket closed: either way the socket has something to read, which
an idle connection's never has. So a connection back in the pool for less than
``ROUND_TRIP_AFTER`` seconds with nothing to read is lent as it is; one with something to read,
or idle longer (a peer that vanished without a word leaves nothing to read), gets the round trip,
which raises for a dead one and lets the pool replace it.

Only this module imports psycopg's pool: the settings hand its two functions to Django's.
"""

from __future__ import annotations

import select
import time

from psycopg_pool import ConnectionPool

#: Seconds a connection may have sat in the pool and still be lent without a round trip.
ROUND_TRIP_AFTER = 5.0

_RETURNED_AT = "_loopweb_returned_at"


def returned(conn) -> None:
    """The pool's ``reset``: note when the connection came back (it is idle, nothing sent)."""
    setattr(conn, _RETURNED_AT, time.monotonic())


def check(conn) -> None:
    """The pool's ``check``: raise if ``conn`` is not fit to lend."""
    returned_at = getattr(conn, _RETURNED_AT, None)
    fresh = returned_at is not None and time.monotonic() - returned_at < ROUND_TRIP_AFTER
    if fresh and not conn.closed and not _has_something_to_read(conn):
        return
    ConnectionPool.check_connection(conn)


def _has_something_to_read(conn) -> bool:
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
    return bool(poller.poll(0))
