"""The words the console and the admin both show for a ladder's status (seed 004's wording)."""

from ladders.statuses import FINISHED, NEEDS_ATTENTION, NOT_RUN_YET, RUNNING, STOPPED

STATUS_LABELS = {
    NOT_RUN_YET: "Not run yet",
    RUNNING: "Running",
    NEEDS_ATTENTION: "Needs attention",
    FINISHED: "Finished",
    STOPPED: "Stopped",
}


def status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)
