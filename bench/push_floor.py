"""A push through the production server against an honest floor: the contract's own writes (the
job ended under its lock, the run row, its runtime signal, the change marks) as one transaction
of SQL written by hand, behind the same authentication on the same server (``/bench/push``).
The one-INSERT floor (``/bench/insert``) measures something else: it is kept, labelled, with no
target."""

from bench.data import user
from bench.http import request
from bench.runner import Row, _claimed_jobs, _via, concurrently
from loopweb.runs.models import ApiToken, Role

RECORD = {
    "checklist": {"i0": True, "i1": True, "i2": True},
    "toolchain": {"build": "ok", "loaded": True},
    "metrics": {"runtime_s": 12.5},
}


def push_against_its_contract(
    server, *, drivers: int, per_driver: int, rounds: int = 4, target: float = 0.6, label=""
) -> Row:
    """Pushes of claimed jobs by ``drivers`` threads, round by round in turn with the floor
    ending as many claimed jobs of its own, so a change in the machine's load weighs on both."""
    driver = user("bench-driver-contract", Role.DRIVER)
    _, token = ApiToken.objects.issue(driver)
    n = drivers * per_driver
    pushed = _claimed_jobs(n, driver, "contract-push")
    floored = _claimed_jobs(n, driver, "contract-floor")
    rounds = max(1, min(rounds, n))
    size = n // rounds
    batch: dict[str, list] = {"push": [], "floor": []}

    def push(i, out):
        for job in batch["push"][i::drivers]:
            body = {
                "job": job.pk,
                "outcome": "completed",
                "record": RECORD,
                "finishedAt": "2026-11-30T00:00:00Z",
            }
            status, _ = request(f"{server.url}/api/runs/", token, "POST", body)
            assert status == 201, status

    def floor(i, out):
        for job in batch["floor"][i::drivers]:
            body = {"job": job.pk, "record": RECORD}
            status, _ = request(f"{server.url}/bench/push", token, "POST", body)
            assert status == 201, status

    push_time = floor_time = 0.0
    for start in range(0, size * rounds, size):
        batch["push"], batch["floor"] = pushed[start : start + size], floored[start : start + size]
        floor_time += concurrently(drivers, floor)[0]
        push_time += concurrently(drivers, push)[0]
    done = size * rounds
    rate, floor_rate = done / push_time, done / floor_time
    return Row(
        "push",
        f"{_via(server, label)}{drivers} concurrent drivers, {done} runs over HTTP, against the "
        "contract's writes as one SQL transaction",
        f"{rate:.0f} runs/s",
        f"{floor_rate:.0f} contract pushes/s",
        rate / floor_rate,
        f"≥ {target:g}× floor",
        rate >= target * floor_rate,
    )
