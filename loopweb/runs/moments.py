"""Moments the API reads: RFC 3339 timestamps with a time zone, written between the years 1900
and 9998. Pure, shared by the substrate's fields and signals_app's rules, so one reading is
written once and the schema can state it (``format: date-time`` and ``YEAR_PATTERN``).

The year is checked as written: whatever its offset, such a moment lies between 1899 and 9999 in
UTC, which PostgreSQL and Python both store and read back in any time zone.
"""

import re
from datetime import UTC, datetime

MIN_YEAR, MAX_YEAR = 1900, 9998
MAX_LENGTH = 64
#: RFC 3339's date-time: the shape ``format: date-time`` names (seconds required, an offset).
RFC3339 = re.compile(
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$"
)
#: The years 1900 to 9998, as the start of a date-time (for the schema's ``pattern``).
YEAR_PATTERN = r"^(19[0-9]{2}|[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-"
FORMAT_MESSAGE = "Must be an RFC 3339 timestamp with a time zone (e.g. 2026-03-01T12:00:00Z)."
YEAR_MESSAGE = f"Must lie between the years {MIN_YEAR} and {MAX_YEAR}."


class BadMoment(ValueError):
    """Why a text is not a moment the API reads; ``code`` is the error code to answer."""

    def __init__(self, message: str, code: str = "invalid"):
        super().__init__(message)
        self.code = code


def read_moment(text: object) -> datetime:
    """The instant an RFC 3339 text names, in UTC, or ``BadMoment``."""
    if not isinstance(text, str) or len(text) > MAX_LENGTH or not RFC3339.fullmatch(text):
        raise BadMoment(FORMAT_MESSAGE)
    try:
        moment = datetime.fromisoformat(text.upper())
    except ValueError as exc:
        raise BadMoment(FORMAT_MESSAGE) from exc
    if not MIN_YEAR <= moment.year <= MAX_YEAR:
        raise BadMoment(YEAR_MESSAGE)
    # In UTC: an offset RFC 3339 allows (up to 23:59) may be one PostgreSQL does not (15:59).
    return moment.astimezone(UTC)
