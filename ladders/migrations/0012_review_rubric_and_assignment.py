"""A ladder's review settings: its rubric, the reviews each run wants, the reviewers assigned to
its queue and how long opening a run keeps it; and the reservations themselves. The ladders'
change capture is removed while the table is altered (``capture.remove``)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

from ladders.models import CAPTURED as LADDERS
from loopweb.runs.capture import CAPTURED as RUNS
from loopweb.runs.capture import install, remove
from signals_app.models import CAPTURED as SIGNALS

#: The declarations' digest when this migration was written (``capture.digest``).
CAPTURE_DIGEST = "860e500a8175ab03"


class Migration(migrations.Migration):
    dependencies = [
        ("ladders", "0011_dispatch_reused"),
        ("runs", "0009_review_values"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(*remove(RUNS + SIGNALS + LADDERS)),
        migrations.AddField(
            model_name="ladder",
            name="rubric",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.AddField(
            model_name="ladder",
            name="reviews_per_run",
            field=models.PositiveSmallIntegerField(default=1),
        ),
        migrations.AddField(
            model_name="ladder",
            name="assignees",
            field=models.ManyToManyField(
                blank=True, related_name="assigned_ladders", to=settings.AUTH_USER_MODEL
            ),
        ),
        migrations.AddField(
            model_name="ladder",
            name="reservation_minutes",
            field=models.PositiveSmallIntegerField(default=15),
        ),
        migrations.CreateModel(
            name="ReviewReservation",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("expires_at", models.DateTimeField()),
                (
                    "ladder",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="reservations",
                        to="ladders.ladder",
                    ),
                ),
                (
                    "reviewer",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="runs.run",
                    ),
                ),
            ],
            options={
                "indexes": [models.Index(fields=["ladder", "run"], name="reservation_ladder_run")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("ladder", "run", "reviewer"), name="one_reservation_per_reviewer"
                    )
                ],
            },
        ),
        migrations.RunPython(*install(RUNS + SIGNALS + LADDERS)),
    ]
