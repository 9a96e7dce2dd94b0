from django.db import migrations

from loopweb.runs import budget_claim_sql


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(budget_claim_sql.INSTALL)


def remove(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(budget_claim_sql.REMOVE)


class Migration(migrations.Migration):
    dependencies = [("runs", "0007_claim_indexes")]

    # CREATE OR REPLACE: the function as budget_claim_sql declares it now. A change to it comes
    # with a migration of its own running the same installer.
    operations = [migrations.RunPython(install, remove, elidable=False)]
