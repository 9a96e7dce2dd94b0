"""The admin console for ladders, dispatches, jobs and runs: inlines, filters, and Run / Stop
actions that call the same services as the browser and the API."""

import pytest
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from ladders import progress, selectors, services
from ladders.models import Dispatch
from loopweb.runs import services as run_services
from loopweb.runs.models import Job
from tests.console.helpers import text_of
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work


@pytest.fixture
def admin_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def worked(ladder, driver, run_tasks):
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=1)
    return ladder


def test_a_ladder_shows_its_rungs_inline(admin_client, ladder):
    page = admin_client.get(reverse("admin:ladders_ladder_change", args=[ladder.pk]))
    html = page.content.decode()
    assert page.status_code == 200
    for rung in ladder.rungs.all():
        assert rung.rung_id in html


def test_a_dispatch_shows_its_climbers(admin_client, worked):
    dispatch = Dispatch.objects.get(ladder=worked)
    page = admin_client.get(reverse("admin:ladders_dispatch_change", args=[dispatch.pk]))
    assert page.status_code == 200
    assert "aider|m1|acme" in page.content.decode()
    listing = admin_client.get(reverse("admin:ladders_dispatch_changelist"), {"status": "running"})
    assert dispatch.dispatch_id in listing.content.decode()


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ({"status__exact": "queued"}, 2),
        ({"status__exact": "completed"}, 2),
        ({"origin_kind": "ladder"}, 4),
        ({"origin_kind": "manual"}, 0),
    ],
)
def test_jobs_filter_by_status_and_origin(admin_client, worked, query, shown):
    page = admin_client.get(reverse("admin:runs_job_changelist"), query)
    assert page.status_code == 200
    assert page.context["cl"].result_count == shown


@pytest.mark.parametrize(
    ("query", "shown"),
    [
        ({"outcome__exact": "completed"}, 2),
        ({"outcome__exact": "hung"}, 0),
        ({"validator_rating__exact": "flawless"}, 2),
        ({"validator_rating__exact": "broken"}, 0),
        ({"origin_kind": "ladder"}, 2),
        ({"origin_kind": "outside"}, 0),
    ],
)
def test_runs_filter_by_outcome_rating_and_origin(admin_client, worked, query, shown):
    page = admin_client.get(reverse("admin:runs_run_changelist"), query)
    assert page.status_code == 200
    assert page.context["cl"].result_count == shown


def test_runs_filter_by_aesthetic_rating(admin_client, owner, worked):
    run = run_services.Run.objects.filter(outcome="completed").first()
    run_services.review_run(run=run, reviewer=owner, aesthetic_rating=4, writeup="")
    page = admin_client.get(reverse("admin:runs_run_changelist"), {"reviews__aesthetic_rating": 4})
    assert page.context["cl"].result_count == 1


def act(admin_client, action, ladders, **extra):
    return admin_client.post(
        reverse("admin:ladders_ladder_changelist"),
        {"action": action, ACTION_CHECKBOX_NAME: [ladder.pk for ladder in ladders], **extra},
        follow=True,
    )


def test_the_run_and_stop_actions_call_the_services(admin_client, owner, ladder):
    empty = make_ladder(owner, versions(1, prefix="x"), [], name="empty")
    page = act(admin_client, "run_ladders", [ladder, empty])
    text = text_of(page).lower()  # the admin capitalises its messages
    assert "platformer: dispatch started." in text
    assert "empty: add a combination group or a combination before running." in text
    assert Dispatch.objects.get(ladder=ladder).status == "running"
    page = act(admin_client, "stop_ladders", [ladder])
    assert "platformer: stopped, 2 job(s) cancelled." in text_of(page).lower()
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"


def test_stop_and_cancel_running_asks_first_in_the_admin(admin_client, owner, driver):
    ladder = make_ladder(owner, versions(1, prefix="y"), climbers(2, prefix="y"), name="busy")
    services.start_dispatch(ladder=ladder)
    [job] = run_services.claim_jobs(driver=driver, limit=1)
    run_services.report_status(job_id=job.pk, driver=driver, status="running")
    confirm = act(admin_client, "stop_and_cancel_running", [ladder])
    assert "busy: 1 dispatched, starting or running job will be cancelled" in text_of(confirm)
    assert Dispatch.objects.get(ladder=ladder).status == "running"
    done = act(admin_client, "stop_and_cancel_running", [ladder], confirm="yes")
    assert "busy: stopped, 2 job(s) cancelled." in text_of(done).lower()


def test_stop_and_cancel_running_asks_from_the_dispatches_without_a_board(
    admin_client, owner, driver, run_tasks, monkeypatch
):
    """The confirmation reads each dispatch's status and jobs under way, never a whole board: a
    dispatch needing attention is running, a ladder never run has nothing to stop."""
    attention = make_ladder(
        owner, versions(1, prefix="na"), climbers(1, prefix="na"), name="stuck", retryCount=0
    )
    services.start_dispatch(ladder=attention)
    work(driver, run_tasks, "infrastructure")
    idle = make_ladder(owner, versions(1, prefix="ni"), climbers(1, prefix="ni"), name="idle")
    assert selectors.ladder_progress(attention)["dispatch"]["status"] == "needsAttention"

    def no_board(*args, **kwargs):
        raise AssertionError("the confirmation computed a board")

    monkeypatch.setattr("ladders.progress.live", no_board)
    monkeypatch.setattr("ladders.shared_progress.read", no_board)
    confirm = act(admin_client, "stop_and_cancel_running", [attention, idle])
    assert "stuck: 0 dispatched, starting or running jobs will be cancelled" in text_of(confirm)
    assert "idle: no running dispatch" in text_of(confirm)


def test_stop_and_cancel_running_counts_every_ladders_jobs_in_one_query(
    admin_client, owner, driver
):
    """Asking about three running ladders costs what asking about one does, and each ladder's
    count is its own jobs under way."""
    busy = []
    for i in range(3):
        ladder = make_ladder(owner, versions(1, prefix=f"q{i}"), climbers(2, prefix=f"q{i}"))
        services.start_dispatch(ladder=ladder)
        busy.append(ladder)
    for job in run_services.claim_jobs(driver=driver, limit=3):
        run_services.report_status(job_id=job.pk, driver=driver, status="running")
    act(admin_client, "stop_and_cancel_running", busy[:1])  # the session and caches warm

    with CaptureQueriesContext(connection) as one:
        act(admin_client, "stop_and_cancel_running", busy[:1])
    with CaptureQueriesContext(connection) as three:
        confirm = act(admin_client, "stop_and_cancel_running", busy)

    assert len(three) == len(one)
    assert "Yes, stop and cancel 3 running jobs" in confirm.content.decode()
    own = {
        b.pk: Job.objects.filter(origin__startswith=f"ladder:{b.pk}/", status="running").count()
        for b in busy
    }
    assert sum(own.values()) == 3
    assert progress.under_way_of(own) == own


def test_a_dispatch_is_read_only_in_the_admin(admin_client, worked):
    dispatch = Dispatch.objects.get(ladder=worked)
    assert admin_client.get(reverse("admin:ladders_dispatch_add")).status_code == 403
    url = reverse("admin:ladders_dispatch_change", args=[dispatch.pk])
    page = admin_client.get(url)
    html = page.content.decode()
    assert page.status_code == 200
    assert 'name="status"' not in html and 'name="snapshot"' not in html
    assert 'name="ladder"' not in html
    assert f'href="{reverse("console:board", args=[worked.pk])}"' in html
    refused = admin_client.post(url, {"status": "finished"})
    assert refused.status_code == 403
    dispatch.refresh_from_db()
    assert dispatch.status == "running"
    listing = admin_client.get(reverse("admin:ladders_dispatch_changelist")).content.decode()
    assert "Add dispatch" not in listing


def test_the_admin_uses_the_consoles_status_words(admin_client, owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1, prefix="aw"), climbers(1, prefix="aw"), retryCount=0)
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, "infrastructure")
    for name in ("admin:ladders_dispatch_changelist", "admin:ladders_ladder_changelist"):
        assert "Needs attention" in text_of(admin_client.get(reverse(name)))
    dispatch = Dispatch.objects.get(ladder=ladder)
    page = admin_client.get(reverse("admin:ladders_dispatch_change", args=[dispatch.pk]))
    assert "Needs attention" in text_of(page)


def test_the_dispatch_actions_call_the_services(admin_client, owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1, prefix="ad"), climbers(2, prefix="ad"), retryCount=0)
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, "infrastructure")
    dispatch = Dispatch.objects.get(ladder=ladder)
    url = reverse("admin:ladders_dispatch_changelist")
    retried = admin_client.post(
        url, {"action": "retry_blocked", ACTION_CHECKBOX_NAME: [dispatch.pk]}, follow=True
    )
    assert "retried 2 climber(s)" in text_of(retried)
    stopped = admin_client.post(
        url, {"action": "stop_dispatches", ACTION_CHECKBOX_NAME: [dispatch.pk]}, follow=True
    )
    assert "stopped, 2 job(s) cancelled" in text_of(stopped)
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"
