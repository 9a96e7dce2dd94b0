"""Progress shared by a ladder's viewers (``ladders.shared_progress``): a board is computed once
per change, not once per viewer; a change to some cells recomputes only the climbers holding
them; and a shared board is always the board computed afresh. The seed's "Progress is a read"
still holds: sharing only decides how much of the read is made again."""

import contextlib
import random
import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from ladders import evidence, progress, services, shared_progress
from ladders.models import Ladder
from loopweb.runs import changes
from loopweb.runs import services as run_services
from loopweb.runs.errors import Conflict
from loopweb.runs.models import Change, Job, Run
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    make_ladder,
    outside,
    push,
    versions,
)
from tests.tasks import run_queued_tasks

pytestmark = pytest.mark.django_db(transaction=True)


class Spy:
    """Counts the computations of a live dispatch's parts: all of them (None) or those of some
    climbers (their keys)."""

    def __init__(self, monkeypatch):
        self.calls: list[set[str] | None] = []
        self.live, self.after_change = progress.live, progress.after_change
        self.hold: threading.Event | None = None
        self.started = threading.Event()
        monkeypatch.setattr(progress, "live", self.all)
        monkeypatch.setattr(progress, "after_change", self.some)

    def all(self, ladder, dispatch):
        self.calls.append(None)
        return self.held(self.live(ladder, dispatch))

    def some(self, ladder, dispatch, live, indexes):
        self.calls.append({live.parts[i].key for i in indexes})
        return self.held(self.after_change(ladder, dispatch, live, indexes))

    def held(self, live):
        if self.hold is not None:  # computed, but held before it is handed back
            hold, self.hold = self.hold, None
            self.started.set()
            assert hold.wait(timeout=10)
        return live

    @property
    def full(self) -> int:
        return sum(1 for only in self.calls if only is None)


@pytest.fixture
def spy(monkeypatch):
    return Spy(monkeypatch)


def started(owner, n_climbers=3, n_rungs=2, **overrides) -> Ladder:
    ladder = make_ladder(owner, versions(n_rungs), climbers(n_climbers), **overrides)
    services.start_dispatch(ladder=ladder)
    return ladder


def fresh(ladder) -> Ladder:
    return Ladder.objects.get(pk=ladder.pk)


def without_version(body: dict) -> dict:
    return {k: v for k, v in body.items() if k != "version"}


def test_viewers_of_an_unchanged_board_share_one_computation(owner, spy):
    ladder = started(owner)
    first = shared_progress.read(fresh(ladder))
    second = shared_progress.read(fresh(ladder))
    assert spy.full == 1
    assert second.version == first.version
    assert second.encoded == first.encoded


def test_reading_an_unchanged_board_costs_one_query(owner, django_assert_num_queries):
    ladder = started(owner)
    shared_progress.read(fresh(ladder))
    ladder = fresh(ladder)
    # SELECT the snapshot, the pruning horizon, the jobs under way and the changes not seen
    # (on SQLite, one query for each, and one whether a climber is not pinned yet).
    with django_assert_num_queries(1 if connection.vendor == "postgresql" else 5):
        shared_progress.read(ladder)


def test_twenty_viewers_at_once_cost_one_computation(owner, spy):
    ladder = started(owner)
    boards, errors = [], []

    def view():
        try:
            boards.append(shared_progress.read(fresh(ladder)))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=view) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert errors == []
    assert len(boards) == 20
    assert spy.full == 1
    assert len({board.version for board in boards}) == 1


def test_a_push_recomputes_only_the_climbers_holding_its_cell(owner, driver, spy):
    ladder = started(owner, n_climbers=3)
    shared_progress.read(fresh(ladder))
    jobs = claim_all(driver)

    push(driver, jobs[1], record=PERFECT)
    board = shared_progress.read(fresh(ladder))

    assert spy.calls == [None, {board.parts[1].key}]
    assert board.body["climbers"][1]["slots"][0]["status"] == "passed"
    assert without_version(board.body) == progress.compute(fresh(ladder))


def test_a_change_reads_again_only_the_climbers_holding_its_cells(owner, driver):
    """Cost follows the change: after one push the read asks the database about the cells of the
    climber holding the pushed run's cell alone, not about every climber's."""
    ladder = started(owner, n_climbers=2, n_rungs=3)
    shared_progress.read(fresh(ladder))
    [job, other] = claim_all(driver)
    push(driver, job, record=PERFECT)

    with CaptureQueriesContext(connection) as queries:
        board = shared_progress.read(fresh(ladder))

    asked = "\n".join(q["sql"] for q in queries.captured_queries)
    assert job.cell_key in asked
    assert other.cell_key not in asked
    assert without_version(board.body) == progress.compute(fresh(ladder))


def test_a_change_reads_again_the_climbers_holding_its_cells_whole(owner, driver):
    """A climber holds a cell per rung; a push changes one, and the next read asks the database
    about every cell of the climber holding it (the board keeps its parts, not the evidence they
    were computed from) and about no other climber's."""
    ladder = started(owner, n_climbers=2, n_rungs=3)
    before = shared_progress.read(fresh(ladder))
    [job, _] = claim_all(driver)
    [held] = [p for p in before.parts if job.cell_key in p.cells]
    [other] = [p for p in before.parts if p is not held]
    push(driver, job, record=PERFECT)

    with CaptureQueriesContext(connection) as queries:
        board = shared_progress.read(fresh(ladder))

    asked = "\n".join(q["sql"] for q in queries.captured_queries)
    assert [key for key in held.cells if key not in asked] == []
    assert [key for key in other.cells if key in asked] == []
    assert without_version(board.body) == progress.compute(fresh(ladder))


def test_a_climber_replaced_since_the_board_was_computed_is_not_read_into_it(owner):
    """A Run between a read's look and its evidence replaces the climbers: the climbers a change
    reads again are not the board's, and the board is computed whole rather than mixed."""
    ladder = started(owner, n_climbers=2)
    dispatch = fresh(ladder).dispatch
    kept = progress.live(fresh(ladder), dispatch)
    services.stop_dispatch(ladder=fresh(ladder))
    services.start_dispatch(ladder=fresh(ladder))

    with pytest.raises(evidence.Stale):
        progress.after_change(fresh(ladder), fresh(ladder).dispatch, kept, [0])


def test_a_push_and_the_launch_pass_after_it_read_again_only_the_climber_they_changed(
    owner, driver, spy
):
    """A push passes a climber's first rung and the launch pass that follows records it and
    launches its second: the next read computes that climber alone again, from its own cells
    (the pushed run's and the launched job's among them) and no other climber's, with no whole
    computation."""
    ladder = started(owner, n_climbers=3, n_rungs=3)
    before = shared_progress.read(fresh(ladder))
    [job, *others] = claim_all(driver)
    [held] = [p for p in before.parts if job.cell_key in p.cells]
    push(driver, job, record=PERFECT)
    report = services.run_launch_pass(ladder_id=ladder.pk)
    assert report is not None and report.launched == 1
    [launched] = Job.objects.filter(status="queued")
    changed = {job.cell_key, launched.cell_key}
    assert changed <= held.cells

    with CaptureQueriesContext(connection) as queries:
        board = shared_progress.read(fresh(ladder))

    asked = "\n".join(q["sql"] for q in queries.captured_queries)
    others = {key for part in before.parts if part is not held for key in part.cells}
    assert [key for key in held.cells if key not in asked] == []
    assert [key for key in others if key in asked] == []
    assert spy.calls == [None, {held.key}]
    assert without_version(board.body) == progress.compute(fresh(ladder))


def test_runs_reviewed_before_their_rung_was_reached_count_as_reviewed_once_it_is(owner, driver):
    """A run of a climber's second rung, pushed from outside and reviewed while the climber
    still stood on its first, counts as reviewed when a push passes the first rung (the board
    keeps the reviews of every run it read, not only of the runs its slots were counting)."""
    steps, combos = versions(2), climbers(1)
    ladder = make_ladder(owner, steps, combos)
    services.start_dispatch(ladder=ladder)
    ahead = outside(driver, steps[1], combos[0], PERFECT)
    run_services.review_run(run=ahead, reviewer=owner, aesthetic_rating=3, writeup="")
    shared_progress.read(fresh(ladder))
    [job] = claim_all(driver)
    push(driver, job, record=PERFECT)

    board = shared_progress.read(fresh(ladder))

    assert [s["status"] for s in board.body["climbers"][0]["slots"]] == ["passed", "passed"]
    assert board.body["dispatch"]["runsUnreviewed"] == 1
    assert without_version(board.body) == progress.compute(fresh(ladder))


def test_a_read_after_a_change_costs_the_look_and_its_climbers_statements(
    owner, driver, django_assert_num_queries
):
    """The look, then, in a read-only snapshot of its own (BEGIN, SET TRANSACTION ... REPEATABLE
    READ and COMMIT: ``shared_progress.one_snapshot``), the changed climber's row, the
    dispatch's jobs in flight and failed attempts in its cells, the cells' jobs in flight, their
    runs and the reviews of its completed runs: as many whatever the board's size."""
    ladder = started(owner, n_climbers=2, n_rungs=3)
    shared_progress.read(fresh(ladder))
    [job, _] = claim_all(driver)
    push(driver, job, record=PERFECT)
    ladder = fresh(ladder)

    # SQLite has no snapshot to open, and its look asks five questions.
    with django_assert_num_queries(10 if connection.vendor == "postgresql" else 11):
        board = shared_progress.read(ladder)

    assert board.body["climbers"][0]["slots"][0]["status"] == "passed"


def test_a_reader_that_waits_for_another_readers_computation_still_sees_its_own_write(
    owner, driver, spy
):
    """One viewer per process computes while the others wait; a viewer whose request began
    after a write committed is never handed a board computed before that write."""
    ladder = started(owner, n_climbers=2)
    shared_progress.read(fresh(ladder))
    [job, _] = claim_all(driver)
    run_services.report_status(job_id=job.pk, driver=driver, status="running")
    hold = spy.hold = threading.Event()
    boards: dict[str, object] = {}

    def viewer(name):
        try:
            boards[name] = shared_progress.read(fresh(ladder))
        finally:
            connection.close()

    early = threading.Thread(target=viewer, args=("early",))
    early.start()
    assert spy.started.wait(timeout=10)  # computed from before the push, not handed back yet
    push(driver, job, record=PERFECT)
    late = threading.Thread(target=viewer, args=("late",))  # begins after the push committed
    late.start()
    hold.set()
    early.join(timeout=30)
    late.join(timeout=30)

    assert boards["early"].body["climbers"][0]["slots"][0]["status"] == "running"
    assert boards["late"].body["climbers"][0]["slots"][0]["status"] == "passed"


def test_a_board_older_than_the_pruned_changes_is_computed_afresh(owner, driver, spy):
    ladder = started(owner)
    shared_progress.read(fresh(ladder))
    [job, *_] = claim_all(driver)
    push(driver, job, record=PERFECT)
    Change.objects.update(at=timezone.now() - timezone.timedelta(hours=1))

    assert changes.prune() > 0
    board = shared_progress.read(fresh(ladder))

    assert spy.full == 2
    assert without_version(board.body) == progress.compute(fresh(ladder))


def test_a_shared_read_only_reads(owner, driver):
    ladder = started(owner)
    shared_progress.read(fresh(ladder))
    [job, *_] = claim_all(driver)
    push(driver, job, record=PERFECT)
    with CaptureQueriesContext(connection) as queries:
        board = shared_progress.read(fresh(ladder))
    read_only = ("SELECT", "BEGIN", "SET TRANSACTION", "COMMIT")
    assert all(q["sql"].lstrip().upper().startswith(read_only) for q in queries.captured_queries)
    assert board.body["climbers"][0]["slots"][0]["status"] == "passed"  # decided live
    assert all(c.verdicts == {} for c in fresh(ladder).dispatch.climbers.all())


OPERATIONS = (
    "push",
    "push broken",
    "fail",
    "cancel",
    "outside",
    "review",
    "pass",
    "status",
    "retry",
)


@pytest.mark.parametrize(
    ("seed", "overrides"),
    [
        (20261201, {"runsPerCell": 2, "retryCount": 1}),
        # Attempts used up block climbers, and Retry launches them again; a decided slot
        # cancels what it no longer needs.
        (20261202, {"runsPerCell": 2, "retryCount": 0, "gate": {"earlyStop": True}}),
    ],
)
def test_a_board_kept_up_to_date_is_the_board_computed_afresh(owner, driver, spy, seed, overrides):
    """Whatever lands, in whatever order, the shared board equals a fresh computation."""
    rng = random.Random(seed)
    steps = versions(3)
    combos = climbers(4)
    ladder = make_ladder(owner, steps, combos, **overrides)
    services.start_dispatch(ladder=ladder)
    seen = set()
    for step in range(60):
        operation = rng.choice(OPERATIONS)
        jobs = list(Job.objects.filter(status__in=["queued", "pending"]).order_by("id"))
        if operation.startswith("push") and jobs:
            claim_all(driver)
            record = BROKEN if operation == "push broken" else PERFECT
            push(driver, rng.choice(jobs), record=record)
        elif operation == "fail" and jobs:
            claim_all(driver)
            run_services.fail_job(job_id=rng.choice(jobs).pk, driver=driver, failure="hung")
        elif operation == "cancel" and jobs:
            run_services.cancel_job(job=rng.choice(jobs))
        elif operation == "outside":
            outside(driver, rng.choice(steps), rng.choice(combos), rng.choice([PERFECT, BROKEN]))
        elif operation == "review":
            unreviewed = list(Run.objects.filter(reviews__isnull=True, outcome="completed"))
            if unreviewed:
                run_services.review_run(
                    run=rng.choice(unreviewed), reviewer=owner, aesthetic_rating=3, writeup=""
                )
        elif operation == "status" and jobs:
            claim_all(driver)
            run_services.report_status(job_id=jobs[0].pk, driver=driver, status="running")
        elif operation == "retry":
            with contextlib.suppress(Conflict):  # none blocked
                services.retry_blocked(ladder=fresh(ladder))
        else:
            run_queued_tasks()
        shared = shared_progress.read(fresh(ladder))
        assert without_version(shared.body) == progress.compute(fresh(ladder)), (step, operation)
        seen.update((c["status"], c["blockedReason"]) for c in shared.body["climbers"])
    # The failed attempts a board keeps count too: climbers were blocked by them on the way.
    assert ("blocked", "failing") in seen
    partial = len(spy.calls) - spy.full
    assert partial > 10, spy.calls  # most steps recomputed only some climbers


def test_a_board_looked_at_again_keeps_its_version_while_nothing_changed(owner):
    """A transaction running elsewhere stays in the snapshots taken while it runs; once it ends
    the board has seen a later snapshot, but the board, and the version naming it, stay."""
    if connection.vendor != "postgresql":
        pytest.skip("transaction ids are PostgreSQL's")
    import psycopg

    ladder = started(owner)
    db = connection.settings_dict
    with psycopg.connect(
        dbname=db["NAME"], user=db["USER"], host=db["HOST"] or "127.0.0.1", port=db["PORT"] or 5432
    ) as elsewhere:
        elsewhere.execute("SELECT pg_current_xact_id()")  # a transaction with an id, left open
        first = shared_progress.read(fresh(ladder))
        elsewhere.rollback()

    again = shared_progress.read(fresh(ladder))

    assert again.token != first.token
    assert again.version == first.version
    assert again.encoded is first.encoded


def test_the_workers_chores_prune_old_changes(owner):
    from loopweb.ops.chores import CHORES

    started(owner)
    Change.objects.update(at=timezone.now() - timezone.timedelta(hours=1))
    CHORES["prune_changes"]()
    assert not Change.objects.exists()


def test_viewers_waiting_for_a_look_begun_after_them_are_handed_its_board(
    owner, driver, spy, monkeypatch
):
    """While a board changes all the time, viewers waiting on one process share the next
    computation when its look at the database began after their requests did: one look and one
    computation for the round, not one per viewer, and none handed a board older than its
    request."""
    ladder = started(owner, n_climbers=2)
    shared_progress.read(fresh(ladder))
    [job, _] = claim_all(driver)
    push(driver, job, record=PERFECT)  # committed before either viewer begins

    real_look, looks = shared_progress._look, []
    monkeypatch.setattr(
        shared_progress, "_look", lambda *args: looks.append(args) or real_look(*args)
    )
    real_now, calls = shared_progress._now, []
    about_to_look, second_arrived = threading.Event(), threading.Event()

    def now():
        name = threading.current_thread().name
        calls.append(name)
        if name == "first" and calls.count("first") == 2:
            # The first viewer holds the board's lock and is about to look: a request that
            # begins now waits for it, and its look begins after that request.
            about_to_look.set()
            assert second_arrived.wait(timeout=10)
        value = real_now()
        if name == "second":
            second_arrived.set()
        return value

    monkeypatch.setattr(shared_progress, "_now", now)
    boards: dict[str, object] = {}

    def viewer():
        try:
            boards[threading.current_thread().name] = shared_progress.read(fresh(ladder))
        finally:
            connection.close()

    first = threading.Thread(target=viewer, name="first")
    first.start()
    assert about_to_look.wait(timeout=10)
    second = threading.Thread(target=viewer, name="second")
    second.start()
    first.join(timeout=30)
    second.join(timeout=30)

    assert boards["second"] is boards["first"]
    assert len(looks) == 1
    assert spy.calls == [None, {boards["first"].parts[0].key}]
    assert boards["second"].body["climbers"][0]["slots"][0]["status"] == "passed"


def test_a_process_keeps_a_bounded_number_of_boards(owner, monkeypatch):
    """Boards kept for the next viewers are bounded: beyond ``KEPT`` the least recently read
    are forgotten (their next read computes afresh, checking the database as every read does)."""
    monkeypatch.setattr(shared_progress, "KEPT", 3)
    steps, combos = versions(1), climbers(1)
    ladders = []
    for _ in range(5):
        ladders.append(make_ladder(owner, steps, combos))
        services.start_dispatch(ladder=ladders[-1])
    for ladder in ladders:
        shared_progress.read(fresh(ladder))
    kept = [i for i, s in shared_progress._slots.items() if s.board is not None]
    assert sorted(kept) == [ladder.pk for ladder in ladders[-3:]]
    assert len(shared_progress._slots) == 3
