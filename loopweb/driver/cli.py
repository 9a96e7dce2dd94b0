"""``loopweb-driver``: a driver machine's command. It needs no database and no Django settings,
only the server's URL and a driver token.

    loopweb-driver --url https://loopweb.example --token … --execute myharness:execute
    loopweb-driver --url http://127.0.0.1:8000 --token … --simulate --concurrency 8

``--execute module:function`` names the function that runs one job (see docs/drivers.md); one
that raises ``loopweb.driver.RateLimited`` (the provider answered 429 before the model did
anything) has its job released back to the queue, and the provider's budget backs off;
``--simulate`` runs the simulated harnesses of the demo instead; ``--inspect TASKS`` runs each
job as an Inspect AI evaluation (``pip install loopweb[inspect]``,
``loopweb.driver.inspect_executor``). The token may also come from ``LOOPWEB_DRIVER_TOKEN`` (so
it is not shown in the process list). Ctrl-C (or SIGTERM) stops every driver within a few
seconds: a job under way is reported as an infrastructure failure, which the server retries at
once. ``LOG_FORMAT=json`` prints JSON lines.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable

from loopweb.driver.client import Driver

log = logging.getLogger("loopweb.driver")

#: How long a stop waits for the drivers to finish what they were doing.
STOP_WITHIN = 4.0


def load(path: str) -> Callable:
    module, _, name = path.partition(":")
    if not module or not name:
        raise argparse.ArgumentTypeError("--execute takes module:function")
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as exc:
        raise argparse.ArgumentTypeError(f"cannot load {path}: {exc}") from exc


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="loopweb-driver", description=__doc__.split("\n\n")[0])
    p.add_argument("--url", required=True, help="the Loopweb server, e.g. https://loopweb.example")
    p.add_argument("--token", default=os.environ.get("LOOPWEB_DRIVER_TOKEN"), help="a driver token")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--execute", type=load, help="module:function that runs one job")
    what.add_argument("--simulate", action="store_true", help="run simulated harnesses")
    what.add_argument(
        "--inspect", metavar="TASKS", help="a module mapping cases to Inspect tasks (TASKS, MODELS)"
    )
    p.add_argument(
        "--inspect-log-dir",
        default=os.environ.get("LOOPWEB_INSPECT_LOG_DIR", "logs"),
        help="where Inspect writes its .eval logs (a directory or s3://…)",
    )
    p.add_argument(
        "--inspect-log-url",
        default=os.environ.get("LOOPWEB_INSPECT_LOG_URL"),
        help="the logs' public address: a run's artifact links here, the log's name appended",
    )
    p.add_argument("--concurrency", type=int, default=1, help="jobs run at once (threads)")
    p.add_argument("--seed", type=int, default=0, help="the simulated draws' seed")
    p.add_argument("--speed", type=float, default=1.0, help="simulated time speed-up")
    p.add_argument("--poll", type=float, default=2.0, help="seconds between claims when idle")
    p.add_argument("--heartbeat", type=float, default=30.0, help="seconds between heartbeats")
    p.add_argument(
        "--journal", help="append a JSON line per run the server acknowledged to this file"
    )
    return p


class Journal:
    """A local record of every push the server acknowledged: job, run, outcome, attempt."""

    def __init__(self, path: str):
        self.handle = open(path, "a", buffering=1)  # noqa: SIM115 - open while the drivers run
        self.lock = threading.Lock()

    def __call__(self, job, answer: dict) -> None:
        line = json.dumps(
            {
                "job": job.id,
                "run": (answer or {}).get("id"),
                "outcome": (answer or {}).get("outcome"),
                "attempt": job.data.get("attempt"),
                "cellKey": job.data.get("cellKey"),
            }
        )
        with self.lock:
            self.handle.write(line + "\n")


def start(
    url: str,
    token: str,
    *,
    execute: Callable | None = None,
    simulate: bool = False,
    concurrency: int = 1,
    seed: int = 0,
    speed: float = 1.0,
    poll: float = 2.0,
    heartbeat: float = 30.0,
    on_pushed: Callable | None = None,
    stop: threading.Event,
) -> list[threading.Thread]:
    """Start the drivers in threads; they stop when ``stop`` is set."""
    if simulate:
        from loopweb.driver.simulate import run_fleet

        return run_fleet(
            url,
            token,
            concurrency=concurrency,
            seed=seed,
            speed=speed,
            stop=stop,
            poll_interval=poll,
            heartbeat=heartbeat,
            on_pushed=on_pushed,
        )
    threads = []
    for _ in range(concurrency):
        driver = Driver(
            url, token, poll_interval=poll, heartbeat=heartbeat, stop=stop, on_pushed=on_pushed
        )
        thread = threading.Thread(
            target=driver.serve, args=(execute,), kwargs={"stop": stop}, daemon=True
        )
        thread.start()
        threads.append(thread)
    return threads


def wait_and_stop(threads: list[threading.Thread], stop: threading.Event) -> None:
    """Wait for a stop (Ctrl-C, SIGTERM), then give the drivers a few seconds to wind down."""
    interrupted = []

    def on_signal(signum, frame):
        # A second Ctrl-C leaves at once. A SIGTERM right after the terminal's SIGINT is the same
        # request (a script forwarding the stop to its children), not an impatient user.
        if interrupted and signum == signal.SIGINT:
            os._exit(130)
        interrupted.append(signum)
        stop.set()

    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.2):
            pass
        log.info("stopping: %d driver(s) winding down", len(threads))
        deadline = time.monotonic() + STOP_WITHIN
        for thread in threads:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def inspect_executor(args: argparse.Namespace) -> Callable:
    try:
        from loopweb.driver.inspect_executor import InspectExecutor

        return InspectExecutor.from_module(
            args.inspect, log_dir=args.inspect_log_dir, log_url=args.inspect_log_url
        )
    except ImportError as exc:
        parser().error(f"--inspect {args.inspect}: {exc} (pip install 'loopweb[inspect]')")
    except ValueError as exc:
        parser().error(str(exc))
    raise AssertionError("unreachable")


def main(argv: list[str] | None = None) -> int:
    from loopweb.logs import configure_standalone

    configure_standalone()
    args = parser().parse_args(argv)
    if not args.token:
        parser().error("a driver token is required: --token or LOOPWEB_DRIVER_TOKEN")
    if args.concurrency < 1 or args.speed <= 0:
        parser().error("--concurrency must be at least 1 and --speed positive")
    if args.inspect:
        if args.concurrency > 1:
            parser().error("--inspect runs one evaluation at a time: start more processes")
        args.execute = inspect_executor(args)
    stop = threading.Event()
    threads = start(
        args.url,
        args.token,
        execute=args.execute,
        simulate=args.simulate,
        concurrency=args.concurrency,
        seed=args.seed,
        speed=args.speed,
        poll=args.poll,
        heartbeat=args.heartbeat,
        on_pushed=Journal(args.journal) if args.journal else None,
        stop=stop,
    )
    what = "simulated driver(s)" if args.simulate else "driver(s)"
    log.info(
        "%d %s serving %s", args.concurrency, what, args.url, extra={"event": "driver.started"}
    )
    wait_and_stop(threads, stop)
    return 0


if __name__ == "__main__":
    sys.exit(main())
