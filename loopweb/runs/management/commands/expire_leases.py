import time

from django.core.management.base import BaseCommand

from loopweb.runs import services


class Command(BaseCommand):
    help = "End every attempt whose driver lease expired (as infrastructure, retried if allowed)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=0, help="repeat every N seconds until interrupted"
        )

    def handle(self, every, **options):
        while True:
            ended = services.expire_leases()
            if ended or not every:
                self.stdout.write(f"expired {ended} lease(s)")
            if not every:
                return
            time.sleep(every)
