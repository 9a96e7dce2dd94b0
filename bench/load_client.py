"""python -m bench.load_client SPEC: drivers pushing runs and pollers reading a board at once,
from a process of its own (as other machines would), over HTTP to several web processes.

SPEC is a JSON object: ``servers`` (base URLs), ``ladder``, ``owner`` and ``driver`` tokens,
``drivers``, ``pollers``, ``seconds`` (of pushing), ``quiet`` (seconds of polling after the
drivers stop), ``interval``. Prints JSON: every poll's latency, status, size, whether it sent a
version back and when it was sent (seconds after the drivers began); the stale replies; and the
pushes acknowledged.

A poller reads the board as an efficient client does: the whole board once, then, with its
version as ``If-None-Match`` and ``?since=``, a 304 while nothing changed, else only the climbers
that changed, merged into the board it holds; over a connection it keeps alive between polls.

A reply is stale when it shows fewer counted runs than the pushes acknowledged before its
request was sent: every push here is of a job the dispatch launched for a reached slot, within
its target, so each adds one counted run to the board's tallies.

The drivers run in one process and the pollers in processes of five, as the clients are other
machines: a poller timing a 304 does not wait for the interpreter while another decodes a
half-megabyte answer or a driver its claim (one process for all would add that wait to every
latency measured). The pushes acknowledged are counted in memory they all share.
"""

import json
import multiprocessing
import random
import sys
import threading
import time

from bench.http import Session, request
from bench.threads import together

PASSING = {"checklist": {"i0": True, "i1": True, "i2": True}, "toolchain": {"build": "ok"}}
FAILING = {"checklist": {"i0": False}, "toolchain": {"build": "ok"}}


def counted(climbers) -> int:
    """The counted runs a board's slots show."""
    return sum(
        slot["tally"]["counted"]
        for climber in climbers
        for slot in climber["slots"]
        if slot["tally"]
    )


#: Pollers per client process.
POLLERS_PER_PROCESS = 5


def run(spec: dict) -> dict:
    """Every driver and poller of the spec, in processes of their own, until its time is up."""
    spec = {**spec, "deadline": time.monotonic() + spec["seconds"]}  # one clock for all
    context = multiprocessing.get_context("fork")
    acked = context.Value("q", 0)
    results = context.Queue()
    n = spec["pollers"]
    groups = [("drivers", list(range(spec["drivers"])))] + [
        ("pollers", list(range(i, min(i + POLLERS_PER_PROCESS, n))))
        for i in range(0, n, POLLERS_PER_PROCESS)
    ]
    processes = [
        context.Process(target=_group, args=(spec, kind, ids, acked, results))
        for kind, ids in groups
    ]
    for process in processes:
        process.start()
    found = [results.get() for _ in processes]
    for process in processes:
        process.join()
    errors = [error for part in found for error in part["errors"]]
    if errors:
        raise RuntimeError(errors[0])
    return {
        "polls": [poll for part in found for poll in part["polls"]],
        "stale": [stale for part in found for stale in part["stale"]],
        "pushes": acked.value,
    }


def _group(spec: dict, kind: str, ids: list[int], acked, results) -> None:
    """One client process: these drivers or pollers, as threads; what they saw, to ``results``."""
    try:
        part = run_group(spec, kind, ids, acked)
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        part = {"polls": [], "stale": [], "errors": [repr(exc)]}
    results.put(part)


def run_group(spec: dict, kind: str, ids: list[int], acked) -> dict:
    servers, deadline = spec["servers"], spec["deadline"]
    began = deadline - spec["seconds"]
    ingest = spec.get("driver_servers") or servers
    stop_polling = deadline + spec.get("quiet", 0)
    origin = f"ladder:{spec['ladder']}/"
    polls: list[list] = []
    stale: list[dict] = []
    errors: list[BaseException] = []

    def driver(i: int) -> None:
        rng = random.Random(i)  # noqa: S311 - which record to push, not a secret
        n = i
        try:
            while time.monotonic() < deadline:
                server = ingest[n % len(ingest)]
                n += 1
                _, body = request(f"{server}/api/driver/claim", spec["driver"], "POST", {"max": 1})
                jobs = json.loads(body)
                if not jobs:
                    time.sleep(0.05)
                    continue
                [job] = jobs
                record = PASSING if rng.random() < 0.9 else FAILING
                status, _ = request(
                    f"{server}/api/runs/",
                    spec["driver"],
                    "POST",
                    {
                        "job": job["id"],
                        "outcome": "completed",
                        "record": record,
                        "finishedAt": "2026-11-30T00:00:00Z",
                    },
                )
                assert status == 201, status
                if job["origin"].startswith(origin):
                    with acked.get_lock():
                        acked.value += 1
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def poller(i: int) -> None:
        rng = random.Random(100 + i)  # noqa: S311
        climbers: dict[str, dict] = {}
        version = None
        session = Session(spec["owner"])
        tick = time.monotonic() + rng.uniform(0, spec["interval"])
        n = i
        try:
            while tick < stop_polling and (now := time.monotonic()) < stop_polling:
                time.sleep(max(0.0, tick - now))
                tick += spec["interval"]
                server = servers[n % len(servers)]
                n += 1
                expected = acked.value
                url = f"{server}/api/ladders/{spec['ladder']}/progress"
                start = time.perf_counter()
                followed, at = version is not None, time.monotonic() - began
                if version is None:
                    status, body, _ = session.get(url)
                else:
                    status, body, _ = session.get(
                        f"{url}?since={version}", {"If-None-Match": f'"{version}"'}
                    )
                latency = time.perf_counter() - start
                if status == 200:
                    board = json.loads(body)
                    if board.get("since") is None:
                        climbers.clear()
                    climbers.update((c["key"], c) for c in board["climbers"])
                    version = board["version"]
                polls.append([latency, status, len(body), followed, at])
                shown = counted(climbers.values())
                if shown < expected:
                    stale.append({"shown": shown, "acknowledged": expected, "status": status})
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    target = driver if kind == "drivers" else poller
    threads = [threading.Thread(target=target, args=(i,)) for i in ids]
    try:
        together(threads, errors)
    except BaseException as exc:  # noqa: BLE001 - reported by the parent
        return {"polls": polls, "stale": stale, "errors": [repr(exc)]}
    return {"polls": polls, "stale": stale, "errors": []}


if __name__ == "__main__":
    json.dump(run(json.loads(sys.argv[1])), sys.stdout)
