"""The invariants the stress scenarios check after every step, on one consistent snapshot.

Each check runs in a REPEATABLE READ transaction, so every query sees the same committed
state: a violation is a state the database really held, never an artefact of reading half of
one transaction and half of another.

1. launch nothing twice: for every dispatch and cell, the dispatch's counted runs plus its jobs in
   flight never exceed the cell's target (so its counted runs never do either); and across
   ladders, a cell's jobs in flight never exceed the largest target any dispatch gave it;
2. the dispatch's jobs in flight never exceed its runs-in-flight limit;
3. a job left queued or pending belongs to its ladder's running dispatch (a stopped, finished or
   replaced dispatch has none);
4. a finished dispatch has no job in flight;
5. progress serialises to JSON and its counts add up.
"""

import json
import threading
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Q
from django.db.models.signals import post_save

from ladders.models import Dispatch, Ladder
from ladders.selectors import ladder_progress
from ladders.standing import SLOT_STATUSES
from loopweb.runs.models import IN_FLIGHT, NOT_STARTED, Job, Run

LADDER_STATUSES = {"notRunYet", "running", "needsAttention", "finished", "stopped"}
CLIMBER_STATUSES = {"running", "blocked", "failed", "completed", "stopped"}
BLOCKED_REASONS = {"unlaunchable", "failing", "unrated"}


def split_origin(origin: str) -> tuple[int, str, str] | None:
    """``ladder:<ladderId>/<dispatchId>/<rungId>`` → (ladder id, dispatch id, rung id)."""
    if not origin.startswith("ladder:"):
        return None
    ladder, dispatch, rung = origin[len("ladder:") :].split("/")
    return int(ladder), dispatch, rung


def pin_key_of(cell_key: str) -> str:
    return cell_key.split("::", 1)[0]


def rung_pin_key(rung: dict) -> str:
    return f"{rung['case']}@{rung['version']}/{rung['variant']}/{rung.get('engine') or '-'}"


@dataclass(frozen=True)
class DispatchFacts:
    """What the invariants need of a dispatch's snapshot, kept after a Run replaces it."""

    ladder_id: int
    limit: int
    targets: dict  # pin key → the largest target of the rungs pinning it

    @classmethod
    def of(cls, ladder_id: int, snapshot: dict) -> "DispatchFacts":
        targets: dict[str, int] = {}
        for rung in snapshot["rungs"]:
            key = rung_pin_key(rung)
            targets[key] = max(targets.get(key, 0), rung["runs"])
        return cls(ladder_id, snapshot["runsInFlightLimit"], targets)


class Registry:
    """Every dispatch id a scenario ever saved, with its snapshot's facts (only the latest
    dispatch of a ladder is kept in the database, but its jobs outlive it)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._facts: dict[str, DispatchFacts] = {}

    def record(self, dispatch_id: str, ladder_id: int, snapshot: dict) -> None:
        with self._lock:
            self._facts.setdefault(dispatch_id, DispatchFacts.of(ladder_id, snapshot))

    def get(self, dispatch_id: str) -> DispatchFacts | None:
        with self._lock:
            return self._facts.get(dispatch_id)

    def largest_target(self, pin: str) -> int | None:
        with self._lock:
            targets = [f.targets[pin] for f in self._facts.values() if pin in f.targets]
        return max(targets, default=None)

    def __len__(self) -> int:
        return len(self._facts)

    def on_save(self, sender, instance, **kwargs) -> None:
        self.record(instance.dispatch_id, instance.ladder_id, instance.snapshot)

    def __enter__(self):
        post_save.connect(self.on_save, sender=Dispatch, weak=False)
        return self

    def __exit__(self, *exc):
        post_save.disconnect(self.on_save, sender=Dispatch)


def _repeatable_read() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")


def check(registry: Registry, ladder_ids: list[int], seen: set | None = None) -> list[str]:
    """Every invariant of these ladders on one snapshot; returns the violations found. What the
    boards read (ladder statuses, climber statuses and blocked reasons) is added to ``seen``."""
    of_ladders = Q()
    for ladder_id in ladder_ids:
        of_ladders |= Q(origin__startswith=f"ladder:{ladder_id}/")
    with transaction.atomic():
        _repeatable_read()
        dispatches = list(
            Dispatch.objects.filter(ladder_id__in=ladder_ids).values_list(
                "ladder_id", "dispatch_id", "status"
            )
        )
        jobs = list(Job.objects.filter(of_ladders).values_list("origin", "cell_key", "status"))
        counted = list(
            Run.objects.filter(counted=True, job__in=Job.objects.filter(of_ladders)).values_list(
                "job__origin", "cell_key"
            )
        )
        ladders = list(Ladder.objects.filter(pk__in=ladder_ids))
        progress = [(ladder, ladder_progress(ladder)) for ladder in ladders]
    if seen is not None:
        for _, body in progress:
            seen.add(f"ladder:{body['ladder']['status']}")
            for climber in body["climbers"]:
                seen.add(f"climber:{climber['status']}:{climber['blockedReason'] or '-'}")
    return violations(registry, dispatches, jobs, counted, ladders, progress)


def violations(registry, dispatches, jobs, counted, ladders, progress) -> list[str]:
    found: list[str] = []
    current = {ladder_id: (did, status) for ladder_id, did, status in dispatches}
    ladder_ids = {ladder.pk for ladder in ladders}

    used = Counter()  # (dispatch, cell) → counted runs + jobs in flight
    in_flight = Counter()  # dispatch → jobs in flight
    for origin, cell, status in jobs:
        _, did, _ = split_origin(origin)
        if status in IN_FLIGHT:
            used[(did, cell)] += 1
            in_flight[did] += 1
    for origin, cell in counted:
        _, did, _ = split_origin(origin)
        used[(did, cell)] += 1

    for (did, cell), n in used.items():
        facts = registry.get(did)
        if facts is None:
            continue
        target = facts.targets.get(pin_key_of(cell))
        if target is None:
            found.append(f"dispatch {did} launched into {cell}, which none of its rungs pins")
        elif n > target:
            found.append(
                f"dispatch {did}: {n} counted runs and jobs in flight for {cell}, target {target}"
            )
    for did, n in in_flight.items():
        facts = registry.get(did)
        if facts is not None and n > facts.limit:
            found.append(f"dispatch {did}: {n} jobs in flight, limit {facts.limit}")

    # Across ladders: a job in flight for a cell holds every slot's place, so the ladders' jobs
    # in flight for a cell never exceed the largest target any dispatch gave it.
    cell_in_flight = Counter(cell for _, cell, status in jobs if status in IN_FLIGHT)
    for cell, n in cell_in_flight.items():
        target = registry.largest_target(pin_key_of(cell))
        if target is not None and n > target:
            found.append(f"{n} ladder jobs in flight for {cell}, the largest target is {target}")

    for origin, _cell, status in jobs:
        ladder_id, did, _ = split_origin(origin)
        if ladder_id not in ladder_ids:
            continue  # a deleted ladder's jobs are left alone
        now, now_status = current.get(ladder_id, (None, None))
        if status in NOT_STARTED and (did != now or now_status != "running"):
            found.append(
                f"job of ladder {ladder_id} dispatch {did} left {status} while the ladder's "
                f"dispatch is {now} ({now_status})"
            )
        if status in IN_FLIGHT and did == now and now_status == "finished":
            found.append(f"finished dispatch {did} still has a job {status}")

    for ladder, body in progress:
        found.extend(f"ladder {ladder.pk} progress: {p}" for p in progress_problems(body))
    return found


def progress_problems(body: dict) -> list[str]:
    """The progress board parses and its counts add up."""
    problems = []
    try:
        body = json.loads(json.dumps(body, cls=DjangoJSONEncoder))
    except (TypeError, ValueError) as exc:
        return [f"does not serialise: {exc}"]
    status = body["ladder"]["status"]
    if status not in LADDER_STATUSES:
        problems.append(f"ladder status {status!r}")
    dispatch = body["dispatch"]
    if dispatch is None:
        if status != "notRunYet" or body["climbers"]:
            problems.append("no dispatch, yet a status or climbers")
        return problems
    if dispatch["status"] != status:
        problems.append(f"dispatch status {dispatch['status']} vs ladder status {status}")
    rungs = dispatch["rungs"]
    climbers = body["climbers"]
    counts = dispatch["slotCounts"]
    if set(counts) != set(SLOT_STATUSES):
        problems.append(f"slotCounts keys {sorted(counts)}")
    if sum(counts.values()) != len(climbers) * len(rungs):
        problems.append(f"slotCounts {counts} for {len(climbers)} climbers × {len(rungs)} rungs")
    listed = Counter(s["status"] for c in climbers for s in c["slots"])
    if any(listed[k] != counts.get(k, 0) for k in SLOT_STATUSES):
        problems.append(f"slotCounts {counts} but the slots read {dict(listed)}")
    runs = dispatch["runs"]
    total = len(climbers) * sum(r["runs"] for r in rungs)
    if runs["total"] != total:
        problems.append(f"runs.total {runs['total']}, the targets add up to {total}")
    if not 0 <= runs["done"] <= runs["total"]:
        problems.append(f"runs.done {runs['done']} of {runs['total']}")
    if not 0 <= runs["inFlight"] <= dispatch["runsInFlightLimit"]:
        problems.append(f"runs.inFlight {runs['inFlight']}, limit {dispatch['runsInFlightLimit']}")
    if status == "finished" and (runs["done"] != runs["total"] or runs["inFlight"]):
        problems.append(f"finished with runs {runs}")
    if status == "needsAttention" and runs["inFlight"]:
        problems.append(f"needs attention with {runs['inFlight']} in flight")
    if status == "stopped" and (listed["running"] or listed["blocked"] or listed["pending"]):
        problems.append(f"stopped with slots {dict(listed)}")
    climbing = {c["status"] for c in climbers} & {"running", "blocked"}
    if status in ("stopped", "finished") and climbing:
        problems.append(f"{status} with climbers {sorted(climbing)}")
    if status != "stopped" and any(c["status"] == "stopped" for c in climbers):
        problems.append(f"{status} with a stopped climber")
    if not 0 <= runs.get("skippedByStop", 0) <= runs["done"] or (
        status != "stopped" and runs.get("skippedByStop")
    ):
        problems.append(f"{status} with runs {runs}")
    for climber in climbers:
        problems.extend(_climber_problems(climber, rungs))
    return problems


def _climber_problems(climber: dict, rungs: list[dict]) -> list[str]:
    problems = []
    key = climber["key"]
    if climber["status"] not in CLIMBER_STATUSES:
        problems.append(f"climber {key} status {climber['status']!r}")
    reason = climber["blockedReason"]
    if (climber["status"] == "blocked") != (reason is not None) or (
        reason is not None and reason not in BLOCKED_REASONS
    ):
        problems.append(f"climber {key} {climber['status']} with reason {reason!r}")
    if len(climber["slots"]) != len(rungs):
        problems.append(f"climber {key} has {len(climber['slots'])} slots for {len(rungs)} rungs")
    targets = defaultdict(int, {r["id"]: r["runs"] for r in rungs})
    for slot in climber["slots"]:
        tally = slot["tally"]
        if tally is None:
            continue
        if any(v < 0 for v in tally.values()):
            problems.append(f"climber {key} slot {slot['rung']} tally {tally}")
        if tally["counted"] > targets[slot["rung"]]:
            problems.append(f"climber {key} slot {slot['rung']} counts {tally['counted']} runs")
        if (
            tally["rated"] + tally["unrated"] != tally["counted"]
            or tally["counted"] + tally["pending"] != targets[slot["rung"]]
            or tally["passing"] > tally["rated"]
            or tally["inFlight"] > tally["pending"]
        ):
            problems.append(f"climber {key} slot {slot['rung']} tally {tally} does not add up")
    return problems
