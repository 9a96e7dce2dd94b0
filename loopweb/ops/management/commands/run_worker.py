from django.core.management.base import BaseCommand

from loopweb.ops import worker


class Command(BaseCommand):
    help = (
        "The task worker: start-up recovery, the periodic chores and the task queue; waits for a "
        "lost database and recovers when it is back. Run as many as you like."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--interval", type=float, default=0.5, help="seconds between polls of an empty queue"
        )
        parser.add_argument("--worker-id", help="a unique id (default: host, pid and a suffix)")
        parser.add_argument(
            "--metrics-port",
            type=int,
            default=0,
            help="also serve this worker's metrics over HTTP on this port (for a worker on a "
            "machine without a web process)",
        )

    def handle(self, interval, worker_id, metrics_port, **options):
        from loopweb import memory

        memory.settle()
        if metrics_port:
            from loopweb.ops.metrics import serve_worker_metrics

            serve_worker_metrics(metrics_port)
        worker.run(interval=interval, worker_id=worker_id)
