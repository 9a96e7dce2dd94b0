"""python -m bench.poll URL TOKEN POLLERS SECONDS INTERVAL: poll URL from POLLERS threads for
SECONDS, each poller asking every INTERVAL seconds from a random start (at once again if an answer
took longer; 0 asks back to back); print every latency (seconds) as JSON.

Run as a process of its own, as a board's viewers are other machines: their work (reading and
unzipping the answers) does not compete with the server for its interpreter.
"""

import json
import random
import sys
import threading
import time

from bench.http import request
from bench.threads import together


def poll(url: str, token: str, pollers: int, seconds: float, interval: float) -> list[float]:
    deadline = time.monotonic() + seconds
    rng = random.Random(8)  # noqa: S311 - start offsets, not secrets
    latencies: list[list[float]] = [[] for _ in range(pollers)]
    errors: list[BaseException] = []

    def poller(out: list[float], offset: float) -> None:
        try:
            tick = time.monotonic() + offset
            while tick < deadline and (now := time.monotonic()) < deadline:
                time.sleep(max(0.0, tick - now))
                tick += interval
                start = time.perf_counter()
                status, _ = request(url, token)
                if status != 200:
                    raise RuntimeError(f"{url} answered {status}")
                out.append(time.perf_counter() - start)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [
        threading.Thread(target=poller, args=(out, rng.uniform(0, interval))) for out in latencies
    ]
    together(threads, errors)
    return [x for out in latencies for x in out]


if __name__ == "__main__":
    url, token = sys.argv[1], sys.argv[2]
    pollers, seconds, interval = int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
    json.dump(poll(url, token, pollers, seconds, interval), sys.stdout)
