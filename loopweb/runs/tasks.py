from django.tasks import task

from loopweb.runs import services


@task()
def expire_leases() -> int:
    return services.expire_leases()
