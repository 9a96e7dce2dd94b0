from django.db import migrations

from loopweb.runs import budget_claim_sql


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in budget_claim_sql.INSTALL:
            schema_editor.execute(statement, params=None)


def remove(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f"DROP FUNCTION IF EXISTS {budget_claim_sql.CANDIDATES}(integer)", params=None
        )


class Migration(migrations.Migration):
    """The claim under budgets reads its candidates through a function whose plan the connection
    keeps, and counts a shard's rolling minute inside its own statement (CREATE OR REPLACE: the
    functions and triggers as budget_claim_sql declares them now)."""

    dependencies = [("runs", "0011_budget_places")]

    operations = [migrations.RunPython(install, remove, elidable=False)]
