"""The words a ladder, its climbers and their rung slots are reported in, defined once: the
standing computes them, progress reports them, and the console and the admin read them. Pure.
"""

# A climber's status ------------------------------------------------------------------------
RUNNING = "running"
BLOCKED = "blocked"
FAILED = "failed"
COMPLETED = "completed"
#: A climber of a stopped dispatch that was running or blocked when the Stop landed; its
#: ``currentRung`` is the rung it stood on. The same word is a stopped dispatch's status.
STOPPED = "stopped"
CLIMBER_STATUSES = (RUNNING, BLOCKED, FAILED, COMPLETED, STOPPED)
#: What a climber still climbing when its dispatch ended reads: a dispatch ends running or
#: blocked climbers only by a Stop (it finishes once every climber completed or failed).
CAUGHT_BY_THE_END = (RUNNING, BLOCKED)


def ended_climber_status(status: str) -> str:
    """A climber's status once its dispatch has ended: one still climbing was stopped. Reads a
    standing stored before climbers could read stopped as it reads now."""
    return STOPPED if status in CAUGHT_BY_THE_END else status


# A rung slot's status (running and blocked: the climber's current rung) ---------------------
PASSED = "passed"
PENDING = "pending"
SKIPPED = "skipped"
SLOT_STATUSES = (RUNNING, BLOCKED, PASSED, FAILED, PENDING, SKIPPED)

# Why a climber is blocked ------------------------------------------------------------------
UNLAUNCHABLE = "unlaunchable"
FAILING = "failing"
UNRATED = "unrated"
BLOCKED_REASONS = (UNLAUNCHABLE, FAILING, UNRATED)
#: The reasons a Retry answers; an unrated climber waits for a re-push or a Stop.
RETRYABLE_REASONS = (UNLAUNCHABLE, FAILING)

# A ladder's status: its dispatch's, with Needs attention derived ---------------------------
NOT_RUN_YET = "notRunYet"
NEEDS_ATTENTION = "needsAttention"
FINISHED = "finished"
# STOPPED: the word above.
LADDER_STATUSES = (NOT_RUN_YET, RUNNING, NEEDS_ATTENTION, FINISHED, STOPPED)
#: A ladder whose dispatch is still running: its board keeps refreshing itself.
LIVE = (RUNNING, NEEDS_ATTENTION)
