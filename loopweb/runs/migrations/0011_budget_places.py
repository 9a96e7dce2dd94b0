import django.db.models.deletion
from django.db import migrations, models

from loopweb.runs import budget_claim_sql


def install(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(budget_claim_sql.REMOVE_COUNTING, params=None)
        for statement in budget_claim_sql.INSTALL:
            schema_editor.execute(statement, params=None)


def remove(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in budget_claim_sql.REMOVE:
            schema_editor.execute(statement, params=None)


class Migration(migrations.Migration):
    dependencies = [("runs", "0010_checklist_overrides")]

    operations = [
        migrations.AddField(
            model_name="providerbudget",
            name="marked_full",
            field=models.BooleanField(default=False, editable=False),
        ),
        migrations.CreateModel(
            name="BudgetPlace",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.PositiveSmallIntegerField()),
                ("place", models.PositiveIntegerField()),
                ("job_id", models.BigIntegerField(blank=True, null=True)),
                ("starts", models.JSONField(blank=True, default=dict)),
                ("source", models.CharField(blank=True, default="", max_length=300)),
                ("served_at", models.FloatField(blank=True, null=True)),
                (
                    "budget",
                    models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="places",
                        to="runs.providerbudget",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(
                        condition=models.Q(("job_id__isnull", False)),
                        fields=["job_id"],
                        name="budget_place_job",
                    ),
                    models.Index(
                        condition=models.Q(("job_id__isnull", True)),
                        fields=["budget", "kind", "place"],
                        name="budget_place_free",
                    ),
                ],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("budget", "kind", "place"), name="one_budget_place"
                    )
                ],
            },
        ),
        # CREATE OR REPLACE: the function and triggers as budget_claim_sql declares them now. A
        # change to them comes with a migration of its own running the same installer.
        migrations.RunPython(install, remove, elidable=False),
    ]
