from django.tasks import TaskResultStatus, task
from django_tasks_db import DatabaseBackend
from django_tasks_db.models import DBTaskResult


@task(takes_context=True)
def launch_pass(context, ladder_id: int) -> dict | None:
    """Run the ladder's launch pass, unless a later request for one is already waiting: that
    one runs after this moment and sees everything this one would, so this one is redundant."""
    from ladders.passes import run_launch_pass

    if superseded(context, ladder_id):
        return {"coalesced": True}
    report = run_launch_pass(ladder_id=ladder_id)
    return None if report is None else vars(report)


def superseded(context, ladder_id: int) -> bool:
    if not isinstance(launch_pass.get_backend(), DatabaseBackend):
        return False
    mine = context.task_result
    return DBTaskResult.objects.filter(
        task_path=launch_pass.module_path,
        status=TaskResultStatus.READY,
        args_kwargs__args__0=ladder_id,
        enqueued_at__gt=mine.enqueued_at,
    ).exists()


def requeue_interrupted() -> int:
    """Put back in the queue the launch-pass tasks a worker left running when it died.

    A killed worker's pass rolls back with its connection, but its task row stays ``RUNNING``
    and nothing would ever run it again. A pass is idempotent, so re-running one that a live
    worker is still running costs one pass and nothing more.
    """
    if not isinstance(launch_pass.get_backend(), DatabaseBackend):
        return 0
    return DBTaskResult.objects.filter(
        task_path=launch_pass.module_path, status=TaskResultStatus.RUNNING
    ).update(status=TaskResultStatus.READY)
