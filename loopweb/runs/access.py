"""Who may see which runs and jobs. Control is scoped by owner (SPEC §1).

Higher layers register extra run visibility (a ladder's owner and reviewers read the runs its
slots read) without this layer importing them.
"""

from collections.abc import Callable

from django.db.models import Q, QuerySet

from loopweb.runs.models import Job, Role, Run

_run_visibility: list[Callable[[object], Q]] = []


def register_run_visibility(rule: Callable[[object], Q]) -> Callable[[object], Q]:
    _run_visibility.append(rule)
    return rule


def role_of(user) -> str | None:
    account = getattr(user, "account", None)
    return account.role if account else None


def is_driver(user) -> bool:
    return role_of(user) == Role.DRIVER


def visible_runs(user) -> QuerySet[Run]:
    runs = Run.objects.all()
    if user.is_staff or is_driver(user):
        return runs
    rule = Q(published=True) | Q(owner=user) | Q(job__owner=user)
    if _run_visibility:
        extra = Q()
        for visibility in _run_visibility:
            extra |= visibility(user)
        # A subquery: rules that follow many-valued relations (a ladder's reviewers) must not
        # repeat a run once per matching row.
        rule |= Q(pk__in=Run.objects.filter(extra).values("pk"))
    return runs.filter(rule)


def can_repush(user, run: Run) -> bool:
    """Drivers and staff re-push any run; an owner re-pushes the runs they launched or pushed."""
    if user.is_staff or is_driver(user):
        return True
    if role_of(user) != Role.OWNER:
        return False
    if run.owner_id == user.pk:
        return True
    return run.job_id is not None and Job.objects.filter(pk=run.job_id, owner=user).exists()


def visible_jobs(user) -> QuerySet[Job]:
    if user.is_staff:
        return Job.objects.all()
    return Job.objects.filter(owner=user)
