from django.core.management.base import CommandError

from evalsets import services
from loopweb.runs.management.repeating import RepeatingCommand


class Command(RepeatingCommand):
    help = "Measure every applied proposal whose checkpoints have come due (the periodic sweep)."

    def sweep(self, *, repeating: bool) -> None:
        try:
            recorded = services.verify_open()
        except ExceptionGroup as failed:  # the others were measured; each failure is logged
            if not repeating:
                raise CommandError(str(failed)) from failed
            self.stderr.write(str(failed))
        else:
            if recorded or not repeating:
                self.stdout.write(f"recorded {recorded} outcome result(s)")
