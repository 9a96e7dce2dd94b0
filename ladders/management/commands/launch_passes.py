from django.core.management.base import BaseCommand

from ladders.services import launch_passes_for_running


class Command(BaseCommand):
    help = "Run one launch pass for every running dispatch (done at start-up)."

    def handle(self, **options):
        count = launch_passes_for_running()
        self.stdout.write(f"ran launch passes for {count} running dispatch(es)")
