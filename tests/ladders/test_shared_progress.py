"""Progress shared by a ladder's viewers (``ladders.shared_progress``): a board polled by many
viewers is computed about once per ``LOOPWEB_PROGRESS_MAX_AGE``, never once per viewer, and the
ladder's own writes are seen at once. The seed's "Progress is a read" still holds: sharing only
decides how often the read is made."""

import json
import threading
from types import SimpleNamespace

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from ladders import selectors, services, shared_progress
from ladders.models import DispatchClimber, Ladder
from tests.ladders.builders import PERFECT, claim_all, climbers, make_ladder, push, versions

MAX_AGE = 1.0


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


@pytest.fixture(autouse=True)
def sharing(settings, monkeypatch):
    settings.LOOPWEB_PROGRESS_MAX_AGE = MAX_AGE
    monkeypatch.setattr(shared_progress, "_slots", {})
    clock = Clock()
    monkeypatch.setattr(shared_progress, "_now", clock)
    return clock


class Counting:
    """A stand-in for ``ladder_progress`` that counts its computations; ``gate`` holds one
    computation until it is set."""

    def __init__(self):
        self.calls = 0
        self.started = threading.Event()
        self.gate: threading.Event | None = None

    def __call__(self, ladder):
        self.calls += 1
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(timeout=10)
        return {"ladder": {"id": ladder.pk}, "computation": self.calls}


@pytest.fixture
def counting(monkeypatch):
    compute = Counting()
    monkeypatch.setattr(shared_progress, "ladder_progress", compute)
    return compute


LADDER = SimpleNamespace(pk=7)


def test_viewers_within_the_max_age_share_one_computation(counting, sharing):
    first = shared_progress.read(LADDER)
    sharing.now += MAX_AGE - 0.01
    assert shared_progress.read(LADDER) is first
    assert counting.calls == 1


def refreshed(ladder=LADDER) -> None:
    """Wait for a refresh running beside the requests to be done."""
    with shared_progress._slot(ladder.pk).lock:
        pass


def test_an_expired_copy_is_served_while_a_new_one_is_computed_beside_the_request(
    counting, sharing
):
    first = shared_progress.read(LADDER)
    sharing.now += MAX_AGE
    assert shared_progress.read(LADDER) is first  # nobody waits for the computation
    refreshed()
    second = shared_progress.read(LADDER)
    assert second is not first and second.body["computation"] == 2


def test_a_max_age_of_zero_computes_every_read(counting, settings):
    settings.LOOPWEB_PROGRESS_MAX_AGE = 0
    shared_progress.read(LADDER)
    shared_progress.read(LADDER)
    assert counting.calls == 2


def test_each_ladder_has_its_own_copy(counting):
    assert shared_progress.read(SimpleNamespace(pk=1)).body["ladder"]["id"] == 1
    assert shared_progress.read(SimpleNamespace(pk=2)).body["ladder"]["id"] == 2


def test_the_copy_is_encoded_once_with_a_digest_of_its_bytes(counting):
    shared = shared_progress.read(LADDER)
    assert json.loads(shared.encoded) == shared.body
    assert shared_progress.read(LADDER).digest == shared.digest
    assert len(shared.digest) == 64


def test_while_a_copy_is_refreshed_every_viewer_gets_the_one_there_is(counting, sharing):
    old = shared_progress.read(LADDER)
    sharing.now += MAX_AGE
    counting.gate, counting.started = threading.Event(), threading.Event()
    assert shared_progress.read(LADDER) is old
    assert counting.started.wait(timeout=10)

    # One refresh at a time: the other viewers neither wait for it nor compute.
    assert all(shared_progress.read(LADDER) is old for _ in range(5))
    assert counting.calls == 2

    counting.gate.set()
    refreshed()
    assert shared_progress.read(LADDER).body["computation"] == 2


def test_a_refresh_that_fails_leaves_the_copy_there_is_for_the_next_read_to_retry(
    counting, sharing, monkeypatch, caplog
):
    old = shared_progress.read(LADDER)
    sharing.now += MAX_AGE

    def broken(ladder):
        raise RuntimeError("database gone")

    monkeypatch.setattr(shared_progress, "ladder_progress", broken)
    assert shared_progress.read(LADDER) is old
    refreshed()
    assert "refreshing the progress of ladder 7 failed" in caplog.text
    monkeypatch.setattr(shared_progress, "ladder_progress", counting)
    assert shared_progress.read(LADDER) is old  # still expired: refreshed again
    refreshed()
    assert shared_progress.read(LADDER).body["computation"] == 2


def test_viewers_of_a_board_nobody_has_computed_yet_wait_for_one_computation(counting):
    counting.gate = threading.Event()
    results = []
    viewers = [
        threading.Thread(target=lambda: results.append(shared_progress.read(LADDER)))
        for _ in range(5)
    ]
    for viewer in viewers:
        viewer.start()
    assert counting.started.wait(timeout=10)
    counting.gate.set()
    for viewer in viewers:
        viewer.join(timeout=10)
    assert counting.calls == 1
    assert len(results) == 5 and all(r is results[0] for r in results)


@pytest.mark.django_db
def test_a_write_drops_the_copy_when_it_commits(counting, django_capture_on_commit_callbacks):
    first = shared_progress.read(LADDER)
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            shared_progress.forget(LADDER.pk)
            assert shared_progress.read(LADDER) is first  # not committed yet
    assert shared_progress.read(LADDER) is not first


@pytest.mark.django_db
def test_a_write_rolled_back_keeps_the_copy(counting, django_capture_on_commit_callbacks):
    first = shared_progress.read(LADDER)
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(RuntimeError), transaction.atomic():
            shared_progress.forget(LADDER.pk)
            raise RuntimeError
    assert shared_progress.read(LADDER) is first


@pytest.mark.django_db(transaction=True)  # outside a transaction, a write's commit is at once
def test_a_computation_begun_before_a_write_committed_is_not_shared(counting, sharing, monkeypatch):
    def compute_then_write(ladder):
        body = counting(ladder)
        shared_progress.forget(ladder.pk)  # a write commits while this viewer computes
        return body

    monkeypatch.setattr(shared_progress, "ladder_progress", compute_then_write)
    served = shared_progress.read(LADDER)
    assert served.body["computation"] == 1  # the viewer gets what it computed
    monkeypatch.setattr(shared_progress, "ladder_progress", counting)
    assert shared_progress.read(LADDER).body["computation"] == 2  # nobody else does


def test_a_copy_nobody_reads_is_dropped_when_another_is_stored(counting, sharing):
    shared_progress.read(SimpleNamespace(pk=1))
    sharing.now += shared_progress.UNREAD_FOR + 1
    shared_progress.read(SimpleNamespace(pk=2))
    assert shared_progress._slots[1].shared is None
    assert shared_progress._slots[2].shared is not None


# -- with real ladders ----------------------------------------------------------------------


@pytest.fixture
def ladder(owner):
    ladder = make_ladder(owner, versions(2, prefix="shared"), climbers(2, prefix="sh"))
    services.start_dispatch(ladder=ladder)
    return Ladder.objects.get(pk=ladder.pk)


def progress_over_http(api, ladder) -> dict:
    response = api.get(f"/api/ladders/{ladder.pk}/progress")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    return response.json()


def test_the_shared_board_is_the_progress_read(owner_api, ladder):
    fresh = json.loads(shared_progress.compute(ladder).encoded)
    assert progress_over_http(owner_api, ladder) == fresh
    assert fresh["dispatch"]["status"] == "running"
    assert selectors.ladder_progress(ladder)["climbers"][0]["key"] == fresh["climbers"][0]["key"]


def test_a_second_viewer_within_the_max_age_costs_no_query(
    owner_api, ladder, django_assert_max_num_queries
):
    progress_over_http(owner_api, ladder)
    # The token and the ladder (is it visible to the caller?) only.
    with django_assert_max_num_queries(2):
        progress_over_http(owner_api, ladder)


@pytest.mark.django_db(transaction=True)  # the refresh reads in a thread of its own
def test_runs_pushed_by_drivers_show_once_the_max_age_has_passed(
    owner_api, driver, ladder, sharing
):
    before = progress_over_http(owner_api, ladder)
    for job in claim_all(driver):
        push(driver, job, record=PERFECT)
    assert progress_over_http(owner_api, ladder) == before  # within the max age
    sharing.now += MAX_AGE
    assert progress_over_http(owner_api, ladder) == before  # refreshed beside this request
    refreshed(ladder)
    after = progress_over_http(owner_api, ladder)
    assert after["dispatch"]["runs"]["done"] == before["dispatch"]["runs"]["done"] + 2


def test_stop_is_seen_at_once_by_the_process_that_made_it(
    owner_api, ladder, django_capture_on_commit_callbacks
):
    assert progress_over_http(owner_api, ladder)["dispatch"]["status"] == "running"
    with django_capture_on_commit_callbacks(execute=True):
        stopped = owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json")
    assert stopped.status_code == 200
    assert progress_over_http(owner_api, ladder)["dispatch"]["status"] == "stopped"


@pytest.mark.django_db(transaction=True)  # Run commits before it answers, as in production
def test_run_shares_the_progress_it_answers_with(owner_api, ladder, django_assert_max_num_queries):
    owner_api.post(f"/api/ladders/{ladder.pk}/stop", {}, format="json")
    answered = owner_api.post(f"/api/ladders/{ladder.pk}/run", {}, format="json").json()
    with django_assert_max_num_queries(2):
        assert progress_over_http(owner_api, ladder) == answered
    assert answered["dispatch"]["status"] == "running"


def test_an_edit_is_seen_at_once(owner, owner_api, ladder, django_capture_on_commit_callbacks):
    progress_over_http(owner_api, ladder)
    with django_capture_on_commit_callbacks(execute=True):
        services.reorder_rungs(
            ladder=ladder, order=list(reversed([r.rung_id for r in ladder.rungs.all()]))
        )
    rungs = progress_over_http(owner_api, ladder)["rungs"]
    assert [r["case"] for r in rungs] == ["shared-2", "shared-1"]


def test_a_copy_stored_after_an_action_is_kept_for_its_viewers(counting, sharing):
    stored = shared_progress.store(LADDER)
    sharing.now += MAX_AGE / 2
    assert shared_progress.read(LADDER) is stored


def test_progress_shared_or_not_is_a_read(owner_api, driver, ladder):
    """Seed 004, "Progress": "Progress is a read. Verdicts the gate has resolved that no launch
    pass has written down yet are computed live and persisted by the next pass." """
    for job in claim_all(driver):
        push(driver, job, record=PERFECT)  # decides rung one; no pass has run
    with CaptureQueriesContext(connection) as computing:
        board = progress_over_http(owner_api, ladder)
    with CaptureQueriesContext(connection) as shared:
        assert progress_over_http(owner_api, ladder) == board

    assert {slot["status"] for c in board["climbers"] for slot in c["slots"][:1]} == {"passed"}
    for query in [*computing.captured_queries, *shared.captured_queries]:
        assert query["sql"].lstrip().upper().startswith("SELECT"), query["sql"]
    assert not DispatchClimber.objects.filter(dispatch__ladder=ladder).exclude(verdicts={})
