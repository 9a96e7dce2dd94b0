"""Thousands of ids or keys as one parameter (an array on PostgreSQL, JSON on SQLite): a
placeholder per id costs a board's 30,000 runs more than the query, and SQLite takes at most
32,766.

On PostgreSQL the array travels as one literal written here (``{1,2,3}``): psycopg quotes a
list element by element, which for 30,000 ids cost four times the statement."""

import json
from collections.abc import Iterable

from django.db import connection
from django.db.models.expressions import RawSQL


def _element(value: int | str) -> str:
    if isinstance(value, int):
        return str(value)
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def literal(values: Iterable[int | str]) -> str:
    """PostgreSQL's text form of an array of these ids or strings (each string quoted)."""
    return "{" + ",".join(map(_element, values)) + "}"


def among(values: list, kind: str) -> RawSQL:
    """A subquery of ``values`` (of the PostgreSQL type ``kind``), one parameter."""
    if connection.vendor == "postgresql":
        return RawSQL(f"SELECT unnest(%s::{kind}[])", (literal(values),))  # noqa: S611
    return RawSQL("SELECT value FROM json_each(%s)", (json.dumps(values),))


def in_ids(ids: Iterable[int]) -> RawSQL:
    """A subquery of these ids, for ``field__in=in_ids(ids)``."""
    return among(sorted({int(i) for i in ids}), "bigint")


def in_keys(keys: Iterable[str]) -> RawSQL:
    """A subquery of these keys (cell keys, combination keys), for ``field__in=in_keys(keys)``."""
    return among(sorted(set(keys)), "varchar")
