"""A sweep as a command: run once, or every ``--every`` seconds until interrupted."""

import time

from django.core.management.base import BaseCommand, CommandError


class RepeatingCommand(BaseCommand):
    """``sweep`` once, or again every ``--every`` seconds until interrupted."""

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=0, help="repeat every N seconds until interrupted"
        )

    def handle(self, every, **options):
        if not every >= 0:  # also refuses nan
            raise CommandError("--every must not be negative")
        while True:
            self.sweep(repeating=bool(every))
            if not every:
                return
            time.sleep(every)

    def sweep(self, *, repeating: bool) -> None:
        """One sweep; ``repeating`` when another follows, so a failure may be reported and left
        to the next one."""
        raise NotImplementedError
