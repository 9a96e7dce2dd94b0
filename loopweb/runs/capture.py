# ruff: noqa: S608 - the SQL is built from the declarations below, never from a request
"""Change capture by the database: every write to a table a board reads records what it changed
(``Change`` rows, ``loopweb.runs.changes``) in the writing transaction, by a trigger. No writer
has a call to remember, and the admin, a data migration and a ``psql`` session are seen like the
API.

Each app declares its tables (``Captured``) and installs their triggers from a migration with
``install``; ``tests/runs/test_change_capture.py`` checks the database holds exactly the
triggers these declarations make, so a declaration changed without a migration fails the suite.

PostgreSQL: statement triggers reading the changed rows as transition tables, so one statement
records each key it changed once, stamped with the writing transaction's id. SQLite (the
embedded demo, one writer at a time): row triggers drawing a stamp from the counter row.
"""

import hashlib
from dataclasses import dataclass

from loopweb.runs.models import Change, ChangeHorizon

CHANGE = Change._meta.db_table
HORIZON = ChangeHorizon._meta.db_table


@dataclass(frozen=True)
class Captured:
    """A table whose writes a board reads.

    ``key``: the SQL of the key a row changes, over the row ``{r}`` (``{r}.cell_key``,
    ``'ladder:' || {r}.ladder_id``, or a subquery reaching a parent row); NULL records nothing.
    ``watched``: what makes an update count, as SQL over ``{r}`` (a column, ``{r}.status``, or
    an expression of some); None: any column. A write that changes none of it (a lease renewed,
    a pass counted) records nothing.
    """

    table: str
    key: str
    watched: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return f"capture_{self.table}"


CATALOG_KEY = "'catalog'"

#: The substrate's tables a board reads: a cell's jobs, runs and their reviews, and the catalog
#: entries that name, resolve and launch its climbers.
CAPTURED = [
    Captured(
        "runs_job",
        "{r}.cell_key",
        # What a board reads of a job: a claim (queued to pending, both waiting) and a lease
        # renewed or handed over change none of it.
        watched=(
            "CASE WHEN {r}.status = 'pending' THEN 'queued' ELSE {r}.status END",
            *(
                f"{{r}}.{column}"
                for column in (
                    "cell_key", "origin", "attempt", "retry_count", "retry_id", "failure",
                    "failure_detail", "cancel_cause", "started_at", "finished_at",
                    "combination_id",
                )
            ),
        ),
    ),
    Captured("runs_run", "{r}.cell_key"),
    Captured("runs_review", "(SELECT run.cell_key FROM runs_run AS run WHERE run.id = {r}.run_id)"),
    *(
        Captured(table, CATALOG_KEY)
        for table in (
            "runs_case", "runs_caseversion", "runs_modelentry", "runs_ggconfiguration",
            "runs_combination",
        )
    ),
]  # fmt: skip


# PostgreSQL ---------------------------------------------------------------------------------

_PG_RECORD = f"""
INSERT INTO {CHANGE} (key, stamp, at)
SELECT DISTINCT k, pg_current_xact_id()::text::bigint, now() FROM ({{keys}}) AS keys (k)
WHERE k IS NOT NULL"""


def _pg_changed(spec: Captured) -> str:
    if spec.watched is None:
        return "n IS DISTINCT FROM o"
    new = ", ".join(w.format(r="n") for w in spec.watched)
    old = ", ".join(w.format(r="o") for w in spec.watched)
    return f"({new}) IS DISTINCT FROM ({old})"


def _pg_keys(spec: Captured, event: str) -> str:
    if event == "INSERT":
        return f"SELECT {spec.key.format(r='r')} FROM new_rows AS r"
    if event == "DELETE":
        return f"SELECT {spec.key.format(r='r')} FROM old_rows AS r"
    changed = (
        "SELECT n.id FROM new_rows AS n JOIN old_rows AS o ON o.id = n.id"
        f" WHERE {_pg_changed(spec)}"
    )
    return (
        f"WITH changed AS ({changed})"
        f" SELECT {spec.key.format(r='r')} FROM new_rows AS r JOIN changed USING (id)"
        f" UNION SELECT {spec.key.format(r='r')} FROM old_rows AS r JOIN changed USING (id)"
    )


def _pg_install(spec: Captured) -> list[str]:
    statements = []
    for event, tables in (
        ("INSERT", "NEW TABLE AS new_rows"),
        ("UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"),
        ("DELETE", "OLD TABLE AS old_rows"),
    ):
        name = f"{spec.name}_{event.lower()}"
        record = _PG_RECORD.format(keys=_pg_keys(spec, event))
        statements += [
            f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN {record}; RETURN NULL; END $$",
            f"DROP TRIGGER IF EXISTS {name} ON {spec.table}",
            f"CREATE TRIGGER {name} AFTER {event} ON {spec.table} REFERENCING {tables}"
            f" FOR EACH STATEMENT EXECUTE FUNCTION {name}()",
        ]
    return statements


def _pg_remove(spec: Captured) -> list[str]:
    return [
        statement
        for event in ("insert", "update", "delete")
        for statement in (
            f"DROP TRIGGER IF EXISTS {spec.name}_{event} ON {spec.table}",
            f"DROP FUNCTION IF EXISTS {spec.name}_{event}()",
        )
    ]


# SQLite -------------------------------------------------------------------------------------


def _sqlite_record(keys: str) -> str:
    return (
        # The counter row may be gone (a flush empties the tables one by one, and deleting a
        # captured table records changes): it starts again above every stamp recorded.
        f"INSERT INTO {HORIZON} (pruned_below, counter)"
        f" SELECT 0, COALESCE((SELECT max(stamp) FROM {CHANGE}), 0)"
        f" WHERE NOT EXISTS (SELECT 1 FROM {HORIZON});"
        f" UPDATE {HORIZON} SET counter = counter + 1;"
        f" INSERT INTO {CHANGE} (key, stamp, at)"
        f" SELECT k, (SELECT counter FROM {HORIZON}), strftime('%Y-%m-%d %H:%M:%f', 'now')"
        f" FROM ({keys}) WHERE k IS NOT NULL;"
    )


def _sqlite_install(spec: Captured) -> list[str]:
    new, old = spec.key.format(r="NEW"), spec.key.format(r="OLD")
    when = ""
    if spec.watched is not None:
        when = " WHEN " + " OR ".join(
            f"({w.format(r='OLD')}) IS NOT ({w.format(r='NEW')})" for w in spec.watched
        )
    bodies = {
        "INSERT": ("", _sqlite_record(f"SELECT {new} AS k")),
        "UPDATE": (when, _sqlite_record(f"SELECT {new} AS k UNION SELECT {old}")),
        "DELETE": ("", _sqlite_record(f"SELECT {old} AS k")),
    }
    statements = []
    for event, (condition, body) in bodies.items():
        name = f"{spec.name}_{event.lower()}"
        statements += [
            f"DROP TRIGGER IF EXISTS {name}",
            f"CREATE TRIGGER {name} AFTER {event} ON {spec.table} FOR EACH ROW{condition}"
            f" BEGIN {body} END",
        ]
    return statements


def _sqlite_remove(spec: Captured) -> list[str]:
    return [f"DROP TRIGGER IF EXISTS {spec.name}_{e}" for e in ("insert", "update", "delete")]


# Installing ---------------------------------------------------------------------------------


def digest(specs: list[Captured]) -> str:
    """A digest of what ``specs`` install, on both databases: the latest migration calling
    ``install`` records it, and a test compares, so no declaration changes uninstalled."""
    text = "\n".join(install_sql("postgresql", specs) + install_sql("sqlite", specs))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def install_sql(vendor: str, specs: list[Captured]) -> list[str]:
    make = _pg_install if vendor == "postgresql" else _sqlite_install
    return [statement for spec in specs for statement in make(spec)]


def remove_sql(vendor: str, specs: list[Captured]) -> list[str]:
    make = _pg_remove if vendor == "postgresql" else _sqlite_remove
    return [statement for spec in specs for statement in make(spec)]


def install(specs: list[Captured]):
    """A migration's operation pair (forwards, backwards) installing ``specs``' triggers."""

    def forwards(apps, schema_editor):
        for statement in install_sql(schema_editor.connection.vendor, specs):
            schema_editor.execute(statement)

    def backwards(apps, schema_editor):
        for statement in remove_sql(schema_editor.connection.vendor, specs):
            schema_editor.execute(statement)

    return forwards, backwards


def remove(specs: list[Captured]):
    """The pair removing ``specs``' triggers (and installing them back). A migration that alters
    a table a trigger names removes them first and installs them after: SQLite alters a table
    by building it anew and renaming it, which a trigger naming it refuses."""
    forwards, backwards = install(specs)
    return backwards, forwards
