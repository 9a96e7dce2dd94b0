"""The background worker: a launch pass for every running dispatch at start-up, the periodic
chores (expired leases, due checkpoints), then the database task queue."""

import logging
import threading

from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.db import close_old_connections

from evalsets.services import verify_open
from ladders.services import launch_passes_for_running
from loopweb.runs import changes
from loopweb.runs.services import expire_leases

log = logging.getLogger(__name__)


def periodic_chores() -> None:
    expire_leases()
    verify_open()
    changes.prune()


class Command(BaseCommand):
    help = "Run launch passes at start-up, the periodic chores, and the task queue worker."

    def add_arguments(self, parser):
        parser.add_argument("--interval", type=float, default=0.5, help="queue poll interval")
        parser.add_argument("--chores-every", type=float, default=15.0)

    def handle(self, interval, chores_every, **options):
        count = launch_passes_for_running()
        self.stdout.write(f"start-up: launch passes for {count} running dispatch(es)")
        stop = threading.Event()

        def chores():
            while not stop.wait(chores_every):
                try:
                    periodic_chores()
                except Exception:
                    log.exception("periodic chores failed; retrying at the next tick")
                finally:
                    close_old_connections()

        thread = threading.Thread(target=chores, daemon=True)
        thread.start()
        try:
            call_command("db_worker", interval=interval, reload=False)
        finally:
            stop.set()
