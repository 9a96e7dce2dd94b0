from django.db import models


class Change(models.Model):
    """One write to something a board shows (``key``: a cell's key, ``ladder:<id>`` or
    ``catalog``), stamped in the transaction that made it (``loopweb.runs.changes``). Inserts
    only, so writers never wait on each other; a chore prunes old rows."""

    key = models.CharField(max_length=700)
    stamp = models.BigIntegerField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["stamp"], name="change_stamp")]

    def __str__(self) -> str:
        return f"{self.key} at {self.stamp}"


class ChangeHorizon(models.Model):
    """The one row saying up to which stamp changes were pruned (and, on SQLite, the counter
    stamps are drawn from)."""

    pruned_below = models.BigIntegerField(default=0)
    counter = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"changes pruned below {self.pruned_below}"
