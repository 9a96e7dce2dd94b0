import time

from django.core.management.base import BaseCommand, CommandError

from evalsets import services


class Command(BaseCommand):
    help = "Measure every applied proposal whose checkpoints have come due (the periodic sweep)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=0, help="repeat every N seconds until interrupted"
        )

    def handle(self, every, **options):
        if not every >= 0:  # also refuses nan
            raise CommandError("--every must not be negative")
        while True:
            try:
                recorded = services.verify_open()
            except ExceptionGroup as failed:  # the others were measured; each failure is logged
                if not every:
                    raise CommandError(str(failed)) from failed
                self.stderr.write(str(failed))
            else:
                if recorded or not every:
                    self.stdout.write(f"recorded {recorded} outcome result(s)")
                if not every:
                    return
            time.sleep(every)
