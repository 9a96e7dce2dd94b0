from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("runs", "0007_claim_indexes")]

    # This migration installed the first claim function under budgets (one that locked the
    # budgets' rows and counted their jobs in flight); 0011 drops it where it exists and
    # installs the claim by places in its stead, so a fresh database installs only that one.
    operations = []
