"""SPEC §5, "Read-your-writes ... on every web process" and "A final standing is frozen", held
under any interleaving of the writes a board reads: a stateful property test on PostgreSQL with
two web processes, each keeping its own shared boards (``ladders.shared_progress``).

Each example runs a ladder of two rungs (the second asks two runs) climbed by three climbers (two
harness ones and a gg one, its configuration resolvable at Run or not), then any sequence of:

- a driver's claim, status report (dispatched, starting, running) and failure of a job; a push,
  of any outcome; a re-push; runs pushed for cells without a job (launched elsewhere); a round
  of the fleet finishing every job in flight; a late signal matching runs by commit;
- the owner's hand launch and cancel of a job; a review by the owner or the shared reviewer;
  Run, Stop (or Stop and cancel running), Retry; an edit of the ladder (name, runs per cell,
  gate, climbers and their order, a third rung, the rungs' order);
- catalog changes: a model entry made unlaunchable or launchable again (PATCH), the gg
  configuration broken or fixed (PUT /api/gg-configurations/{id}/), a newer case version
  ingested (a rung goes stale);
- the worker running the queued launch passes;
- writes beside the services: the admin's ``QuerySet.update`` of a run, a job, a review or a
  model entry, and a ``psql`` session's UPDATE of a run.

Writes with an API go through either process (drawn); the others are made here.

After every step the progress read through each process equals the progress computed afresh in
this process (``selectors.ladder_progress``, i.e. ``progress.compute``: no shared board, no
change marks, no version). Each process is read as a client polls it, in four ways taking turns
from step to step (in an order drawn per example): a plain GET; ``If-None-Match`` with the
version that process last answered (a 304 keeps the board held); ``?since=`` that version (the
delta's climbers replace the held ones by key); or both. The owner and the reviewer the ladder
is shared with read in turn. The boards that Run and Retry answer are checked too.

Two fields are set aside when comparing, and only these:

- ``version``: it names the database snapshot the board was read in (with the jobs under way and
  a digest); the computation afresh has none, and the same data read in two snapshots is named
  differently. What it must guarantee is checked through its use: a 304 or a delta given for it
  must still leave the board held equal to the fresh one.
- ``since``: a delta echoes the version it was asked about (checked equal), a whole board holds
  null there, and the computation afresh has no such field.

Everything else must be equal, timestamps included: ``startedAt`` and ``endedAt`` are the
dispatch row's, read alike by both sides; nothing on the board is computed from the clock. (No
provider budget is enabled here, so no slot reads ``waitingFor``, which a whole read adds outside
the board and its version because budgets fill with other ladders' jobs.)

The examples are drawn from a fixed seed (``derandomize``), so CI runs the same ones every time;
``LOOPWEB_INTERLEAVING_EXAMPLES`` asks for more. A failure prints the steps that make it, shrunk,
and the fields that differ.
"""

import datetime as dt
import itertools
import json
import os
from contextlib import suppress

import pytest
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from rest_framework.utils.encoders import JSONEncoder

from ladders import selectors, services
from ladders.models import Ladder
from loopweb.runs.errors import Conflict
from loopweb.runs.models import ApiToken, Job, ModelEntry, Review, Run
from tests.factories import (
    CHECKLIST,
    CaseFactory,
    CaseVersionFactory,
    CombinationFactory,
    GGConfigurationFactory,
    gg_combination,
)
from tests.ladders.builders import BROKEN, PERFECT, UNLOADED, config, rung
from tests.ladders.servers import web_processes
from tests.tasks import execute, run_queued_tasks

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.django_db(transaction=True),
    pytest.mark.xdist_group("live"),
]

IN_FLIGHT = ["queued", "pending", "dispatched", "starting", "running"]
RESULTS = {
    "perfect": ("completed", PERFECT),
    "broken": ("completed", BROKEN),
    "unloaded": ("completed", UNLOADED),
    "catastrophic": ("catastrophic", {}),  # retried while retries remain
    "timedOut": ("timedOut", {}),  # the model's failure: read as broken, never retried
    "infrastructure": ("infrastructure", {}),  # never counted; retried
    "canceled": ("canceled", {}),
}
#: How a client reads a process: with nothing, with the version it last answered as
#: If-None-Match, as ?since=, or both (as the console's board polls).
READS = ["plain", "if-none-match", "since", "both"]
#: Fields a board read through a process may hold differently from one computed afresh (the
#: module's docstring says why).
SET_ASIDE = ("version", "since")

_examples = itertools.count(1)


class World:
    """What every example shares: the two processes and the standing users' tokens."""

    def __init__(self, servers, owner, reviewer, outsider, driver):
        self.servers = servers
        self.owner, self.reviewer, self.outsider, self.driver = owner, reviewer, outsider, driver
        self.tokens = {
            user.username: ApiToken.objects.issue(user)[1]
            for user in (owner, reviewer, outsider, driver)
        }

    def token(self, user) -> str:
        return self.tokens[user.username]


def fresh(ladder_id: int) -> dict:
    """The ladder's progress computed afresh, as JSON (DRF's encoding, as the API answers)."""
    body = selectors.ladder_progress(Ladder.objects.get(pk=ladder_id))
    return json.loads(json.dumps(body, cls=JSONEncoder))


def set_aside(board: dict) -> dict:
    return {k: v for k, v in board.items() if k not in SET_ASIDE}


def differences(a, b, path="") -> list[str]:
    """Where two JSON values differ, as ``.path[index]: ours != theirs`` lines."""
    if isinstance(a, dict) and isinstance(b, dict):
        found = []
        for key in sorted(a.keys() | b.keys()):
            if key not in a or key not in b:
                found.append(
                    f"{path}.{key}: {a.get(key, '<absent>')!r} != {b.get(key, '<absent>')!r}"
                )
            else:
                found += differences(a[key], b[key], f"{path}.{key}")
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def applied(held: dict, delta: dict) -> dict:
    """A ``?since=`` answer applied to the board held: its climbers replace those of the same
    key, everything else is the answer's."""
    changed = {c["key"]: c for c in delta["climbers"]}
    climbers = [changed.pop(c["key"], c) for c in held["climbers"]]
    assert not changed, f"the delta names climbers the held board lacks: {sorted(changed)}"
    return {**delta, "climbers": climbers}


class Interleavings(RuleBasedStateMachine):
    """Hypothesis draws the rules it lists first more often, and lists them by their number of
    arguments, then by name. So the rules that need a state to act on (a job in flight, a run, a
    queued pass, a blocked climber) are drawn only in it; runs pushed to any cell without a job,
    the gg configuration's PUT and Run come first (one argument each), the worker just after them (a
    worker that ran every pass at once would close the moments a board must see a change made
    before the pass), and a late signal, which changes no board, late."""

    world: World  # set by the test

    # The ladder ---------------------------------------------------------------------------

    @initialize(
        early_stop=st.booleans(),
        retry_count=st.sampled_from([1, 0]),
        gg_resolvable=st.booleans(),
        reads=st.permutations(READS),
    )
    def a_running_ladder(self, early_stop, retry_count, gg_resolvable, reads):
        world = self.world
        owner = world.owner
        n = next(_examples)
        self.prefix = f"e{n}"
        self.reads, self.step = reads, 0
        self.clock = timezone.now() - dt.timedelta(days=1)
        self.versions = [
            CaseVersionFactory(
                case=CaseFactory(slug=f"{self.prefix}-step-{i}", created_by=owner),
                version="1",
                ingested_at=self.clock - dt.timedelta(hours=1),
                created_by=owner,
            )
            for i in (1, 2, 3)
        ]
        self.slugs = [v.case.slug for v in self.versions]
        self.ingested = 1
        harness = [CombinationFactory(model=f"{self.prefix}-{m}", created_by=owner) for m in "ab"]
        self.gg = GGConfigurationFactory(
            name=f"{self.prefix}-duo",
            roles=["planner"] if gg_resolvable else ["planner", "coder"],
            created_by=owner,
        )
        duo = gg_combination(self.gg, {"planner": f"{self.prefix}-thinker"}, created_by=owner)
        self.combos = [*harness, duo]
        self.models = [f"{self.prefix}-a", f"{self.prefix}-b", f"{self.prefix}-thinker"]
        data = config(
            name="climb",
            rungs=[rung(self.versions[0]), rung(self.versions[1], runs=2)],
            combinations=[c.pk for c in self.combos],
            gate={"earlyStop": early_stop},
            retryCount=retry_count,
            reviewers=[world.reviewer],
        )
        self.ladder_id = services.save_ladder(owner=owner, data=data).pk
        self.runs: list[int] = []
        self.finished: dict[int, str] = {}
        self.held: list[tuple[dict, str] | None] = [None, None]  # per process: board, version
        self.answered: list[tuple[int, object]] = []  # boards that writes answered, to check
        self.in_flight = self.running = self.passes_queued = False
        self.blocked: list[str] = []
        answer = self.send(0, world.owner, f"/api/ladders/{self.ladder_id}/run", {})
        assert answer.status == 200, answer.content
        self.answered.append((0, answer))

    def teardown(self):
        # Nothing of this example launches anything in the next one.
        ladder = Ladder.objects.filter(pk=getattr(self, "ladder_id", None)).first()
        if ladder is not None:
            with suppress(Conflict):  # it had ended already
                services.stop_dispatch(ladder=ladder, cancel_running=True)
            Job.objects.filter(case__in=self.slugs, status__in=IN_FLIGHT).update(
                status="canceled", finished_at=timezone.now()
            )

    # Helpers ----------------------------------------------------------------------------------

    def send(self, via: int, user, path: str, body=None, method=None):
        answer = self.world.servers[via].request(self.world.token(user), path, body, method)
        assert answer.status < 500, (path, answer.status, answer.content[:2000])
        return answer

    def tick(self) -> str:
        self.clock += dt.timedelta(seconds=1)
        return self.clock.isoformat()

    def jobs(self, statuses=IN_FLIGHT) -> list[Job]:
        return list(Job.objects.filter(case__in=self.slugs, status__in=statuses).order_by("id"))

    @staticmethod
    def pick(items, index):
        return items[index % len(items)] if items else None

    def claim(self, via: int, job: Job) -> None:
        if job.status == "queued":
            self.send(via, self.world.driver, "/api/driver/claim", {"max": 100})

    def run_body(self, result: str, commit: int) -> dict:
        outcome, record = RESULTS[result]
        return {
            "outcome": outcome,
            "record": record,
            "finishedAt": self.tick(),
            "commit": f"{self.prefix}-c{commit}",
        }

    def pushed(self, answer) -> None:
        if answer.status in (200, 201):
            run = answer.json()
            if run["id"] not in self.finished:
                self.runs.append(run["id"])
            self.finished[run["id"]] = run["finishedAt"]

    # A driver's writes ------------------------------------------------------------------------

    @precondition(lambda self: self.in_flight)
    @rule(
        via=st.integers(0, 1),
        job=st.integers(0, 9),
        report=st.sampled_from(
            ["claimed", "dispatched", "starting", "running", "infrastructure", "harnessError"]
        ),
    )
    def a_driver_reports_on_a_job(self, via, job, report):
        """A claim, a status, or an end with no run (a failure)."""
        found = self.pick(self.jobs(), job)
        if found is None:
            return
        self.claim(via, found)
        driver, path = self.world.driver, f"/api/driver/jobs/{found.pk}"
        if report in ("dispatched", "starting", "running"):
            self.send(via, driver, f"{path}/status", {"status": report})
        elif report != "claimed":
            self.send(via, driver, f"{path}/fail", {"failure": report})

    @precondition(lambda self: self.in_flight)
    @rule(
        via=st.integers(0, 1),
        job=st.integers(0, 9),
        result=st.sampled_from(list(RESULTS)),
        commit=st.integers(0, 2),
        then_the_worker=st.booleans(),
    )
    def a_driver_pushes_a_run(self, via, job, result, commit, then_the_worker):
        found = self.pick(self.jobs(), job)
        if found is not None:
            self.claim(via, found)
            body = {"job": found.pk, **self.run_body(result, commit)}
            self.pushed(self.send(via, self.world.driver, "/api/runs/", body))
        if then_the_worker:
            run_queued_tasks()

    @precondition(lambda self: self.runs)
    @rule(
        via=st.integers(0, 1),
        run=st.integers(0, 19),
        result=st.sampled_from(list(RESULTS)),
        commit=st.integers(0, 2),
    )
    def a_driver_re_pushes_a_run(self, via, run, result, commit):
        found = self.pick(self.runs, run)
        if found is not None:
            body = {**self.run_body(result, commit), "finishedAt": self.finished[found]}
            self.pushed(self.send(via, self.world.driver, f"/api/runs/{found}/", body, "PUT"))

    @rule(
        runs=st.tuples(
            st.integers(0, 1),  # through which process
            st.integers(0, 2),  # the rung (a third one once an edit adds it)
            st.sampled_from(["every climber", 0, 1, 2]),
            st.sampled_from(list(RESULTS)),
        ),
    )
    def a_fleet_elsewhere_pushes_runs(self, runs):
        """Runs of a rung's cells launched outside Loopweb (pushed with their cell, no job): of
        every climber's cell, as a coverage plan's fleet would, or of one."""
        via, step, climber, result = runs
        version = self.versions[step]
        combos = self.combos if climber == "every climber" else [self.combos[climber]]
        for combination in combos:
            body = {
                "case": version.case.slug,
                "version": version.version,
                "variant": "default",
                "engine": None,
                "combination": combination.pk,
                **self.run_body(result, step),
            }
            self.pushed(self.send(via, self.world.driver, "/api/runs/", body))

    @precondition(lambda self: self.in_flight)
    @rule(
        via=st.integers(0, 1),
        results=st.lists(st.sampled_from(list(RESULTS)), min_size=1, max_size=4),
    )
    def a_driver_finishes_every_job(self, via, results):
        """A round of the fleet: every job in flight claimed and pushed, results in turn, then
        the worker's passes."""
        jobs = self.jobs()
        if jobs:
            self.send(via, self.world.driver, "/api/driver/claim", {"max": 100})
        for i, (job, result) in enumerate(zip(jobs, itertools.cycle(results))):
            body = {"job": job.pk, **self.run_body(result, i % 3)}
            self.pushed(self.send(via, self.world.driver, "/api/runs/", body))
        run_queued_tasks()

    @rule(via=st.integers(0, 1), commit=st.integers(0, 2))
    def the_ci_posts_a_late_signal(self, via, commit):
        event = {
            "commit": f"{self.prefix}-c{commit}",
            "name": "revert",
            "value": "PR-7",
            "observed_at": self.tick(),
            "tier": "verified",
        }
        self.send(via, self.world.driver, "/api/signals/events", event)

    @precondition(lambda self: self.passes_queued)
    @rule(tasks=st.integers(1, 3))
    def the_worker_runs_queued_tasks(self, tasks):
        """The oldest queued tasks (launch passes), as many as the worker gets to."""
        for _ in range(tasks):
            task = DBTaskResult.objects.ready().order_by("enqueued_at").first()
            if task is None:
                break
            task.claim("tests")
            execute(task)

    # An owner's and a reviewer's writes -------------------------------------------------------

    @rule(via=st.integers(0, 1), step=st.integers(0, 2), climber=st.integers(0, 2))
    def the_owner_launches_a_run_by_hand(self, via, step, climber):
        version = self.versions[step]
        body = {
            "case": version.case.slug,
            "version": version.version,
            "variant": "default",
            "engine": None,
            "combination": self.combos[climber].pk,
            "retryCount": 0,
        }
        self.send(via, self.world.owner, "/api/jobs/", body)

    @precondition(lambda self: self.in_flight)
    @rule(via=st.integers(0, 1), job=st.integers(0, 9))
    def the_owner_cancels_a_job(self, via, job):
        found = self.pick(self.jobs(), job)
        if found is not None:
            self.send(via, self.world.owner, f"/api/jobs/{found.pk}/cancel", {})

    @precondition(lambda self: self.runs)
    @rule(via=st.integers(0, 1), run=st.integers(0, 19), by=st.sampled_from(["owner", "reviewer"]))
    def a_run_is_reviewed(self, via, run, by):
        found = self.pick(self.runs, run)
        if found is not None:
            user = getattr(self.world, by)
            review = {"aestheticRating": 3, "writeup": "seen"}
            self.send(via, user, f"/api/runs/{found}/reviews", review)

    @precondition(lambda self: not self.running)
    @rule(via=st.integers(0, 1))
    def the_owner_runs_the_ladder(self, via):
        answer = self.send(via, self.world.owner, f"/api/ladders/{self.ladder_id}/run", {})
        if answer.status == 200:
            self.answered.append((via, answer))

    @precondition(lambda self: self.running)
    @rule(via=st.integers(0, 1), cancel_running=st.booleans())
    def the_owner_stops_the_dispatch(self, via, cancel_running):
        body = {"cancelRunning": cancel_running}
        self.send(via, self.world.owner, f"/api/ladders/{self.ladder_id}/stop", body)

    @precondition(lambda self: self.blocked)
    @rule(via=st.integers(0, 1), climber=st.integers(0, 2))
    def the_owner_retries_a_blocked_climber(self, via, climber):
        body = {"climber": self.pick(self.blocked, climber)}
        path = f"/api/ladders/{self.ladder_id}/climbers/retry"
        answer = self.send(via, self.world.owner, path, body)
        if answer.status == 200:
            self.answered.append((via, answer))

    @rule(
        via=st.integers(0, 1),
        edit=st.sampled_from(
            ["rename", "runs per cell", "floor", "early stop", "climber order", "drop a climber",
             "a third rung", "rung order"]
        ),
    )  # fmt: skip
    def the_owner_edits_the_ladder(self, via, edit):
        owner, path = self.world.owner, f"/api/ladders/{self.ladder_id}/"
        current = self.send(via, owner, path).json()
        data = {k: current[k] for k in config() if k in current}
        fields = ("id", "case", "version", "variant", "engine", "runs")
        rungs = data["rungs"] = [{k: r[k] for k in fields} for r in current["rungs"]]
        if edit == "rung order":
            order = [r["id"] for r in reversed(rungs)]
            self.send(via, owner, f"{path}rungs/order", {"order": order})
            return
        if edit == "rename":
            data["name"] = "climb again" if current["name"] == "climb" else "climb"
        elif edit == "runs per cell":
            data["runsPerCell"] = 2 if current["runsPerCell"] == 1 else 1
        elif edit == "floor":
            floor = "great" if current["gate"]["floor"] == "scuffed" else "scuffed"
            data["gate"] = {**current["gate"], "floor": floor}
        elif edit == "early stop":
            data["gate"] = {**current["gate"], "earlyStop": not current["gate"]["earlyStop"]}
        elif edit == "climber order":
            data["combinations"] = list(reversed(current["combinations"]))
        elif edit == "drop a climber":  # the gg one, or take it back
            everyone = [c.pk for c in self.combos]
            data["combinations"] = everyone if len(current["combinations"]) < 3 else everyone[:2]
        elif edit == "a third rung":  # added, or dropped again
            data["rungs"] = rungs[:2] if len(rungs) == 3 else [*rungs, rung(self.versions[2])]
        self.send(via, owner, path, data, "PUT")

    # The catalog ------------------------------------------------------------------------------

    @rule(via=st.integers(0, 1), model=st.integers(0, 2))
    def a_models_catalog_entry_is_patched(self, via, model):
        """Made unlaunchable, or launchable again."""
        entry = ModelEntry.objects.get(name=self.models[model])
        body = {"launchable": not entry.launchable}
        self.send(via, self.world.owner, f"/api/models/{entry.pk}/", body, "PATCH")

    @rule(via=st.integers(0, 1))
    def the_gg_configuration_is_put(self, via):
        """Broken (a role nothing binds: unresolvable), or fixed again (its one role bound)."""
        self.gg.refresh_from_db()
        roles = ["planner"] if len(self.gg.roles) > 1 else ["planner", "coder"]
        body = {"name": self.gg.name, "roles": roles}
        self.send(via, self.world.owner, f"/api/gg-configurations/{self.gg.pk}/", body, "PUT")

    @rule(via=st.integers(0, 1), step=st.integers(0, 2))
    def the_catalog_ingests_a_newer_version_of_a_rung(self, via, step):
        self.ingested += 1
        body = {
            "version": str(self.ingested),
            "legacy": False,
            "variants": ["default"],
            "engines": [],
            "checklist": CHECKLIST,
            "ingestedAt": self.tick(),
        }
        self.send(via, self.world.owner, f"/api/cases/{self.slugs[step]}/versions/", body)

    # Writes beside the services: the admin's ORM and psql ------------------------------------

    @rule(
        change=st.sampled_from(
            ["run rated broken", "run rated great", "run unrated", "job canceled", "job failed",
             "job running", "review handed to an outsider", "model unlaunchable",
             "model launchable"]
        ),
        pick=st.integers(0, 19),
    )  # fmt: skip
    def the_admin_updates_a_row(self, change, pick):
        """``QuerySet.update``, as the admin's bulk actions and a data migration write."""
        what, _, how = change.partition(" ")
        if what == "run":
            found = self.pick(self.runs, pick)
            rating = {"rated broken": "broken", "rated great": "great", "unrated": None}[how]
            rows = Run.objects.filter(pk=found)
            rows.update(validator_rating=rating)
        elif what == "job":
            found = self.pick(self.jobs(), pick)
            status = how
            ended = {"finished_at": timezone.now()} if status != "running" else {}
            failure = {"failure": "infrastructure"} if status == "failed" else {}
            Job.objects.filter(pk=found.pk if found else None).update(
                status=status, **ended, **failure
            )
        elif what == "review":
            reviews = list(Review.objects.filter(run_id__in=self.runs).order_by("id"))
            found = self.pick(reviews, pick)
            rows = Review.objects.filter(pk=found.pk if found else None)
            rows.update(reviewer=self.world.outsider)
        else:
            name = self.models[pick % len(self.models)]
            ModelEntry.objects.filter(name=name).update(launchable=how == "launchable")

    @precondition(lambda self: self.runs)
    @rule(
        run=st.integers(0, 19),
        change=st.sampled_from(["rating broken", "rating flawless", "outcome infrastructure"]),
    )
    def a_psql_session_updates_a_run(self, run, change):
        found = self.pick(self.runs, run)
        if found is None:
            return
        column, value = {
            "rating broken": ("validator_rating", "broken"),
            "rating flawless": ("validator_rating", "flawless"),
            "outcome infrastructure": ("outcome", "infrastructure"),
        }[change]
        with connection.cursor() as cursor:
            sql = f"UPDATE runs_run SET {column} = %s WHERE id = %s"  # noqa: S608
            cursor.execute(sql, [value, found])

    # After every step ------------------------------------------------------------------------

    @invariant()
    def either_process_reads_the_standing_computed_afresh(self):
        if not hasattr(self, "ladder_id"):
            return
        expected = set_aside(fresh(self.ladder_id))
        for via, answer in self.answered:
            board = answer.json()
            self.agree(via, "the write's answer", board, expected)
            self.held[via] = (board, board["version"])
        self.answered = []
        for via in (0, 1):
            mode = self.reads[(self.step + 2 * via) % len(self.reads)]
            board = self.read(via, mode)
            self.agree(via, mode, board, expected)
        self.step += 1
        self.take_in(expected)

    def take_in(self, board: dict) -> None:
        """What the next step may act on (the rules' preconditions: a step that could only be
        refused or find nothing to act on is not drawn)."""
        self.in_flight = bool(self.jobs())
        self.running = board["ladder"]["status"] in ("running", "needsAttention")
        self.blocked = [
            c["key"]
            for c in board["climbers"]
            if c["status"] == "blocked" and c["blockedReason"] in ("failing", "unlaunchable")
        ]
        self.passes_queued = DBTaskResult.objects.ready().exists()

    def read(self, via: int, mode: str) -> dict:
        # The owner and the reviewer the ladder is shared with read the same board, in turn.
        viewer = (self.world.owner, self.world.reviewer)[(self.step + via) % 2]
        server, token = self.world.servers[via], self.world.token(viewer)
        path = f"/api/ladders/{self.ladder_id}/progress"
        held = self.held[via]
        if held is None:
            mode = "plain"
        headers = {}
        if mode in ("if-none-match", "both"):
            headers["If-None-Match"] = f'"{held[1]}"'
        if mode in ("since", "both"):
            path += f"?since={held[1]}"
        answer = server.request(token, path, headers=headers)
        if answer.status == 304:
            assert "If-None-Match" in headers, "a 304 to a read that held no version"
            assert answer.headers["ETag"] == f'"{held[1]}"'
            return held[0]
        assert answer.status == 200, (path, answer.status, answer.content[:2000])
        board = answer.json()
        assert answer.headers["ETag"] == f'"{board["version"]}"'
        if "since" in path:
            if board["since"] is not None:
                assert board["since"] == held[1]
                board = applied(held[0], board)
            board = {k: v for k, v in board.items() if k != "since"}
        self.held[via] = (board, board["version"])
        return board

    def agree(self, via: int, how: str, board: dict, expected: dict) -> None:
        found = differences(set_aside(board), expected)
        assert not found, (
            f"progress read through process {via} ({how}) differs from the standing computed "
            "afresh:\n  " + "\n  ".join(found[:40])
        )


SETTINGS = settings(
    # A longer search: LOOPWEB_INTERLEAVING_EXAMPLES=100 (CI's default keeps the test near 45 s).
    max_examples=int(os.environ.get("LOOPWEB_INTERLEAVING_EXAMPLES", "8")),
    stateful_step_count=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def test_either_process_reads_the_standing_computed_afresh_after_any_write(
    owner, reviewer, outsider, driver
):
    with web_processes(2) as servers:
        Interleavings.world = World(servers, owner, reviewer, outsider, driver)
        run_state_machine_as_test(Interleavings, settings=SETTINGS)
