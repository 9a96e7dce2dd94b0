"""Telling a lost database from a failing statement, and waiting for it to come back."""

from __future__ import annotations

import logging
import random
import threading
import time

from django.db import DatabaseError, InterfaceError, OperationalError, connection

log = logging.getLogger("loopweb.ops")

#: SQLSTATEs that mean the server went away or would not take us: class 08 (connection
#: exception), the server shutting down or starting up, too many connections.
_LOST_STATES = {"57P01", "57P02", "57P03", "53300"}


def database_lost(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or what caused it) says the database cannot be reached, rather than that
    a statement failed on a working connection (a deadlock, a lock or statement timeout, a
    constraint)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, InterfaceError):
            return True  # the connection is closed
        if isinstance(exc, OperationalError):
            cause = exc.__cause__
            state = getattr(cause, "sqlstate", None)
            if cause is not None and type(cause).__module__.startswith("psycopg"):
                return state is None or state.startswith("08") or state in _LOST_STATES
            # SQLite ("database is locked") or an error raised without its driver's cause.
            return False
        if type(exc).__module__.startswith("psycopg"):  # raised outside Django's wrapper
            state = getattr(exc, "sqlstate", None)
            if exc.__class__.__name__ in {"OperationalError", "InterfaceError", "PoolTimeout"}:
                return state is None or state.startswith("08") or state in _LOST_STATES
        exc = exc.__cause__ or exc.__context__
    return False


def summary(exc: BaseException) -> str:
    """The first line of an error, for a log line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def reachable() -> bool:
    """Whether this thread can run a statement now (on a fresh connection if its own broke)."""
    try:
        if connection.connection is not None and not connection.is_usable():
            connection.close()
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except DatabaseError:
        _drop_connection()
        return False


def _drop_connection() -> None:
    try:
        connection.close()
    except DatabaseError:
        connection.connection = None


def wait_until_reachable(
    error: BaseException,
    *,
    stop: threading.Event | None = None,
    first_delay: float = 0.5,
    max_delay: float = 15.0,
) -> float | None:
    """Log the loss once, then try again with exponential backoff (and jitter) until the
    database answers; log its return once. Returns the seconds it was away, or None if ``stop``
    was set first."""
    _drop_connection()
    started = time.monotonic()
    log.warning(
        "database unreachable (%s); retrying with backoff",
        summary(error),
        extra={"event": "database.lost"},
    )
    delay = first_delay
    while True:
        pause = delay * random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not a secret
        if stop is not None:
            if stop.wait(pause):
                return None
        else:
            time.sleep(pause)
        if reachable():
            away = time.monotonic() - started
            log.warning(
                "database reachable again after %.1f s",
                away,
                extra={"event": "database.back", "seconds": round(away, 1)},
            )
            return away
        delay = min(delay * 2, max_delay)
