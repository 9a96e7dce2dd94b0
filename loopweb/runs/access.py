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


def _involved(user) -> Q:
    """The runs a user has a part in: launched or pushed by them, or read by the slots of a
    ladder they own or review (the rules higher layers register)."""
    rule = Q(owner=user) | Q(job__owner=user)
    if _run_visibility:
        extra = Q()
        for visibility in _run_visibility:
            extra |= visibility(user)
        # A subquery: rules that follow many-valued relations (a ladder's reviewers) must not
        # repeat a run once per matching row.
        rule |= Q(pk__in=Run.objects.filter(extra).values("pk"))
    return rule


def visible_runs(user) -> QuerySet[Run]:
    runs = Run.objects.all()
    if user.is_staff or is_driver(user):
        return runs
    return runs.filter(Q(published=True) | _involved(user))


def reviewable_runs(user) -> QuerySet[Run]:
    """The runs a user may review (SPEC §1): those of the jobs they launched (or that they
    pushed from outside Loopweb), and those a ladder they own or review reads. Reading a run is
    not reviewing it: neither publishing nor being staff or a driver makes a run reviewable."""
    if not user.is_authenticated or role_of(user) not in (Role.OWNER, Role.REVIEWER):
        return Run.objects.none()
    return Run.objects.filter(_involved(user))


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
