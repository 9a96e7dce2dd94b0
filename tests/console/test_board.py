"""The progress board: header, bar, grid, Needs attention, and Run / Stop / Retry from forms."""

import pytest
from django.urls import reverse

from ladders import services
from ladders.models import Dispatch
from loopweb.runs import services as run_services
from loopweb.runs.models import Job, ModelEntry
from tests.console.helpers import text_of
from tests.factories import CombinationFactory
from tests.ladders.builders import PERFECT, climbers, make_ladder, queued, versions, work


def board_url(ladder) -> str:
    return reverse("console:board", args=[ladder.pk])


def refresh_url(ladder) -> str:
    return reverse("console:board-refresh", args=[ladder.pk])


def test_a_ladder_not_run_yet_shows_its_configuration_and_run(owner_client, ladder):
    page = owner_client.get(board_url(ladder))
    assert page.status_code == 200
    text = text_of(page)
    assert "Not run yet" in text
    assert "Pass when at least 1 run rated scuffed or better" in text
    assert "Rung by rung" in text
    assert "the account's default (20 runs under way at a time)" in text
    assert "1 automatic retry per run" in text
    assert "step-1@1" in text and "step-2@1" in text
    assert "m1 via aider (acme)" in text
    html = page.content.decode()
    assert 'id="run-button"' in html and 'hx-trigger="every' not in html  # nothing polls


def test_a_running_board_shows_the_grid_the_bar_and_refreshes_itself(
    owner_client, ladder, driver, run_tasks
):
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=1)
    page = owner_client.get(board_url(ladder))
    html = page.content.decode()
    text = text_of(page)
    assert "Running" in text
    assert "2 of 4 runs done" in text and "2 under way" in text
    assert 'id="run-button" disabled' in html
    assert 'id="stop-button"' in html and 'id="stop-cancel-button"' in html
    assert f'hx-get="{refresh_url(ladder)}"' in html and "hx-trigger=" in html
    # climber 1: rung 1 passed, rung 2 running (current)
    assert 'id="slot-0-0" class="slot slot-passed' in html
    assert 'id="slot-0-1" class="slot slot-running is-current' in html
    assert "Running rung 2" in text
    # The current rung's tally, shown on hover or focus.
    assert 'aria-describedby="slot-0-1-tip"' in html
    assert "Passing / required 0 / 1" in text
    assert "Under way 1" in text


def test_the_refresh_endpoint_answers_204_while_nothing_changed(
    owner_client, ladder, driver, run_tasks
):
    services.start_dispatch(ladder=ladder)
    first = owner_client.get(refresh_url(ladder))
    assert first.status_code == 200
    html = first.content.decode()
    assert html.lstrip().startswith('<section id="board"')
    version = html.split('"v": "')[1].split('"')[0]
    assert owner_client.get(refresh_url(ladder), {"v": version}).status_code == 204
    work(driver, run_tasks, PERFECT, rounds=1)
    changed = owner_client.get(refresh_url(ladder), {"v": version})
    assert changed.status_code == 200
    assert "2 of 4 runs done" in text_of(changed)


def test_the_board_stops_polling_once_the_dispatch_ends(owner_client, ladder, driver, run_tasks):
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    page = owner_client.get(refresh_url(ladder))
    html = page.content.decode()
    assert "Finished" in text_of(page)
    assert "hx-trigger" not in html
    assert 'id="run-button"' in html and 'id="run-button" disabled' not in html
    assert "4 of 4 runs done" in text_of(page)


def test_run_is_a_csrf_protected_form_that_starts_a_dispatch(owner_client, ladder):
    url = reverse("console:run", args=[ladder.pk])
    assert owner_client.post(url).status_code == 403  # no CSRF token
    response = owner_client.submit(url)
    assert response.status_code == 302 and response["Location"] == board_url(ladder)
    assert Dispatch.objects.get(ladder=ladder).status == "running"
    assert len(queued(ladder)) == 2
    page = owner_client.get(board_url(ladder))
    assert "Run started" in text_of(page)
    # Run is unavailable while the dispatch runs; the service says why.
    again = owner_client.submit(url, follow=True)
    assert "A dispatch of this ladder is running" in text_of(again)


def test_run_refused_by_the_service_says_why(owner_client, owner):
    empty = make_ladder(owner, versions(1, prefix="e"), [], name="no climbers")
    page = owner_client.submit(reverse("console:run", args=[empty.pk]), follow=True)
    assert "Run refused. Add a combination group or a combination before running." in text_of(page)


def test_stop_reports_how_many_jobs_it_cancelled(owner_client, ladder):
    services.start_dispatch(ladder=ladder)
    page = owner_client.submit(reverse("console:stop", args=[ladder.pk]), follow=True)
    text = text_of(page)
    assert "Dispatch stopped: 2 jobs cancelled." in text
    assert "Stopped" in text
    assert Dispatch.objects.get(ladder=ladder).status == "stopped"


def test_stop_and_cancel_running_asks_first_with_the_count(owner_client, owner, driver):
    ladder = make_ladder(owner, versions(1, prefix="s"), climbers(3, prefix="s"))
    services.start_dispatch(ladder=ladder)
    claimed = run_services.claim_jobs(driver=driver, limit=2)
    for job in claimed:
        run_services.report_status(job_id=job.pk, driver=driver, status="running")
    board = owner_client.get(board_url(ladder)).content.decode()
    assert "lets the 2 started jobs (dispatched, starting or running) finish" in board
    url = reverse("console:stop-cancel-running", args=[ladder.pk])
    confirm = owner_client.get(url)
    text = text_of(confirm)
    assert "This will cancel 2 jobs that are dispatched, starting or running." in text
    assert "The 1 queued or pending job is cancelled too" in text
    assert Dispatch.objects.get(ladder=ladder).status == "running"  # asking changes nothing
    assert owner_client.post(url).status_code == 403  # the confirmation is a CSRF-checked form
    done = owner_client.submit(url, follow=True)
    assert "Dispatch stopped: 3 jobs cancelled, including those dispatched" in text_of(done)
    assert not Job.objects.filter(status__in=["queued", "pending", "running"]).exists()


def test_a_blocked_climber_shows_needs_attention_and_retry_relaunches_it(
    owner_client, owner, driver, run_tasks
):
    ladder = make_ladder(owner, versions(2, prefix="b"), climbers(1, prefix="b"), retryCount=1)
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, "infrastructure")
    page = owner_client.get(board_url(ladder))
    text = text_of(page)
    assert "Needs attention" in text
    assert "Blocked at rung 1: failing" in text
    assert "A launch used up its 1 automatic retry with no run." in text
    assert "Recorded failure: Attempt 2 of 2 ended infrastructure" in text
    assert "Fix: fix the cause, then Retry." in text
    assert 'id="retry-0"' in page.content.decode()
    assert not queued(ladder)
    retried = owner_client.submit(
        reverse("console:retry", args=[ladder.pk]), {"climber": "aider|b1|acme"}, follow=True
    )
    text = text_of(retried)
    assert "Retried b1 via aider (acme)" in text
    assert "Running rung 1" in text and "Needs attention" not in text
    assert len(queued(ladder)) == 1


def test_an_unrated_block_names_its_fix_and_offers_no_retry(owner_client, owner, driver, run_tasks):
    # The rung pins a version the backend has not ingested: completed runs stay unrated.
    combo = CombinationFactory(model="u1")
    versions(1)  # the case exists, its version 9 does not
    pin = {"case": "step-1", "version": "9", "variant": "default", "engine": None, "runs": None}
    ladder = make_ladder(owner, [], [combo], rungs=[pin])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    page = owner_client.get(board_url(ladder))
    text = text_of(page)
    assert "Blocked at rung 1: unrated" in text
    assert "Fix: re-push the runs, or Stop." in text
    assert 'id="retry-0"' not in page.content.decode()


def test_an_unlaunchable_climber_shows_the_cause(owner_client, owner, run_tasks):
    combo = CombinationFactory(model="ghost", catalog=False)
    ModelEntry.objects.create(name="ghost", provider="acme", launchable=False)
    ladder = make_ladder(owner, versions(1, prefix="g"), [combo])
    services.start_dispatch(ladder=ladder)
    text = text_of(owner_client.get(board_url(ladder)))
    assert "Blocked at rung 1: unlaunchable" in text
    assert "The combination cannot be launched: " in text
    assert "Fix: fix the cause, then Retry." in text


@pytest.mark.parametrize("name", ["board", "board-refresh", "queue", "ladder-edit"])
def test_an_outsider_gets_404_on_every_ladder_page(outsider_client, ladder, name):
    assert outsider_client.get(reverse(f"console:{name}", args=[ladder.pk])).status_code == 404


@pytest.mark.parametrize(
    "name", ["run", "stop", "stop-cancel-running", "retry", "ladder-delete", "ladder-edit"]
)
def test_an_outsider_gets_404_on_every_action(outsider_client, ladder, name):
    response = outsider_client.submit(reverse(f"console:{name}", args=[ladder.pk]))
    assert response.status_code == 404


def test_a_reviewer_reads_the_board_without_its_controls(reviewer_client, ladder):
    services.start_dispatch(ladder=ladder)
    page = reviewer_client.get(board_url(ladder))
    assert page.status_code == 200
    html = page.content.decode()
    assert "You review this ladder" in text_of(page)
    for control in ("run-button", "stop-button", "stop-cancel-button", "edit-link"):
        assert f'id="{control}"' not in html


@pytest.mark.parametrize(
    "name", ["run", "stop", "stop-cancel-running", "retry", "ladder-delete", "ladder-edit"]
)
def test_a_reviewer_may_not_run_stop_or_edit(reviewer_client, ladder, name):
    services.start_dispatch(ladder=ladder)
    response = reviewer_client.submit(reverse(f"console:{name}", args=[ladder.pk]))
    assert response.status_code == 403
    assert Dispatch.objects.get(ladder=ladder).status == "running"


def test_signed_out_visitors_are_sent_to_sign_in(client, ladder):
    response = client.get(board_url(ladder))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("console:login"))


def test_a_board_polling_after_sign_out_sends_the_page_to_sign_in(client, ladder):
    response = client.get(
        refresh_url(ladder),
        HTTP_HX_REQUEST="true",
        HTTP_HX_CURRENT_URL=f"http://testserver{board_url(ladder)}",
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('console:login')}?next={board_url(ladder)}"


def test_the_board_page_is_its_template_with_the_rows_in_place(
    owner, owner_client, ladder, driver, run_tasks, rf, monkeypatch
):
    """The rows are put into the rendered page once, where the template shows them: the page is
    the one the template renders with the rows in its context."""
    import re

    from django.template.loader import render_to_string
    from django.utils.csp import LazyNonce

    from loopweb.console.views import board as views

    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT, rounds=1)
    # Both renders show one board: a board read inside the test's transaction is named by the
    # database's snapshot then, which other connections' transactions move on.
    board = views.shared_progress.read(ladder)
    monkeypatch.setattr(views.shared_progress, "read", lambda *args, **kwargs: board)
    page = owner_client.get(board_url(ladder)).content.decode()

    request = rf.get(board_url(ladder))
    request.user = owner
    request._csp_nonce = LazyNonce()  # as ContentSecurityPolicyMiddleware gives every request
    context = views.with_rows(views.board_context(request, ladder))
    expected = render_to_string("console/board.html", {**context, "slot": None}, request)

    def unmasked(html: str) -> str:  # each render masks its CSRF token anew, and has its nonce
        html = re.sub(r'nonce="[^"]*"', 'nonce=""', html)
        return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", html)

    assert 'id="slot-0-0"' in page
    assert unmasked(page) == unmasked(expected)
