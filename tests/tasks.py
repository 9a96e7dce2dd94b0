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
        task = result.task
        task_result = result.task_result
        try:
            args = task_result.args
            if task.takes_context:
                args = [TaskContext(task_result=task_result), *args]
            value = task.call(*args, **task_result.kwargs)
        except Exception as exc:
            result.set_failed(exc)
            raise
        result.set_successful(value)
        ran += 1
    raise AssertionError("tasks kept queueing more tasks")
