"""Writes of the ladder engine, one module a responsibility, named here for the views, the admin,
the commands and the tasks that call them:

* ``ladders.configuration``: a ladder's configuration (save, reorder rungs, delete);
* ``ladders.dispatching``: Run, Stop and Retry;
* ``ladders.passes``: the launch pass;
* ``ladders.journal``: journaling a dispatch into an evalset.
"""

from ladders.configuration import declared_combinations, delete_ladder, reorder_rungs, save_ladder
from ladders.dispatching import retry_blocked, retry_climber, start_dispatch, stop_dispatch
from ladders.journal import journal_dispatch
from ladders.passes import (
    PassReport,
    launch_pass_now,
    launch_passes_for_running,
    run_launch_pass,
)

__all__ = [
    "PassReport",
    "declared_combinations",
    "delete_ladder",
    "journal_dispatch",
    "launch_pass_now",
    "launch_passes_for_running",
    "reorder_rungs",
    "retry_blocked",
    "retry_climber",
    "run_launch_pass",
    "save_ladder",
    "start_dispatch",
    "stop_dispatch",
]
