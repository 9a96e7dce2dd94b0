"""Telling a lost database from a failing statement: a leaf every layer may ask (the worker and
the web middleware wait or answer 503 on it; a sweep stops on it)."""

from django.db import InterfaceError, OperationalError

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
            if exc.__class__.__name__ == "InternalError" and state is None:
                # Not the server's (its internal errors carry XX000): the driver read an answer
                # the protocol does not allow (two to one COMMIT), as when a pooler's server
                # connection is cut mid-command. The connection's state is unknown.
                return True
            if exc.__class__.__name__ in {"OperationalError", "InterfaceError", "PoolTimeout"}:
                return state is None or state.startswith("08") or state in _LOST_STATES
        exc = exc.__cause__ or exc.__context__
    return False
