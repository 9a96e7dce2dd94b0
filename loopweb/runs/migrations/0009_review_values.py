"""A review carries its answers to the rubric of the ladder whose queue it was taken from. The
reviews' change capture is removed while the table is altered and installed again after
(``capture.remove``: SQLite rebuilds the table, and its triggers with it)."""

from django.db import migrations, models

from loopweb.runs.capture import CAPTURED, install, remove

REVIEWS = [spec for spec in CAPTURED if spec.table == "runs_review"]


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0008_budget_claim_function"),
    ]

    operations = [
        migrations.RunPython(*remove(REVIEWS)),
        migrations.AddField(
            model_name="review",
            name="values",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(*install(REVIEWS)),
    ]
