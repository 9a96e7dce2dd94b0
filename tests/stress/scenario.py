"""One seeded, randomized stress scenario on PostgreSQL.

A seed fixes the deployment (ladders, rungs, climbers, targets, limits, gates, how many drivers,
owners and workers) and every choice each actor makes. Threads then act at once, each with its own
database connection:

* drivers, over the REST API: claim, report status (and heartbeat), push a run (completed, model
  failure), fail, push again (the lost-answer re-send), re-push, push for a cell, and die (abandon
  their jobs, which then expire and are retried or block);
* owners, over the REST API: Run, Stop, Stop and cancel running, Retry, edit the configuration,
  read progress, launch and cancel by hand, ingest a missing case version;
* workers: run queued tasks (launch passes), run passes directly, expire leases, run the start-up
  pass.

After every step the acting thread checks every invariant (``invariants.check``) on one snapshot.
When the actors are done, a well-behaved driver drains what is left while the worker runs only
the queued tasks; then every running dispatch must be waiting on its owner (needs attention), or
a trigger was lost, and every run a driver was told was stored must exist exactly once.

The thread interleaving is not reproducible; the choices are. A failure names its seed and the
last actions taken.
"""

import contextlib
import datetime as dt
import random
import re
import threading
import traceback
from collections import Counter, deque
from dataclasses import dataclass, field

from django.db import close_old_connections, connection, transaction
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from rest_framework.test import APIClient

from ladders import services as ladder_services
from ladders.models import Dispatch, DispatchClimber, Ladder
from loopweb.runs import services as run_services
from loopweb.runs.errors import Conflict
from loopweb.runs.models import IN_FLIGHT, ApiToken, CaseVersion, Job, ModelEntry, Role, Run
from tests.factories import CaseFactory, CaseVersionFactory, CombinationFactory, UserFactory
from tests.ladders.builders import BROKEN, PERFECT, UNLOADED, config
from tests.stress import invariants
from tests.tasks import execute

PASSABLE = {
    "checklist": {"starts": True, "jump": True, "score": True, "music": False, "pause": False},
    "toolchain": {"build": "ok", "loaded": True},
}
FAILED_BUILD = {**PERFECT, "toolchain": {"build": "failed", "loaded": False}}
RECORDS = [PERFECT, PERFECT, PASSABLE, BROKEN, UNLOADED, FAILED_BUILD]
MODEL_FAILURES = ["catastrophic", "timedOut", "harnessError", "limitExceeded", "hung"]
FAILURES = ["infrastructure", "infrastructure", "catastrophic", "hung", "harnessError"]
NEXT_STATUS = {"pending": "dispatched", "dispatched": "starting", "starting": "running"}
STEPS = ("step-1", "step-2", "step-3")
LATE = "late-1"  # a case the scenario may pin before any version of it is ingested


class ScenarioFailure(AssertionError):
    pass


@dataclass
class Plan:
    """Everything the seed decides before the threads start."""

    seed: int
    steps: int
    lease_seconds: float
    drivers: int
    workers: int
    owner_threads: int
    ladders: list[dict]
    late_version: bool
    prestarted: bool  # every ladder Run before the actors start, its first pass left queued

    @classmethod
    def draw(cls, seed: int, steps: int) -> "Plan":
        rng = random.Random(seed)
        late = rng.random() < 0.3
        pins = [*STEPS, LATE] if late else list(STEPS)
        ladders = []
        for _ in range(rng.choice([1, 1, 2])):
            rungs = [rng.choice(pins) for _ in range(rng.randint(1, 4))]
            climbers = rng.sample(range(4), rng.randint(1, 3))
            if ladders and rng.random() < 0.7:
                # Usually the second ladder climbs through cells the first one reads.
                rungs[0] = ladders[0]["rungs"][0]
                climbers = list(dict.fromkeys([ladders[0]["climbers"][0], *climbers]))
            gate = {
                "floor": rng.choice(["scuffed", "scuffed", "passable", "great", "broken"]),
                "threshold": rng.choice([{"count": 1}, {"count": 2}, {"fraction": 0.5}]),
                "unloadedCountsAsBroken": rng.random() < 0.8,
                "earlyStop": rng.random() < 0.4,
            }
            ladders.append(
                {
                    "rungs": rungs,
                    "rung_runs": [rng.choice([None, None, 1, 2, 3]) for _ in rungs],
                    "climbers": climbers,
                    "runsPerCell": rng.choice([1, 1, 2]),
                    "runsInFlightLimit": rng.choice([None, 0, 1, 2, 3, 5]),
                    "retryCount": rng.choice([0, 1, 1, 2]),
                    "outerAxis": rng.choice(["rung", "combination"]),
                    "gate": gate,
                    "second_owner": rng.random() < 0.5,
                }
            )
        return cls(
            seed=seed,
            steps=steps,
            lease_seconds=rng.choice([0.3, 0.6, 1.0, 2.0]),
            drivers=rng.randint(1, 3),
            workers=rng.choice([1, 1, 2]),
            owner_threads=rng.choice([1, 2]),
            ladders=ladders,
            late_version=late,
            prestarted=rng.random() < 0.5,
        )


@dataclass
class Stats:
    steps: int = 0
    checks: int = 0
    actions: dict = field(default_factory=dict)
    requests: int = 0
    seen: set = field(default_factory=set)
    outcome: dict = field(default_factory=dict)

    def count(self, action: str) -> None:
        self.actions[action] = self.actions.get(action, 0) + 1


class Scenario:
    def __init__(self, plan: Plan):
        self.plan = plan
        self.rng = random.Random(plan.seed)
        self.registry = invariants.Registry()
        self.violations: list[str] = []
        self.log: deque = deque(maxlen=60)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.stats = Stats()
        # Every run a driver was told was stored: run id → job id (None for a cell push).
        self.stored: dict[int, int | None] = {}

    # The deployment -----------------------------------------------------------------------

    def slug(self, name: str) -> str:
        """Scenarios share a database: each names its own cases, models and users."""
        return f"s{self.plan.seed}-{name}"

    def build(self) -> None:
        plan = self.plan
        self.owners = [
            UserFactory(username=self.slug("olive"), role=Role.OWNER),
            UserFactory(username=self.slug("oscar"), role=Role.OWNER),
        ]
        self.drivers = [
            UserFactory(username=self.slug(f"driver{i}"), role=Role.DRIVER)
            for i in range(plan.drivers)
        ]
        self.cases = [self.slug(name) for name in STEPS]
        for slug in self.cases:
            CaseVersionFactory(case=CaseFactory(slug=slug), version="1")
        if plan.late_version:
            CaseFactory(slug=self.slug(LATE))
        # Each owner made half the catalog: only they may change their entries.
        self.combinations = [
            CombinationFactory(model=self.slug(f"m{i}"), created_by=self.owners[i % 2])
            for i in range(4)
        ]
        self.model_ids = dict(
            ModelEntry.objects.filter(name__in=[c.model for c in self.combinations]).values_list(
                "name", "pk"
            )
        )
        self.ladders = []
        for i, spec in enumerate(plan.ladders):
            owner = self.owners[1 if spec["second_owner"] else 0]
            data = config(
                name=f"climb {i}",
                rungs=[
                    {
                        "case": self.slug(slug),
                        "version": "1",
                        "variant": "default",
                        "engine": None,
                        "runs": r,
                    }
                    for slug, r in zip(spec["rungs"], spec["rung_runs"], strict=True)
                ],
                combinations=[self.combinations[c].pk for c in spec["climbers"]],
                runsPerCell=spec["runsPerCell"],
                runsInFlightLimit=spec["runsInFlightLimit"],
                retryCount=spec["retryCount"],
                outerAxis=spec["outerAxis"],
                gate=spec["gate"],
            )
            self.ladders.append(ladder_services.save_ladder(owner=owner, data=data))
        self.ladder_ids = [ladder.pk for ladder in self.ladders]
        if plan.prestarted:
            for ladder in self.ladders:
                ladder_services.start_dispatch(ladder=ladder, run_pass=False)
        self.users = self.owners + self.drivers
        self.tokens = {u.pk: ApiToken.objects.issue(u)[1] for u in self.owners + self.drivers}

    def client(self, user) -> APIClient:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {self.tokens[user.pk]}")
        return client

    # Running it ----------------------------------------------------------------------------

    def run(self, settings) -> Stats:
        settings.LOOPWEB_LEASE_SECONDS = self.plan.lease_seconds
        self.started = timezone.now()
        with self.registry:
            self.build()
            actors = [DriverActor(self, d, f"driver{i}") for i, d in enumerate(self.drivers)]
            actors += [
                OwnerActor(self, ladder, f"owner{i}.{j}")
                for i, ladder in enumerate(self.ladders)
                for j in range(self.plan.owner_threads)
            ]
            actors += [WorkerActor(self, f"worker{i}") for i in range(self.plan.workers)]
            threads = [threading.Thread(target=a.run, daemon=True) for a in actors]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=120)
            if any(t.is_alive() for t in threads):
                self.fail("an actor is still running after 120 s (a deadlock or a hang)")
            self.raise_if_failed()
            self.drain()
            self.raise_if_failed()
            self.final_checks()
            self.raise_if_failed()
        self.stats.outcome = self.summary()
        return self.stats

    def summary(self) -> dict:
        """What happened, for the report: the jobs' endings, retries, expired leases, runs."""
        jobs = Job.objects.filter(owner__in=self.owners)
        statuses = Counter(jobs.values_list("status", flat=True))
        return {
            "dispatches": len(self.registry),
            "jobs": dict(statuses),
            "retries": jobs.filter(attempt__gt=1).count(),
            "leasesExpired": jobs.filter(failure_detail="lease expired").count(),
            "runs": Run.objects.filter(pushed_by__in=self.users).count(),
        }

    def note(self, actor: str, action: str, result: str = "") -> None:
        with self.lock:
            self.log.append(f"{actor}: {action} {result}".rstrip())
            self.stats.count(action)

    def fail(self, message: str) -> None:
        with self.lock:
            self.violations.append(message)
        self.stop.set()

    def check(self, where: str) -> None:
        seen = set()
        found = invariants.check(self.registry, self.ladder_ids, seen)
        with self.lock:
            self.stats.checks += 1
            self.stats.seen |= seen
        for violation in found:
            self.fail(f"after {where}: {violation}")

    def raise_if_failed(self) -> None:
        if self.violations:
            raise ScenarioFailure(
                f"seed {self.plan.seed} ({self.plan}):\n"
                + "\n".join(self.violations[:10])
                + "\n\nlast actions:\n"
                + "\n".join(self.log)
            )

    # The end: drain, then liveness and durability ------------------------------------------

    def drain(self) -> None:
        """A well-behaved driver finishes every job while the worker runs only queued tasks:
        whatever moves now moves because a trigger queued a pass."""
        driver = self.drivers[0]
        rng = random.Random(self.plan.seed * 7 + 1)
        # The owners fix the catalog and retry their climbers: a fixed climber reads running,
        # but only its Retry (a pass) launches it again.
        ModelEntry.objects.filter(pk__in=self.model_ids.values()).update(launchable=True)
        for ladder in self.ladders:
            for key in DispatchClimber.objects.filter(dispatch__ladder=ladder).values_list(
                "combination_key", flat=True
            ):
                with contextlib.suppress(Conflict):
                    ladder_services.retry_climber(ladder=ladder, combination_key=key)
        for _ in range(80):
            run_services.expire_leases(now=timezone.now() + dt.timedelta(hours=1))
            ran = run_ready_tasks(self)
            jobs = run_services.claim_jobs(driver=driver, limit=1000)
            for job in jobs:
                if rng.random() < 0.1:
                    run_services.fail_job(job_id=job.pk, driver=driver, failure="infrastructure")
                    continue
                run, _ = run_services.push_run(
                    pushed_by=driver,
                    job_id=job.pk,
                    outcome="completed",
                    record=rng.choice(RECORDS),
                    finished_at=timezone.now(),
                )
                self.stored[run.pk] = job.pk
            self.check("a drain round")
            self.raise_if_failed()
            busy = Job.objects.filter(owner__in=self.owners, status__in=IN_FLIGHT).exists()
            if not ran and not jobs and not busy:
                return
        self.fail("the drain did not settle in 80 rounds")

    def final_checks(self) -> None:
        failed = DBTaskResult.objects.filter(
            status=TaskResultStatus.FAILED, finished_at__gte=self.started
        )
        for task in failed[:3]:
            self.fail(f"task {task.task_path} failed:\n{task.traceback}")
        running = Dispatch.objects.filter(status="running", ladder_id__in=self.ladder_ids)
        for dispatch in running.select_related("ladder"):
            if dispatch.snapshot["runsInFlightLimit"] == 0:
                continue  # launches nothing: it climbs only as far as existing runs take it
            status = invariants_status(dispatch.ladder)
            if status != "needsAttention":
                report = ladder_services.run_launch_pass(ladder_id=dispatch.ladder_id)
                self.fail(
                    f"ladder {dispatch.ladder_id} reads {status} with nothing left to run: a "
                    f"trigger was lost (a pass now reports {report})"
                )
        runs = dict(Run.objects.filter(pushed_by__in=self.users).values_list("pk", "job_id"))
        for run_id, job_id in self.stored.items():
            if run_id not in runs:
                self.fail(f"run {run_id} was stored (2xx) but is gone")
            elif job_id is not None and runs[run_id] != job_id:
                self.fail(f"run {run_id} belongs to job {runs[run_id]}, pushed for {job_id}")
        unknown = set(runs) - set(self.stored)
        if unknown:
            self.fail(f"runs no push was answered with: {sorted(unknown)[:10]}")


def invariants_status(ladder: Ladder) -> str:
    from ladders.selectors import ladder_progress

    return ladder_progress(Ladder.objects.get(pk=ladder.pk))["ladder"]["status"]


def run_ready_tasks(scenario: Scenario, limit: int = 1000) -> int:
    """Run queued tasks as ``db_worker`` does: claim one under SKIP LOCKED, run it, record it."""
    ran = 0
    while ran < limit:
        with transaction.atomic():
            result = DBTaskResult.objects.ready().select_for_update(skip_locked=True).first()
            if result is None:
                return ran
            result.claim("stress")
        try:
            execute(result)
        except Exception:  # noqa: BLE001 - recorded by execute, reported as a violation
            scenario.fail(
                f"task {result.task_path}{result.task_result.args} raised:\n"
                f"{traceback.format_exc()}"
            )
            return ran
        ran += 1
    return ran


class Actor:
    """A thread's loop: ``steps`` actions, each followed by a check of every invariant."""

    weights: dict[str, int] = {}

    def __init__(self, scenario: Scenario, name: str):
        self.scenario = scenario
        self.name = name
        self.rng = random.Random(f"{scenario.plan.seed}/{name}")

    def run(self) -> None:
        try:
            for step in range(self.scenario.plan.steps):
                if self.scenario.stop.is_set():
                    return
                names, weights = zip(*self.weights.items(), strict=True)
                action = self.rng.choices(names, weights)[0]
                result = getattr(self, action)()
                self.scenario.note(self.name, action, result or "")
                with self.scenario.lock:
                    self.scenario.stats.steps += 1
                self.scenario.check(f"{self.name} step {step} ({action})")
        except Exception:
            self.scenario.fail(f"{self.name} raised:\n{traceback.format_exc()}")
        finally:
            close_old_connections()
            connection.close()

    def expect(self, response, *allowed: int) -> dict | list | None:
        with self.scenario.lock:
            self.scenario.stats.requests += 1
        if response.status_code not in allowed:
            body = response.content[:500]
            self.scenario.fail(
                f"{self.name}: {response.request['REQUEST_METHOD']} {response.request['PATH_INFO']}"
                f" answered {response.status_code} (expected {allowed}): {body!r}"
            )
            return None
        return response.json() if response.content else None


class DriverActor(Actor):
    weights = {
        "claim": 5,
        "report": 5,
        "push": 6,
        "push_model_failure": 2,
        "fail": 2,
        "push_twice": 1,
        "repush": 1,
        "push_for_cell": 1,
        "die": 1,
        "zombie_push": 1,
    }

    def __init__(self, scenario, user, name):
        super().__init__(scenario, name)
        self.user = user
        self.api = scenario.client(user)
        self.held: dict[int, str] = {}  # job id → the status we last reported
        self.abandoned: list[int] = []
        self.pushed: list[tuple[int, int, str]] = []  # (job, run, outcome)

    def _job(self) -> int | None:
        return self.rng.choice(sorted(self.held)) if self.held else None

    def claim(self):
        jobs = self.expect(
            self.api.post("/api/driver/claim", {"max": self.rng.randint(1, 3)}, format="json"),
            200,
        )
        for job in jobs or []:
            self.held[job["id"]] = "pending"
        return f"{[j['id'] for j in jobs or []]}"

    def report(self):
        job = self._job()
        if job is None:
            return self.claim()
        status = NEXT_STATUS.get(self.held[job], self.held[job])  # running again: a heartbeat
        body = self.expect(
            self.api.post(f"/api/driver/jobs/{job}/status", {"status": status}, format="json"),
            200,
            409,
        )
        if body is None or body.get("cancel"):
            self.held.pop(job)  # cancelled, or ended under us (its lease expired): stop it
            return f"{job} dropped"
        self.held[job] = status
        return f"{job} {status}"

    def _push(self, job: int, outcome: str, record: dict):
        response = self.api.post(
            "/api/runs/",
            {
                "job": job,
                "outcome": outcome,
                "record": record,
                "finishedAt": timezone.now().isoformat(),
            },
            format="json",
        )
        body = self.expect(response, 200, 201, 409)
        if body is not None and response.status_code in (200, 201):
            with self.scenario.lock:
                self.scenario.stored[body["id"]] = job
            self.pushed.append((job, body["id"], outcome))
        return response.status_code

    def push(self):
        job = self._job()
        if job is None:
            return self.claim()
        self.held.pop(job)
        return f"{job} → {self._push(job, 'completed', self.rng.choice(RECORDS))}"

    def push_model_failure(self):
        job = self._job()
        if job is None:
            return self.claim()
        self.held.pop(job)
        return f"{job} → {self._push(job, self.rng.choice(MODEL_FAILURES), {})}"

    def fail(self):
        job = self._job()
        if job is None:
            return self.claim()
        self.held.pop(job)
        failure = self.rng.choice(FAILURES)
        response = self.api.post(
            f"/api/driver/jobs/{job}/fail", {"failure": failure}, format="json"
        )
        self.expect(response, 200, 409)
        return f"{job} {failure} → {response.status_code}"

    def push_twice(self):
        """The answer to a push was lost: the driver sends the same push again."""
        if not self.pushed:
            return self.push()
        job, run, outcome = self.rng.choice(self.pushed)
        response = self.api.post(
            "/api/runs/",
            {
                "job": job,
                "outcome": outcome,
                "record": PERFECT if outcome == "completed" else {},
                "finishedAt": timezone.now().isoformat(),
            },
            format="json",
        )
        body = self.expect(response, 200)
        if body is not None and body["id"] != run:
            self.scenario.fail(f"{self.name}: a second push for job {job} made run {body['id']}")
        return f"{job} → {response.status_code}"

    def repush(self):
        """PUT the run again with another record (its outcome stands, as a correction)."""
        if not self.pushed:
            return self.push()
        job, run, outcome = self.rng.choice(self.pushed)
        body = {
            "outcome": outcome,
            "record": self.rng.choice(RECORDS) if outcome == "completed" else {},
            "finishedAt": timezone.now().isoformat(),
        }
        self.expect(self.api.put(f"/api/runs/{run}/", body, format="json"), 200)
        return f"run {run}"

    def push_for_cell(self):
        """A run launched outside Loopweb, pushed for its cell."""
        slug = self.rng.choice(self.scenario.cases)
        combination = self.rng.choice(self.scenario.combinations)
        response = self.api.post(
            "/api/runs/",
            {
                "case": slug,
                "version": "1",
                "variant": "default",
                "engine": None,
                "combination": combination.pk,
                "outcome": self.rng.choice(["completed", "completed", "hung"]),
                "record": self.rng.choice(RECORDS),
                "finishedAt": timezone.now().isoformat(),
            },
            format="json",
        )
        body = self.expect(response, 201)
        if body is not None:
            with self.scenario.lock:
                self.scenario.stored[body["id"]] = None
        return f"{slug} {combination.key}"

    def die(self):
        """The driver's host vanishes: its jobs are never reported on again."""
        self.abandoned.extend(self.held)
        gone = sorted(self.held)
        self.held.clear()
        return f"{gone}"

    def zombie_push(self):
        """A vanished driver comes back and pushes a job it abandoned: stored only while its
        lease still holds, otherwise refused."""
        if not self.abandoned:
            return self.claim()
        job = self.abandoned.pop(self.rng.randrange(len(self.abandoned)))
        return f"{job} → {self._push(job, 'completed', PERFECT)}"


class OwnerActor(Actor):
    weights = {
        "press_run": 4,
        "stop": 1,
        "stop_cancel_running": 1,
        "retry": 2,
        "edit": 2,
        "progress": 3,
        "launch_by_hand": 1,
        "cancel_by_hand": 1,
        "ingest": 1,
        "toggle_launchable": 1,
    }

    def __init__(self, scenario, ladder, name):
        super().__init__(scenario, name)
        self.ladder = ladder
        self.owner = ladder.owner
        self.api = scenario.client(self.owner)
        self.url = f"/api/ladders/{ladder.pk}"
        self.hand_jobs: list[int] = []

    def press_run(self):
        response = self.api.post(f"{self.url}/run")
        self.expect(response, 200, 409)
        return f"→ {response.status_code}"

    def stop(self):
        response = self.api.post(f"{self.url}/stop", {"cancelRunning": False}, format="json")
        body = self.expect(response, 200, 409)
        return f"→ {response.status_code} {body}"

    def stop_cancel_running(self):
        response = self.api.post(f"{self.url}/stop", {"cancelRunning": True}, format="json")
        body = self.expect(response, 200, 409)
        return f"→ {response.status_code} {body}"

    def retry(self):
        progress = self.expect(self.api.get(f"{self.url}/progress"), 200)
        if not progress or not progress["climbers"]:
            return "no climber"
        blocked = [c["key"] for c in progress["climbers"] if c["status"] == "blocked"]
        key = self.rng.choice(blocked or [c["key"] for c in progress["climbers"]])
        response = self.api.post(f"{self.url}/climbers/retry", {"climber": key}, format="json")
        self.expect(response, 200, 409)
        return f"{key} → {response.status_code}"

    def edit(self):
        current = self.expect(self.api.get(f"{self.url}/"), 200)
        if current is None:
            return "unreadable"
        rungs = current["rungs"]
        change = self.rng.choice(["targets", "limit", "gate", "order", "rungs"])
        if change == "targets":
            for r in rungs:
                r["runs"] = self.rng.choice([None, 1, 2, 3])
            current["runsPerCell"] = self.rng.choice([1, 2])
        elif change == "limit":
            current["runsInFlightLimit"] = self.rng.choice([None, 0, 1, 3, 5])
            current["retryCount"] = self.rng.choice([0, 1, 2])
        elif change == "gate":
            current["gate"]["earlyStop"] = not current["gate"]["earlyStop"]
            current["gate"]["floor"] = self.rng.choice(["broken", "scuffed", "great"])
        elif change == "order":
            self.rng.shuffle(rungs)
        elif len(rungs) > 1 and self.rng.random() < 0.5:
            rungs.pop(self.rng.randrange(len(rungs)))
        else:
            slug = self.rng.choice(self.scenario.cases)
            rungs.append({"case": slug, "version": "1", "variant": "default", "engine": None})
        current["rungs"] = [
            {
                k: v
                for k, v in r.items()
                if k in ("id", "case", "version", "variant", "engine", "runs")
            }
            for r in rungs
        ]
        response = self.api.put(f"{self.url}/", current, format="json")
        if response.status_code == 400 and all(
            re.fullmatch(r"rungs\.\d+\.id", name) for name in response.json()["errors"]
        ):
            # Another owner thread removed a rung this edit read: the edit is refused whole.
            return f"{change} refused: {response.json()['detail']}"
        self.expect(response, 200)
        return change

    def progress(self):
        body = self.expect(self.api.get(f"{self.url}/progress"), 200)
        if body is not None:
            for problem in invariants.progress_problems(body):
                self.scenario.fail(f"{self.name}: progress over the API: {problem}")
            return body["ladder"]["status"]
        return None

    def launch_by_hand(self):
        slug = self.rng.choice(self.scenario.cases)
        combination = self.rng.choice(self.scenario.combinations)
        body = self.expect(
            self.api.post(
                "/api/jobs/",
                {
                    "case": slug,
                    "version": "1",
                    "variant": "default",
                    "engine": None,
                    "combination": combination.pk,
                    "retryCount": self.rng.choice([0, 1]),
                },
                format="json",
            ),
            201,
            400,  # its model was made unlaunchable
        )
        if body is not None and "id" in body:
            self.hand_jobs.append(body["id"])
        return f"{slug} {combination.key}"

    def cancel_by_hand(self):
        if not self.hand_jobs:
            return self.launch_by_hand()
        job = self.hand_jobs.pop(self.rng.randrange(len(self.hand_jobs)))
        response = self.api.post(f"/api/jobs/{job}/cancel")
        self.expect(response, 200, 409)
        return f"{job} → {response.status_code}"

    def toggle_launchable(self):
        """Break or fix a climber's catalog entry: its climber reads unlaunchable, then a Retry
        (or the next pass) launches it again. Only the entry's creator may: the other owner is
        refused."""
        combination = self.rng.choice(self.scenario.combinations)
        url = f"/api/models/{self.scenario.model_ids[combination.model]}/"
        entry = self.expect(self.api.get(url), 200)
        if entry is None:
            return "unreadable"
        launchable = not entry["launchable"]
        mine = combination.created_by_id == self.owner.pk
        response = self.api.patch(url, {"launchable": launchable}, format="json")
        self.expect(response, 200 if mine else 403)
        return f"{combination.model} launchable={launchable} → {response.status_code}"

    def ingest(self):
        if not self.scenario.plan.late_version:
            return self.progress()
        response = self.api.post(
            f"/api/cases/{self.scenario.slug(LATE)}/versions/",
            {
                "version": "1",
                "variants": ["default"],
                "checklist": [
                    {"id": "starts", "text": "The game starts", "critical": True},
                    {"id": "jump", "text": "The player can jump", "critical": True},
                ],
            },
            format="json",
        )
        self.expect(response, 201, 400, 403)
        if (
            response.status_code == 403
            and CaseVersion.objects.filter(
                case__slug=self.scenario.slug(LATE), version="1", created_by=self.owner
            ).exists()
        ):
            self.scenario.fail(f"{self.name}: refused to re-ingest its own version")
        return f"→ {response.status_code}"


class WorkerActor(Actor):
    weights = {"tasks": 6, "launch_pass": 2, "race_passes": 2, "expire_leases": 2, "start_up": 1}

    def tasks(self):
        return f"ran {run_ready_tasks(self.scenario, limit=self.rng.randint(1, 6))}"

    def launch_pass(self):
        ladder = self.rng.choice(self.scenario.ladders)
        report = ladder_services.run_launch_pass(ladder_id=ladder.pk)
        return f"ladder {ladder.pk}: {report}"

    def race_passes(self):
        """A pass of every ladder at the same moment, as several workers would run them."""
        start = threading.Barrier(len(self.scenario.ladders))
        reports = {}

        def launch(ladder):
            try:
                start.wait(10)
                reports[ladder.pk] = ladder_services.run_launch_pass(ladder_id=ladder.pk)
            except Exception:
                self.scenario.fail(f"{self.name}: a raced pass raised:\n{traceback.format_exc()}")
            finally:
                connection.close()

        threads = [threading.Thread(target=launch, args=(x,)) for x in self.scenario.ladders]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        return f"{reports}"

    def expire_leases(self):
        return f"expired {run_services.expire_leases()}"

    def start_up(self):
        return f"passes for {ladder_services.launch_passes_for_running()}"
