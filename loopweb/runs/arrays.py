"""Thousands of ids (or cell keys) in one statement as one parameter.

``pk__in=[...]`` makes a placeholder per id: Django resolves each one and the driver splits and
quotes the statement around each, which for a board's 30,000 runs costs more than the query.
``in_ids`` sends the list as one value: an array on PostgreSQL, JSON on SQLite (whose statements
take at most 32,766 parameters).
"""

import json
from collections.abc import Iterable

from django.db import connection
from django.db.models.expressions import RawSQL

from loopweb.runs.cells import CELL_KEY_JOIN


def in_ids(ids: Iterable[int]) -> RawSQL:
    """A subquery of these ids, for ``field__in=in_ids(ids)``."""
    values = sorted({int(i) for i in ids})
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::bigint[])", (values,))
    return RawSQL("SELECT value FROM json_each(%s)", (json.dumps(values),))


def in_keys(keys) -> RawSQL:
    """A subquery of these keys (cell keys, combination keys), for ``field__in=in_keys(keys)``;
    ``keys`` may be a ``loopweb.runs.prepared.Marker`` standing for them (PostgreSQL)."""
    if connection.vendor == "postgresql":
        return RawSQL("SELECT unnest(%s::varchar[])", (keys,))
    return RawSQL("SELECT value FROM json_each(%s)", (json.dumps(sorted(keys)),))


def in_cells(pin_keys: Iterable[str], combination_keys: Iterable[str]) -> RawSQL:
    """A subquery of the cell keys of every case pin with every combination cell
    (``cells.joined_cell_key``), for ``cell_key__in=in_cells(…)``: the database joins them, so a
    few climbers of a 50-rung ladder send 50 + a few keys, not 50 × a few."""
    pins, combinations = sorted(set(pin_keys)), sorted(set(combination_keys))
    if connection.vendor == "postgresql":
        return RawSQL(
            "SELECT pin || %s || combination"
            " FROM unnest(%s::varchar[]) AS pin, unnest(%s::varchar[]) AS combination",
            (CELL_KEY_JOIN, pins, combinations),
        )
    return RawSQL(
        "SELECT pin.value || %s || combination.value FROM json_each(%s) AS pin,"
        " json_each(%s) AS combination",
        (CELL_KEY_JOIN, json.dumps(pins), json.dumps(combinations)),
    )
