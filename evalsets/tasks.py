"""The verify gate's background work: each task fetches by id and calls a service."""

from django.tasks import task

from evalsets import services
from evalsets.models import Evalset
from loopweb.runs.models import Run


@task()
def verify_proposal(proposal_id: int) -> int:
    """After an apply (and at each time checkpoint): measure one proposal."""
    return len(services.verify_proposal(proposal_id=proposal_id))


@task()
def verify_evalset(evalset_id: int) -> int:
    """After a run of the evalset is journaled: measure the proposals it is the evalset of."""
    if not Evalset.objects.filter(pk=evalset_id).exists():
        return 0
    return services.verify_open(evalset_id=evalset_id)


@task()
def verify_after_push(run_id: int) -> int:
    """After a run is pushed (a grain): measure the proposals that count grains."""
    if not Run.objects.filter(pk=run_id).exists():
        return 0
    return services.verify_open(grains_only=True)


@task()
def verify_gate() -> int:
    """The periodic sweep: every proposal the gate still watches."""
    return services.verify_open()
