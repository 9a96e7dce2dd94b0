from django.tasks.base import TaskContext
from django_tasks_db.models import DBTaskResult


def run_queued_tasks(limit: int = 10_000) -> int:
    """Run queued database tasks in this thread until none is left; fail loudly on an error."""
    ran = 0
    while ran < limit:
        result = DBTaskResult.objects.ready().order_by("enqueued_at").first()
        if result is None:
            return ran
        result.claim("tests")
        execute(result)
        ran += 1
    raise AssertionError("tasks kept queueing more tasks")


def execute(result: DBTaskResult) -> None:
    """Run a claimed task as ``db_worker`` does and record how it ended (re-raising a failure)."""
    task_result = result.task_result
    try:
        args = task_result.args
        if result.task.takes_context:
            args = [TaskContext(task_result=task_result), *args]
        value = result.task.call(*args, **task_result.kwargs)
    except Exception as exc:
        result.set_failed(exc)
        raise
    result.set_successful(value)
