"""The words the console and the admin both show for a ladder's status (seed 004's wording)."""

STATUS_LABELS = {
    "notRunYet": "Not run yet",
    "running": "Running",
    "needsAttention": "Needs attention",
    "finished": "Finished",
    "stopped": "Stopped",
}


def status_label(status: str) -> str:
    return STATUS_LABELS.get(status, status)
