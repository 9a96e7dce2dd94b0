"""The history's background work: an ended dispatch's record."""

from django.db import transaction
from django.tasks import task

from ladders.models import Dispatch


@task()
def record_dispatch(dispatch_id: str) -> bool:
    """Write the record of the ended dispatch ``dispatch_id`` (see ``records.keep``); False when
    there is nothing to write (already written, or the dispatch has been replaced)."""
    from loopweb.history import records

    with transaction.atomic():
        # The dispatch lock: a new Run does not replace it while its record is written.
        dispatch = Dispatch.objects.select_for_update().filter(dispatch_id=dispatch_id).first()
        if dispatch is None:
            return False
        return records.keep(dispatch) is not None


def record_unrecorded() -> int:
    """Write every record a lost task left unwritten; how many."""
    from loopweb.history import records

    written = 0
    for dispatch_id in records.unrecorded().values_list("dispatch_id", flat=True):
        written += record_dispatch.call(dispatch_id)
    return written
