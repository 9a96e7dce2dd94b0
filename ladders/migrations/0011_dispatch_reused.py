"""A dispatch records the runs its first pass found reused; its capture watches that column
(the triggers are removed while the table is altered, ``capture.remove``)."""

from django.db import migrations, models

from ladders.models import CAPTURED as LADDERS
from loopweb.runs.capture import CAPTURED as RUNS
from loopweb.runs.capture import install, remove
from signals_app.models import CAPTURED as SIGNALS

#: The declarations' digest when this migration was written (``capture.digest``).
CAPTURE_DIGEST = "860e500a8175ab03"


class Migration(migrations.Migration):
    dependencies = [
        ("ladders", "0010_capture_changes"),
    ]

    operations = [
        migrations.RunPython(*remove(RUNS + SIGNALS + LADDERS)),
        migrations.AddField(
            model_name="dispatch",
            name="reused",
            field=models.JSONField(blank=True, default=dict),
        ),
        migrations.RunPython(*install(RUNS + SIGNALS + LADDERS)),
    ]
