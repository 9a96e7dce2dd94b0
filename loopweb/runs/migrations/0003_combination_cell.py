from django.db import migrations


class Migration(migrations.Migration):
    """``cell`` alone names the coverage cell; a job's or run's combination cell is renamed."""

    dependencies = [
        ("runs", "0002_job_started_and_changes"),
    ]

    operations = [
        migrations.RenameField(model_name="job", old_name="cell", new_name="combination_cell"),
        migrations.RenameField(model_name="run", old_name="cell", new_name="combination_cell"),
    ]
