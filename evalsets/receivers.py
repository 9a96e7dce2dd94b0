"""What the verify gate does when the run substrate announces something: enqueue, no more."""

from evalsets import tasks
from evalsets.models import GATE_OPEN, Proposal
from loopweb.tasking import enqueue


def run_pushed(sender, run, created, **kwargs) -> None:
    """A newly pushed run is a grain: measure the proposals that wait on grains."""
    if not created:
        return  # a re-push rewrites a run; it is not a new grain
    if Proposal.objects.filter(GATE_OPEN, waits_on_grains=True).exists():
        enqueue(tasks.verify_after_push, run.pk)
