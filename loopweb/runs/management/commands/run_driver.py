import threading

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from loopweb.driver import cli
from loopweb.runs.models import ApiToken, Role


class Command(BaseCommand):
    help = (
        "Run a fleet of simulated drivers against a Loopweb server over HTTP (the demo's). A "
        "driver machine runs `loopweb-driver` instead, which needs no database."
    )

    def add_arguments(self, parser):
        parser.add_argument("--simulate", action="store_true", help="run simulated harnesses")
        parser.add_argument("--url", default="http://127.0.0.1:8000")
        parser.add_argument("--token", help="a driver token (default: a driver account 'fleet')")
        parser.add_argument("--concurrency", type=int, default=4)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--speed", type=float, default=1.0, help="time speed-up factor")
        parser.add_argument("--poll", type=float, default=1.0, help="seconds between idle claims")

    def handle(self, simulate, url, token, concurrency, seed, speed, poll, **options):
        if not simulate:
            raise CommandError(
                "Only --simulate is built in; a real harness runs `loopweb-driver --execute` "
                "(see docs/drivers.md)."
            )
        if concurrency < 1 or speed <= 0:
            raise CommandError("--concurrency must be at least 1 and --speed positive.")
        if not token:
            user, _ = get_user_model().objects.get_or_create(username="fleet")
            user.account.role = Role.DRIVER
            user.account.save()
            _, token = ApiToken.objects.issue(user, name="simulated fleet")
        stop = threading.Event()
        threads = cli.start(
            url,
            token,
            simulate=True,
            concurrency=concurrency,
            seed=seed,
            speed=speed,
            poll=poll,
            heartbeat=10.0,
            stop=stop,
        )
        self.stdout.write(f"{concurrency} simulated driver(s) serving {url} (seed {seed})")
        cli.wait_and_stop(threads, stop)
