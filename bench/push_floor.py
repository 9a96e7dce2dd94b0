"""A push through the production server against an honest floor: the contract's own writes (the
job ended under its lock, the run row, its runtime signal, the change marks) as one transaction
of SQL written by hand, behind the same authentication on the same server (``/bench/push``).
Beside it, the same writes through Django's ORM with the push's own serializers in and out
(``/bench/push-orm``): what the stack reaches doing nothing else, for reference, with no target.
The one-INSERT floor (``/bench/insert``) measures something else: it is kept, labelled, with no
target."""

from bench.data import user
from bench.http import request
from bench.runner import RECORD, Row, _claimed_jobs, _via, concurrently
from loopweb.runs.models import ApiToken, Role

#: Each side's path, timed in this order round after round: the floor first.
SIDES = {"floor": "/bench/push", "orm": "/bench/push-orm", "push": "/api/runs/"}


def push_against_its_contract(
    server, *, drivers: int, per_driver: int, rounds: int = 4, target: float = 0.6, label=""
) -> list[Row]:
    """Pushes of claimed jobs by ``drivers`` threads, round by round in turn with the floor and
    the ORM's writes ending as many claimed jobs of their own, so a change in the machine's load
    weighs on all three: the push against the floor, and the ORM's writes against it."""
    driver = user("bench-driver-contract", Role.DRIVER)
    _, token = ApiToken.objects.issue(driver)
    n = drivers * per_driver
    jobs = {side: _claimed_jobs(n, driver, f"contract-{side}") for side in SIDES}
    rounds = max(1, min(rounds, n))
    size = n // rounds
    elapsed = dict.fromkeys(SIDES, 0.0)
    for start in range(0, size * rounds, size):
        for side, path in SIDES.items():
            batch = jobs[side][start : start + size]

            def push(i, out, batch=batch, path=path):
                for job in batch[i::drivers]:
                    body = {
                        "job": job.pk,
                        "outcome": "completed",
                        "record": RECORD,
                        "finishedAt": "2026-11-30T00:00:00Z",
                    }
                    status, _ = request(f"{server.url}{path}", token, "POST", body)
                    assert status == 201, status

            elapsed[side] += concurrently(drivers, push)[0]
    done = size * rounds
    rate = {side: done / seconds for side, seconds in elapsed.items()}
    floor = f"{rate['floor']:.0f} contract pushes/s"
    via = f"{_via(server, label)}{drivers} concurrent drivers, {done} runs over HTTP, against the"
    return [
        Row(
            "push",
            f"{via} contract's writes as one SQL transaction",
            f"{rate['push']:.0f} runs/s",
            floor,
            rate["push"] / rate["floor"],
            f"≥ {target:g}× floor",
            rate["push"] >= target * rate["floor"],
        ),
        Row(
            "push, the contract's writes alone",
            f"{via} same writes as one SQL transaction: the job, the run and its signal through "
            "Django's ORM, the push's serializers in and out, nothing else",
            f"{rate['orm']:.0f} pushes/s",
            floor,
            rate["orm"] / rate["floor"],
            "none: what the stack reaches doing only the contract's writes",
            None,
        ),
    ]
