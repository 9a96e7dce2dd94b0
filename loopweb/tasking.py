"""Enqueue background work atomically with the change that causes it.

With the database task backend the task row is written inside the caller's transaction, so it
exists exactly when the change commits. Any other backend (the immediate one of the quick start)
would run the work before commit, on data that may roll back, so there it waits for the commit.
"""

from functools import partial

from django.db import transaction
from django_tasks_db import DatabaseBackend


def enqueue(task, *args, **kwargs) -> None:
    if isinstance(task.get_backend(), DatabaseBackend):
        task.enqueue(*args, **kwargs)
    else:
        transaction.on_commit(partial(task.enqueue, *args, **kwargs))
