"""SPEC §5, "Read-your-writes": a progress, summary or queue read that begins after a write
commits reflects it, on every web process; a board shared between viewers is keyed by a version
of the data it was computed from, never by its age alone. And HTTP caching done the standard way:
progress answers an ``ETag`` of that version, ``If-None-Match`` with it answers 304, and
``?since=<version>`` answers only the climbers changed since then.

Every test here commits its writes (``transaction=True``), as requests do, and reads through the
API as a REST client would, with the board shared between reads."""

import pytest
from django.db import connection
from django.utils import timezone

from ladders import services
from loopweb.runs import services as run_services
from loopweb.runs.models import CaseVersion
from tests.ladders.builders import (
    BROKEN,
    PERFECT,
    claim_all,
    climbers,
    make_ladder,
    push,
    queued,
    versions,
    work,
)

pytestmark = pytest.mark.django_db(transaction=True)


def progress(api, ladder, **headers):
    response = api.get(f"/api/ladders/{ladder.pk}/progress", **headers)
    assert response.status_code in (200, 304), response.content
    return response


def body(api, ladder) -> dict:
    return progress(api, ladder).json()


def started(owner, n_climbers=2, n_rungs=2, **overrides):
    ladder = make_ladder(owner, versions(n_rungs), climbers(n_climbers), **overrides)
    services.start_dispatch(ladder=ladder)
    return ladder


def test_a_push_is_seen_by_the_next_read(owner, owner_api, driver):
    ladder = started(owner)
    before = body(owner_api, ladder)
    assert before["climbers"][0]["tally"]["counted"] == 0
    job, _ = claim_all(driver)

    push(driver, job, record=PERFECT)

    after = body(owner_api, ladder)
    assert after["climbers"][0]["slots"][0]["tally"]["counted"] == 1
    assert after["climbers"][0]["slots"][0]["status"] == "passed"


def test_a_re_push_is_seen_by_the_next_read(owner, owner_api, driver):
    ladder = started(owner, n_climbers=1, n_rungs=1, runsPerCell=2)
    first, _ = claim_all(driver)
    run = push(driver, first, record=PERFECT)
    assert body(owner_api, ladder)["climbers"][0]["tally"]["passing"] == 1

    run_services.repush_run(
        run=run, outcome="completed", record=BROKEN, finished_at=run.finished_at
    )

    assert body(owner_api, ladder)["climbers"][0]["tally"]["passing"] == 0


def test_a_review_is_seen_by_the_next_read(owner, owner_api, driver, run_tasks):
    ladder = started(owner, n_climbers=1, n_rungs=1)
    [run] = work(driver, run_tasks, PERFECT)
    assert body(owner_api, ladder)["dispatch"]["runsUnreviewed"] == 1

    reviewed = owner_api.post(
        f"/api/runs/{run.pk}/reviews", {"aestheticRating": 4, "writeup": "ok"}, format="json"
    )
    assert reviewed.status_code == 201, reviewed.json()

    assert body(owner_api, ladder)["dispatch"]["runsUnreviewed"] == 0
    assert owner_api.get(f"/api/ladders/{ladder.pk}/queue").json()["count"] == 0


def test_a_jobs_status_change_is_seen_by_the_next_read(owner, owner_api, driver):
    ladder = started(owner)
    assert body(owner_api, ladder)["dispatch"]["runsUnderWay"] == 0
    job, _ = claim_all(driver)

    run_services.report_status(job_id=job.pk, driver=driver, status="dispatched")

    assert body(owner_api, ladder)["dispatch"]["runsUnderWay"] == 1


def test_a_jobs_end_is_seen_by_the_next_read(owner, owner_api, driver):
    ladder = started(owner, retryCount=0)
    assert body(owner_api, ladder)["dispatch"]["runs"]["inFlight"] == 2
    job, _ = claim_all(driver)

    run_services.fail_job(job_id=job.pk, driver=driver, failure="infrastructure")

    after = body(owner_api, ladder)
    assert after["dispatch"]["runs"]["inFlight"] == 1
    assert (after["climbers"][0]["status"], after["climbers"][0]["blockedReason"]) == (
        "blocked",
        "failing",
    )


def test_stop_and_cancel_running_is_seen_by_the_next_read(owner, owner_api, driver):
    ladder = started(owner)
    assert body(owner_api, ladder)["dispatch"]["runs"]["inFlight"] == 2
    job, _ = claim_all(driver)
    run_services.report_status(job_id=job.pk, driver=driver, status="running")

    stopped = owner_api.post(
        f"/api/ladders/{ladder.pk}/stop", {"cancelRunning": True}, format="json"
    )
    assert stopped.json() == {"cancelled": 2}

    after = body(owner_api, ladder)
    assert after["dispatch"]["status"] == "stopped"
    assert after["dispatch"]["runs"]["inFlight"] == 0


def test_a_catalog_change_is_seen_by_the_next_read(owner, owner_api):
    ladder = started(owner, n_climbers=1, n_rungs=1)
    assert body(owner_api, ladder)["rungs"][0]["stale"] is False
    old = CaseVersion.objects.get(case__slug="step-1")
    CaseVersion.objects.create(
        case=old.case, version="2", checklist=old.checklist, ingested_at=timezone.now()
    )

    assert body(owner_api, ladder)["rungs"][0]["stale"] is True


def test_an_edit_is_seen_by_the_next_read(owner, owner_api):
    ladder = started(owner, n_climbers=1, n_rungs=1)
    assert body(owner_api, ladder)["ladder"]["name"] == "climb"
    config = owner_api.get(f"/api/ladders/{ladder.pk}/").json()

    edited = owner_api.put(
        f"/api/ladders/{ladder.pk}/", {**config, "name": "renamed"}, format="json"
    )
    assert edited.status_code == 200, edited.json()

    assert body(owner_api, ladder)["ladder"]["name"] == "renamed"


def test_a_pass_run_by_the_worker_is_seen_by_the_next_read(owner, owner_api, driver, run_tasks):
    ladder = started(owner, n_climbers=1, n_rungs=2)
    [job] = claim_all(driver)
    push(driver, job, record=PERFECT)
    assert body(owner_api, ladder)["climbers"][0]["tally"]["inFlight"] == 0
    assert len(queued(ladder)) == 0

    run_tasks()  # the pass the push enqueued launches rung 2

    assert body(owner_api, ladder)["climbers"][0]["tally"]["inFlight"] == 1


# HTTP caching ----------------------------------------------------------------------------------


def test_progress_answers_an_etag_and_304_while_nothing_changed(owner, owner_api, driver):
    ladder = started(owner)
    first = progress(owner_api, ladder)
    tag = first.headers["ETag"]
    assert tag.startswith('"') and tag.endswith('"')

    again = progress(owner_api, ladder, HTTP_IF_NONE_MATCH=tag)
    assert again.status_code == 304
    assert again.content == b""
    assert again.headers["ETag"] == tag

    job, _ = claim_all(driver)
    push(driver, job, record=PERFECT)
    changed = progress(owner_api, ladder, HTTP_IF_NONE_MATCH=tag)
    assert changed.status_code == 200
    assert changed.headers["ETag"] != tag
    assert changed.json()["climbers"][0]["slots"][0]["tally"]["counted"] == 1


@pytest.mark.postgres  # one look is PostgreSQL's; SQLite reads the same in several queries
def test_a_304_costs_the_token_and_one_look(owner, owner_api, django_assert_max_num_queries):
    ladder = started(owner, n_climbers=3, n_rungs=3)
    tag = progress(owner_api, ladder).headers["ETag"]
    # The token's query, then one look that also tells whether the reader may see the ladder.
    with django_assert_max_num_queries(2):
        assert progress(owner_api, ladder, HTTP_IF_NONE_MATCH=tag).status_code == 304


def test_a_current_version_with_a_token_that_no_longer_counts_is_refused(owner, owner_api):
    from loopweb.runs.models import ApiToken

    ladder = started(owner)
    url = f"/api/ladders/{ladder.pk}/progress"
    tag = progress(owner_api, ladder).headers["ETag"]
    ApiToken.objects.filter(user=owner).update(expires_at=timezone.now())
    assert owner_api.get(url, HTTP_IF_NONE_MATCH=tag).status_code == 401
    ApiToken.objects.filter(user=owner).update(expires_at=None)
    owner.is_active = False
    owner.save()
    assert owner_api.get(url, HTTP_IF_NONE_MATCH=tag).status_code == 401
    assert owner_api.get(url, HTTP_IF_NONE_MATCH="not a version").status_code == 401


def test_a_signed_in_reader_of_the_api_is_answered_304_too(owner, client):
    ladder = started(owner)
    client.force_login(owner)
    tag = client.get(f"/api/ladders/{ladder.pk}/progress").headers["ETag"]
    answer = client.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH=tag)
    assert answer.status_code == 304


def test_a_current_version_is_no_key_to_a_board_the_reader_may_not_see(
    owner, owner_api, outsider_api, reviewer, reviewer_api, staff, token_client
):
    """Whoever ``ladders_for`` lets see the ladder is answered 304; nobody else is."""
    ladder = started(owner)
    ladder.reviewers.add(reviewer)
    tag = progress(owner_api, ladder).headers["ETag"]
    assert progress(reviewer_api, ladder, HTTP_IF_NONE_MATCH=tag).status_code == 304
    assert progress(token_client(staff), ladder, HTTP_IF_NONE_MATCH=tag).status_code == 304

    refused = outsider_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH=tag)
    assert refused.status_code == 404
    ladder.reviewers.remove(reviewer)
    removed = reviewer_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH=tag)
    assert removed.status_code == 404
    for missing in ("987654", "9" * 30):
        answer = owner_api.get(f"/api/ladders/{missing}/progress", HTTP_IF_NONE_MATCH=tag)
        assert answer.status_code == 404, missing


def test_since_answers_only_the_climbers_changed_since_that_version(owner, owner_api, driver):
    ladder = started(owner, n_climbers=3)
    first = progress(owner_api, ladder)
    version = first.headers["ETag"].strip('"')
    assert first.json()["version"] == version
    jobs = claim_all(driver)

    push(driver, jobs[1], record=PERFECT)

    since = owner_api.get(f"/api/ladders/{ladder.pk}/progress?since={version}")
    assert since.status_code == 200
    delta = since.json()
    assert delta["since"] == version
    assert [c["key"] for c in delta["climbers"]] == [first.json()["climbers"][1]["key"]]
    assert delta["climbers"][0]["slots"][0]["tally"]["counted"] == 1
    assert delta["dispatch"]["runs"]["done"] == 1
    # Nothing changed since the answer's own version: no climber at all.
    again = owner_api.get(f"/api/ladders/{ladder.pk}/progress?since={delta['version']}")
    assert again.json()["climbers"] == []


#: Written as a version is, naming a snapshot PostgreSQL would refuse.
UNFOLLOWABLE = [
    "1000_5_.0.d",  # xmin after xmax
    "5_1000_3-2000.0.d",  # running transactions outside xmin..xmax
    "5_1000_9-7.0.d",  # running transactions out of order
    "0_0_.0.d",  # no transaction is 0
]
#: Not written as a version is.
NOT_VERSIONS = [
    "99999999999999999999999_99999999999999999999999_.0.d",  # beyond a transaction id
    "٣_٤_.0.d",  # digits, but not ASCII ones
    "3_9_.99999999999999999999999999.d",  # jobs under way beyond any count
    "n99999999999999999999999.0.d",  # SQLite's counter, beyond any stamp
]


@pytest.mark.parametrize("version", UNFOLLOWABLE + NOT_VERSIONS)
def test_a_version_no_snapshot_could_have_matches_nothing(owner, owner_api, version):
    """A client's version is its own text: one naming a snapshot PostgreSQL would refuse
    matches nothing (the whole board, 200), never a 500."""
    ladder = started(owner, n_climbers=2)
    held = progress(owner_api, ladder, HTTP_IF_NONE_MATCH=f'"{version}"')
    assert held.status_code == 200 and len(held.json()["climbers"]) == 2


@pytest.mark.parametrize("version", UNFOLLOWABLE)
def test_since_a_version_that_cannot_be_followed_answers_the_whole_board(owner, owner_api, version):
    ladder = started(owner, n_climbers=2)
    since = owner_api.get(f"/api/ladders/{ladder.pk}/progress?since={version}")
    assert since.status_code == 200, since.content
    assert since.json()["since"] is None and len(since.json()["climbers"]) == 2


@pytest.mark.parametrize("version", NOT_VERSIONS)
def test_since_text_that_is_no_version_is_a_400_naming_it(owner, owner_api, version):
    """(More of them: ``tests/security/test_careless_clients.py``.)"""
    ladder = started(owner, n_climbers=2)
    since = owner_api.get(f"/api/ladders/{ladder.pk}/progress?since={version}")
    assert since.status_code == 400, since.content
    assert "since" in since.json()["errors"]


def test_a_poll_that_finds_changes_looks_at_the_database_once(owner, owner_api, driver, spy_looks):
    """A client polling with its version (``If-None-Match`` and ``?since=``) after a push: the
    look that found the change also told what this process's board had not seen, so the read
    and the delta go on from it instead of asking again."""
    ladder = started(owner, n_climbers=3)
    version = progress(owner_api, ladder).headers["ETag"].strip('"')
    jobs = claim_all(driver)
    push(driver, jobs[2], record=PERFECT)
    spy_looks.clear()

    delta = owner_api.get(
        f"/api/ladders/{ladder.pk}/progress?since={version}", HTTP_IF_NONE_MATCH=f'"{version}"'
    ).json()

    assert len(spy_looks) == 1
    assert [c["slots"][0]["tally"]["counted"] for c in delta["climbers"]] == [1]
    assert delta["since"] == version


def test_a_delta_from_an_older_version_than_the_process_board_has_every_change_since(
    owner, owner_api, driver, spy_looks
):
    """The client's version is older than the board this process holds (it came from another
    process, or the client polled less often): the delta holds the climbers changed since the
    client's version, those the process's board already had and those it had not."""
    ladder = started(owner, n_climbers=3)
    held = progress(owner_api, ladder).headers["ETag"].strip('"')
    jobs = claim_all(driver)
    push(driver, jobs[0], record=PERFECT)
    moved_on = progress(owner_api, ladder).headers["ETag"].strip('"')  # another viewer's read
    assert moved_on != held
    push(driver, jobs[1], record=PERFECT)
    spy_looks.clear()

    answer = owner_api.get(
        f"/api/ladders/{ladder.pk}/progress?since={held}", HTTP_IF_NONE_MATCH=f'"{held}"'
    )

    delta = answer.json()
    assert len(spy_looks) == 1
    assert [c["slots"][0]["tally"]["counted"] for c in delta["climbers"]] == [1, 1]
    whole = body(owner_api, ladder)
    assert delta["version"] == whole["version"] == answer.headers["ETag"].strip('"')
    assert delta["climbers"] == whole["climbers"][:2]


@pytest.fixture
def spy_looks(monkeypatch):
    from ladders import shared_progress

    real, looks = shared_progress._look, []

    def counted(*args, **kwargs):
        looks.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(shared_progress, "_look", counted)
    return looks


@pytest.mark.postgres  # one look and one batch are PostgreSQL's; SQLite reads them in several
def test_a_changed_poll_costs_the_token_one_look_and_its_climbers(
    owner, owner_api, driver, django_assert_max_num_queries
):
    """After a push, a poll with its version: the token's query, the one look (which also says
    the reader may see the ladder, so the ladder is not fetched first), the enabled provider
    budgets (which slots wait on one), and the changed climber computed again in a snapshot of
    its own (BEGIN, SET TRANSACTION, its climber row, its evidence in five statements, its
    reviews, COMMIT): as many whatever the board's size."""
    ladder = started(owner, n_climbers=3, n_rungs=3)
    version = progress(owner_api, ladder).headers["ETag"].strip('"')
    jobs = claim_all(driver)
    push(driver, jobs[1], record=PERFECT)

    with django_assert_max_num_queries(12):
        delta = owner_api.get(
            f"/api/ladders/{ladder.pk}/progress?since={version}",
            HTTP_IF_NONE_MATCH=f'"{version}"',
        ).json()
    assert [c["slots"][0]["tally"]["counted"] for c in delta["climbers"]] == [1]


def test_a_ladder_deleted_between_the_check_and_the_read_is_not_found(
    owner, owner_api, monkeypatch
):
    """The check found the reader may see the ladder and its board changed; the ladder is gone
    by the time the board is read: 404, as for any ladder that is not there."""
    from ladders import shared_progress
    from ladders.models import Ladder

    ladder = started(owner)
    token, under_way, digest = progress(owner_api, ladder).headers["ETag"].strip('"').split(".")
    changed = f'"{token}.{int(under_way) + 1}.{digest}"'  # the jobs under way differ: not a 304
    real_check = shared_progress.check

    def check_then_delete(*args):
        checked = real_check(*args)
        assert checked.look is not None and checked.unchanged is None
        Ladder.objects.filter(pk=ladder.pk).delete()
        shared_progress.reset()  # no board of it kept either
        return checked

    monkeypatch.setattr(shared_progress, "check", check_then_delete)
    answer = owner_api.get(f"/api/ladders/{ladder.pk}/progress", HTTP_IF_NONE_MATCH=changed)
    assert answer.status_code == 404


# Writes to the ladder by any path (the admin saves the model itself) ----------------------------


def test_a_ladder_renamed_in_the_admin_is_seen_by_the_next_read(owner, owner_api):
    """An edit counts whatever path makes it: the admin saves the ladder's row directly."""
    from ladders.models import Ladder

    ladder = started(owner)
    assert body(owner_api, ladder)["ladder"]["name"] != "renamed"
    row = Ladder.objects.get(pk=ladder.pk)
    row.name = "renamed"
    row.save()

    assert body(owner_api, ladder)["ladder"]["name"] == "renamed"


def test_a_rung_changed_in_the_admin_is_seen_by_the_next_read(owner, owner_api):
    from ladders.models import Rung

    ladder = started(owner)
    assert [r["runs"] for r in body(owner_api, ladder)["rungs"]] == [None, None]
    rung = Rung.objects.filter(ladder=ladder).order_by("position").first()
    rung.runs = 2
    rung.save()

    assert [r["runs"] for r in body(owner_api, ladder)["rungs"]] == [2, None]


def test_a_review_by_an_owner_given_the_ladder_in_the_admin_counts_at_the_next_read(
    owner, owner_api, driver, run_tasks, token_client
):
    """The ladder is given to another owner (in the admin); that owner's review of one of its
    runs counts as reviewed by whoever reads the ladder now."""
    from ladders.models import Ladder
    from tests.factories import UserFactory

    ladder = started(owner, n_climbers=1, n_rungs=1)
    [run] = work(driver, run_tasks, PERFECT)
    assert body(owner_api, ladder)["dispatch"]["runsUnreviewed"] == 1
    heir = UserFactory(username="heir", role="owner")
    row = Ladder.objects.get(pk=ladder.pk)
    row.owner = heir
    row.save()
    heir_api = token_client(heir)

    reviewed = heir_api.post(
        f"/api/runs/{run.pk}/reviews", {"aestheticRating": 4, "writeup": "ok"}, format="json"
    )

    assert reviewed.status_code == 201, reviewed.content
    assert body(heir_api, ladder)["dispatch"]["runsUnreviewed"] == 0


@pytest.mark.parametrize("how", ["from the ladder", "from the user's ladders"])
def test_a_reviewer_removed_in_the_admin_no_longer_counts_at_the_next_read(
    owner, owner_api, driver, run_tasks, reviewer, token_client, how
):
    """A reviewer's review counts while they read the ladder; removed (either side of the
    relation, as the admin's widgets do), their review no longer makes the run reviewed."""
    ladder = started(owner, n_climbers=1, n_rungs=1)
    ladder.reviewers.add(reviewer)
    [run] = work(driver, run_tasks, PERFECT)
    reviewed = token_client(reviewer).post(
        f"/api/runs/{run.pk}/reviews", {"aestheticRating": 4, "writeup": "ok"}, format="json"
    )
    assert reviewed.status_code == 201, reviewed.content
    assert body(owner_api, ladder)["dispatch"]["runsUnreviewed"] == 0

    if how == "from the ladder":
        ladder.reviewers.remove(reviewer)
    else:
        reviewer.reviewed_ladders.clear()

    assert body(owner_api, ladder)["dispatch"]["runsUnreviewed"] == 1


def test_a_write_outside_the_services_is_seen_by_the_next_read(owner, owner_api, driver):
    """An admin's ORM update or a ``psql`` session's UPDATE records its change as a service's
    write does (the database's triggers, ``loopweb.runs.capture``): the board read next shows
    it, on this process's kept board as on a fresh one."""
    ladder = started(owner, n_climbers=2)
    jobs = claim_all(driver)
    push(driver, jobs[0], record=PERFECT)
    before = progress(owner_api, ladder).json()
    assert before["climbers"][0]["slots"][0]["status"] == "passed"
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE runs_run SET validator_rating = 'broken' WHERE job_id = %s", [jobs[0].pk]
        )
    after = progress(owner_api, ladder).json()
    assert after["climbers"][0]["tally"]["passing"] == 0
    assert after["version"] != before["version"]


def test_a_run_in_the_cell_of_a_climber_not_yet_pinned_is_seen_by_the_next_read(
    owner, owner_api, driver
):
    """A gg climber that could not be resolved at Run resolves once its configuration is fixed;
    until a pass pins its cells they are no dispatch cell, and a run pushed to one must still
    be seen by the next read (a board kept up to date by its cells' changes, and a 304, missed
    it until the pass pinned the cell)."""
    from tests.factories import GGConfigurationFactory, gg_combination
    from tests.ladders.builders import outside

    configuration = GGConfigurationFactory(name="duo", roles=["planner", "coder"], created_by=owner)
    combo = gg_combination(configuration, {"planner": "thinker"})
    [version] = versions(1)
    ladder = make_ladder(owner, [version], [combo])
    services.start_dispatch(ladder=ladder)
    assert body(owner_api, ladder)["climbers"][0]["status"] == "blocked"
    fixed = owner_api.put(
        f"/api/gg-configurations/{configuration.pk}/",
        {"name": "duo", "roles": ["planner"]},
        format="json",
    )
    assert fixed.status_code == 200, fixed.json()
    seen = progress(owner_api, ladder)
    assert seen.json()["climbers"][0]["status"] == "running"

    combo.refresh_from_db()
    outside(driver, version, combo, PERFECT)

    again = progress(owner_api, ladder, HTTP_IF_NONE_MATCH=seen.headers["ETag"])
    assert again.status_code == 200
    assert again.json()["climbers"][0]["slots"][0]["status"] == "passed"
    assert body(owner_api, ladder)["climbers"][0]["slots"][0]["status"] == "passed"
