from loopweb.runs import services
from loopweb.runs.management.repeating import RepeatingCommand


class Command(RepeatingCommand):
    help = "End every attempt whose driver lease expired (as infrastructure, retried if allowed)."

    def sweep(self, *, repeating: bool) -> None:
        ended = services.expire_leases()
        if ended or not repeating:
            self.stdout.write(f"expired {ended} lease(s)")
