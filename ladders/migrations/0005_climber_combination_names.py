from django.db import migrations, models


class Migration(migrations.Migration):
    """A climber's key and pinned cell are its combination's: named so, apart from coverage
    cells. The rows are kept; the unique constraint is rebuilt on the renamed column."""

    dependencies = [
        ("ladders", "0004_climber_pinned_key"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="dispatchclimber", name="one_climber_per_key"),
        migrations.RenameField(
            model_name="dispatchclimber", old_name="key", new_name="combination_key"
        ),
        migrations.RenameField(
            model_name="dispatchclimber", old_name="cell", new_name="combination_cell"
        ),
        migrations.AddConstraint(
            model_name="dispatchclimber",
            constraint=models.UniqueConstraint(
                fields=("dispatch", "combination_key"), name="one_climber_per_key"
            ),
        ),
    ]
