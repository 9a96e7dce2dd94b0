from django.db import models


class Change(models.Model):
    """One write to something a board shows, stamped in the transaction that made it.

    ``key`` names what changed: a coverage cell's key (its jobs, runs or reviews), ``ladder:<id>``
    (a ladder's configuration or dispatch) or ``catalog``. ``stamp`` is the writing
    transaction's stamp (``loopweb.runs.changes``): a reader that remembers the snapshot of its
    last read finds everything committed since among the changes that snapshot did not see.
    Inserts only, so writers never wait on each other; old rows are pruned by a chore.
    """

    key = models.CharField(max_length=700)
    stamp = models.BigIntegerField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["stamp"], name="change_stamp")]

    def __str__(self) -> str:
        return f"{self.key} at {self.stamp}"


class ChangeHorizon(models.Model):
    """The one row saying up to which stamp changes were pruned: a reader whose snapshot is older
    may have missed some, and computes afresh. On SQLite it also holds the counter that
    stamps are drawn from."""

    pruned_below = models.BigIntegerField(default=0)
    counter = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"changes pruned below {self.pruned_below}"
