from django.db import migrations


class Migration(migrations.Migration):
    """A sender holds an attempt while it sends it: ``claim`` names only a driver's claim."""

    dependencies = [("webhooks", "0001_initial")]

    operations = [
        migrations.RenameField(model_name="delivery", old_name="claimed_until", new_name="held_until"),
    ]
