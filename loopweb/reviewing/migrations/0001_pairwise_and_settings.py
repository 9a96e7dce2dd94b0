import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("ladders", "0011_dispatch_reused"),
        ("runs", "0008_budget_claim_function"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ReviewSettings",
            fields=[
                (
                    "ladder",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="review_settings",
                        serialize=False,
                        to="ladders.ladder",
                    ),
                ),
                ("backlog_threshold", models.PositiveIntegerField(blank=True, null=True)),
                ("backlog_over", models.BooleanField(default=False)),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={"verbose_name_plural": "review settings"},
        ),
        migrations.CreateModel(
            name="PairwiseJudgement",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("dispatch_id", models.CharField(max_length=40)),
                ("rung_id", models.CharField(max_length=40)),
                ("left_climber", models.CharField(max_length=500)),
                ("right_climber", models.CharField(max_length=500)),
                (
                    "choice",
                    models.CharField(
                        choices=[("left", "Left"), ("right", "Right"), ("tie", "Tie")], max_length=8
                    ),
                ),
                ("pair", models.CharField(max_length=50)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "ladder",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="pairwise_judgements",
                        to="ladders.ladder",
                    ),
                ),
                (
                    "left",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="runs.run"
                    ),
                ),
                (
                    "right",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="+", to="runs.run"
                    ),
                ),
                (
                    "reviewer",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="pairwise_judgements",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["created_at", "id"],
                "indexes": [models.Index(fields=["ladder", "rung_id"], name="judgement_rung")],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("ladder", "rung_id", "reviewer", "pair"),
                        name="one_judgement_per_pair",
                    )
                ],
            },
        ),
    ]
