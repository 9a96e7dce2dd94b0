"""Waiting for a lost database to come back (``loopweb.database_lost`` tells a lost database
from a failing statement)."""

from __future__ import annotations

import logging
import random
import threading
import time

from django.db import DatabaseError, connection

from loopweb.driver.outage import Outage

log = logging.getLogger("loopweb.ops")

#: The database as this process's waiting threads see it: one line when the first finds it lost,
#: one when the first finds it back, whatever the number of threads waiting.
outage = Outage("database", event="database", meanwhile="retrying with backoff", log=log)


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
    """Log the loss (once for the process), then try again with exponential backoff (and
    jitter) until the database answers; log its return (once). Returns the seconds it was away,
    or None if ``stop`` was set first."""
    _drop_connection()
    started = time.monotonic()
    outage.lost(summary(error))
    delay = first_delay
    while True:
        pause = delay * random.uniform(0.8, 1.2)  # noqa: S311 - jitter, not a secret
        if stop is not None:
            if stop.wait(pause):
                return None
        else:
            time.sleep(pause)
        if reachable():
            outage.back()
            return time.monotonic() - started
        delay = min(delay * 2, max_delay)
