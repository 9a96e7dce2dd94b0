"""Reviewers' checklist overrides, and the run's stored rating that folds them in (seed 004).
Every run stored so far has no override: its stored rating is its validator rating. The runs'
change capture is removed while the table is altered and installed again after
(``capture.remove``: SQLite rebuilds the table, and its triggers with it); the copy runs between
them, so it records no change (no board reads the stored rating)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from loopweb.runs.capture import CAPTURED, install, remove

RUNS = [spec for spec in CAPTURED if spec.table == "runs_run"]


def copy_ratings(apps, schema_editor):
    Run = apps.get_model("runs", "Run")
    Run.objects.update(stored_rating=models.F("validator_rating"))


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0009_review_values"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(*remove(RUNS)),
        migrations.AddField(
            model_name="run",
            name="stored_rating",
            field=models.CharField(
                blank=True,
                choices=[
                    ("flawless", "Flawless"),
                    ("great", "Great"),
                    ("passable", "Passable"),
                    ("scuffed", "Scuffed"),
                    ("broken", "Broken"),
                ],
                max_length=16,
                null=True,
            ),
        ),
        migrations.RunPython(copy_ratings, migrations.RunPython.noop),
        migrations.RunPython(*install(RUNS)),
        migrations.CreateModel(
            name="ChecklistOverride",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("item", models.CharField(max_length=100)),
                ("passed", models.BooleanField()),
                ("note", models.TextField(blank=True, max_length=2000)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "reviewer",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="checklist_overrides",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="overrides",
                        to="runs.run",
                    ),
                ),
            ],
            options={
                "ordering": ["id"],
                "indexes": [models.Index(fields=["run", "id"], name="override_of_run")],
            },
        ),
    ]
