"""Every table a board reads records its changes by trigger (``loopweb.runs.capture``)."""

from django.db import migrations

from ladders.models import CAPTURED as LADDERS
from loopweb.runs.capture import CAPTURED as RUNS
from loopweb.runs.capture import install
from signals_app.models import CAPTURED as SIGNALS

#: The declarations' digest when this migration was written (``capture.digest``): a test fails
#: when they change without a migration installing them again.
CAPTURE_DIGEST = "8f4fbecd8119768c"


class Migration(migrations.Migration):
    dependencies = [
        ("ladders", "0009_dispatch_needs_attention"),
        ("runs", "0004_job_cancel_cause"),
        ("signals_app", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(*install(RUNS + SIGNALS + LADDERS)),
    ]
