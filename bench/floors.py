"""The database floors the benchmarks are compared with: the least work that answers the same
question, written as bare SQL."""

from django.db import connection

from loopweb.runs.arrays import literal

TALLY_SQL = """
SELECT cell_key,
       count(*) AS counted,
       count(*) FILTER (WHERE validator_rating IS NULL) AS unrated,
       count(*) FILTER (WHERE validator_rating IN ('flawless', 'great', 'passable', 'scuffed'))
           AS passing
FROM (
    SELECT cell_key, validator_rating,
           row_number() OVER (PARTITION BY cell_key ORDER BY finished_at, id) AS rank
    FROM runs_run
    WHERE counted AND cell_key = ANY(%s::varchar[])
) slot_runs
WHERE rank <= %s
GROUP BY cell_key
"""

CLAIM_SQL = """
UPDATE runs_job SET status = 'pending'
WHERE id = (
    SELECT id FROM runs_job WHERE status = 'queued' ORDER BY id
    FOR UPDATE SKIP LOCKED LIMIT 1
)
RETURNING id
"""


def tally_floor(cell_keys: list[str], target: int) -> int:
    """The tallies of the cells, the keys sent as one array literal (as the board sends them)."""
    with connection.cursor() as cursor:
        cursor.execute(TALLY_SQL, [literal(cell_keys), target])
        return len(cursor.fetchall())


def claim_floor() -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(CLAIM_SQL)
        row = cursor.fetchone()
    return row[0] if row else None
