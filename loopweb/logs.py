"""Log lines people can read: one line per event, as text or (``LOG_FORMAT=json``) one JSON
object per line.

Standard library only, so the standalone driver (``loopweb-driver``) formats its lines the same
way without Django. Fields given with ``extra={...}`` (``event``, ``ladder``, ``job``…) are kept:
appended as ``key=value`` in text, as keys in JSON.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import re

#: Attributes every LogRecord has; anything else on a record came from ``extra``.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", (), None))) | {"message", "asctime"}


def _extra(record: logging.LogRecord) -> dict:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


def _time(record: logging.LogRecord) -> str:
    return dt.datetime.fromtimestamp(record.created, dt.UTC).isoformat(timespec="milliseconds")


#: What a terminal or a log reader takes for a line break or a command: C0 and C1 controls,
#: DEL, and the Unicode line and paragraph separators.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escaped(text: str) -> str:
    """``text`` with every control character written as its escape (``\\n``, ``\\x1b``), so a
    value a client chose (a ladder's name) can neither start a line of its own nor move the
    cursor of whoever reads the log."""
    return _CONTROL.sub(lambda found: repr(found[0])[1:-1], text)


def _one_line(text: str) -> str:
    return escaped(" | ".join(part.strip() for part in text.strip().splitlines() if part.strip()))


class TextFormatter(logging.Formatter):
    """``2026-11-30T12:00:00.123+00:00 INFO loopweb.worker: message key=value``: one line,
    even for an exception (its type and message; the traceback only at DEBUG level)."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{_time(record)} {record.levelname} {record.name}: {escaped(record.getMessage())}"
        fields = _extra(record)
        if fields:
            line += " " + " ".join(f"{k}={_scalar(v)}" for k, v in fields.items())
        if record.exc_info and record.exc_info[0] is not None:
            exc = record.exc_info[1]
            if logging.getLogger(record.name).isEnabledFor(logging.DEBUG):
                line += " | " + _one_line(self.formatException(record.exc_info))
            else:
                line += f" ({type(exc).__name__}: {_one_line(str(exc))})"
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time``, ``level``, ``logger``, ``message``, the record's
    extra fields, and ``exception`` (the formatted traceback) when there is one."""

    def format(self, record: logging.LogRecord) -> str:
        body = {
            "time": _time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **_extra(record),
        }
        if record.exc_info and record.exc_info[0] is not None:
            body["exception"] = self.formatException(record.exc_info)
        return json.dumps(body, default=str, ensure_ascii=False)


def _scalar(value) -> str:
    text = str(value)
    return json.dumps(text) if (" " in text or not text) else escaped(text)


def formatter_name() -> str:
    return "json" if os.environ.get("LOG_FORMAT", "text").strip().lower() == "json" else "text"


def make_formatter() -> logging.Formatter:
    return JsonFormatter() if formatter_name() == "json" else TextFormatter()


def access_logged() -> bool:
    """Whether the web server writes one access line per request (``LOG_ACCESS=1``; off by
    default: drivers make many)."""
    return os.environ.get("LOG_ACCESS", "0") == "1"


def config(level: str | None = None) -> dict:
    """The one logging configuration (``logging.config.dictConfig``'s shape): Django's
    ``LOGGING``, gunicorn's ``logconfig_dict`` and the standalone driver all use it.

    One line per meaningful event (dispatch started, stopped or finished, a climber blocked, a
    lease expired, a pass or task failed, the database lost and back), as text or JSON lines
    (``LOG_FORMAT=json``). Loopweb's own loggers log at ``LOG_LEVEL`` (INFO); requests, the task
    queue's per-task lines, the pool's reconnection attempts and access lines stay quiet unless
    asked for (``LOG_LEVEL_REQUESTS``, ``LOG_LEVEL_TASKS``, ``LOG_ACCESS=1``)."""
    own = (level or os.environ.get("LOG_LEVEL", "INFO")).upper()
    tasks = os.environ.get("LOG_LEVEL_TASKS")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "text": {"()": "loopweb.logs.TextFormatter"},
            "json": {"()": "loopweb.logs.JsonFormatter"},
        },
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": formatter_name()},
        },
        "root": {"handlers": ["console"], "level": "WARNING"},
        "loggers": {
            **{name: {"level": own} for name in ("loopweb", "ladders", "evalsets", "signals_app")},
            # Every 4xx would be a line; server errors still are.
            "django.request": {"level": "ERROR"},
            "django.server": {"level": os.environ.get("LOG_LEVEL_REQUESTS", "INFO")},
            # A line per task state; loopweb.ops logs the failures itself, on one line.
            "django.tasks": {"level": tasks or "CRITICAL"},
            "django_tasks_db": {"level": tasks or "ERROR"},
            "gunicorn.error": {"handlers": ["console"], "level": "WARNING", "propagate": False},
            "gunicorn.access": {
                "handlers": ["console"],
                "level": "INFO" if access_logged() else "WARNING",
                "propagate": False,
            },
            # A line per failed reconnection attempt; loopweb.ops reports the outage once.
            "psycopg.pool": {"level": "ERROR"},
        },
    }


def configure_standalone(level: str | int = "INFO") -> None:
    """Logging for a process without Django settings (the standalone driver): the same
    configuration, Loopweb's own loggers at ``level`` unless ``LOG_LEVEL`` says otherwise."""
    import logging.config

    default = level if isinstance(level, str) else logging.getLevelName(level)
    logging.config.dictConfig(config(os.environ.get("LOG_LEVEL", default)))
