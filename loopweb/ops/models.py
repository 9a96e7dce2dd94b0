from django.db import models


class WorkerProcess(models.Model):
    """A task worker, as it last reported itself. Its heartbeat tells the others (and /readyz)
    it is alive; a worker whose heartbeat stopped is dead, and the tasks it left running are
    put back in the queue."""

    worker_id = models.CharField(max_length=64, primary_key=True)
    host = models.CharField(max_length=255, help_text="host name and process namespace")
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField()
    beat_at = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"worker {self.worker_id} (pid {self.pid} on {self.host})"


class Chore(models.Model):
    """A periodic chore and when it is next due. A worker runs a chore only after moving
    ``next_run_at`` forward in one conditional UPDATE, so however many workers run, each chore
    runs once per period."""

    name = models.CharField(max_length=64, primary_key=True)
    next_run_at = models.DateTimeField()
    last_started_at = models.DateTimeField(null=True, blank=True)
    last_worker = models.CharField(max_length=64, blank=True)
    last_result = models.CharField(max_length=300, blank=True)

    def __str__(self) -> str:
        return f"chore {self.name}"


class SignInCount(models.Model):
    """Sign-in attempts counted per key (an address, a username) in fixed windows; incremented
    with one atomic upsert, so concurrent attempts on several web processes are all counted."""

    key = models.CharField(max_length=300)
    window = models.BigIntegerField(help_text="the window's start, in Unix seconds")
    count = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["key", "window"], name="signin_count_key_window")
        ]
        indexes = [models.Index(fields=["window"], name="signin_count_window")]

    def __str__(self) -> str:
        return f"{self.key} @{self.window}: {self.count}"
