"""What a dispatch's runs cost: USD, tokens and wall time from each run's ``record.metrics``.

A run that reports none of the four numbers counts in ``notReported``, never as zero. Pure but
for ``run_metrics``, one query.
"""

import json
from collections.abc import Iterable, Mapping

from django.db import connection
from django.db.models import Q

from loopweb.runs.models import Job, Run
from loopweb.runs.numbers import metric_integer

#: Totals fields and the run record's ``metrics`` keys they add up.
FIELDS = (
    ("usdMicros", "usd_micros"),
    ("inputTokens", "input_tokens"),
    ("outputTokens", "output_tokens"),
    ("wallMs", "wall_ms"),
)
NAMES = (*(name for name, _ in FIELDS), "notReported", "runs")


def empty() -> dict[str, int]:
    return dict.fromkeys(NAMES, 0)


def reported(metrics: object) -> tuple[int, ...] | None:
    """The four numbers a run's ``metrics`` reports (0 for one it leaves out), or None when it
    reports none of them. A number is an integer from 0 to ``METRIC_MAX`` (``3.0`` is 3); a
    push is refused one outside that, so only a row written before that rule holds one."""
    if not isinstance(metrics, Mapping):
        return None
    values = []
    for _, key in FIELDS:
        values.append(metric_integer(metrics.get(key)))
    if all(v is None for v in values):
        return None
    return tuple(v or 0 for v in values)


def add(totals: dict[str, int], values: tuple[int, ...] | None) -> None:
    totals["runs"] += 1
    if values is None:
        totals["notReported"] += 1
        return
    for (name, _), value in zip(FIELDS, values, strict=True):
        totals[name] += value


def total(parts: Iterable[Mapping[str, int] | None]) -> dict[str, int]:
    """The sum of some totals (None for none)."""
    out = empty()
    for part in parts:
        for name in NAMES:
            out[name] += (part or {}).get(name, 0)
    return out


def difference(a: Mapping[str, int] | None, b: Mapping[str, int] | None) -> dict | None:
    """``b - a`` field by field; None when either is missing."""
    if a is None or b is None:
        return None
    return {name: b.get(name, 0) - a.get(name, 0) for name in NAMES}


def run_metrics(origin_prefix: str) -> list[tuple[int, str, object]]:
    """(run id, cell key, ``record.metrics``) of every run a dispatch launched (every attempt,
    retried or not, whatever its outcome): what it cost. The runs from before it that its slots
    read again cost it nothing (the record counts them apart, ``runs.reused``)."""
    runs = Q(job__in=Job.objects.filter(origin__startswith=origin_prefix).values("pk"))
    chosen = Run.objects.filter(runs).order_by()
    if connection.vendor == "postgresql":
        # One JSON array of every row, parsed at once: a board's 30,000 runs as rows cost a
        # JSON parse and the ORM's converters each, several times the query.
        inner, params = chosen.values("pk").query.sql_with_params()
        with connection.cursor() as cursor:
            table = Run._meta.db_table
            sql = f"""
                SELECT COALESCE(json_agg(json_build_array(r.id, r.cell_key, r.record -> 'metrics')),
                                '[]')::text
                FROM {table} AS r WHERE r.id IN ({inner})
            """  # noqa: S608 - the ORM's own SQL and a table name
            cursor.execute(sql, params)
            (rows,) = cursor.fetchone()
        return [(run_id, cell, metrics) for run_id, cell, metrics in json.loads(rows)]
    return list(chosen.values_list("pk", "cell_key", "record__metrics"))
