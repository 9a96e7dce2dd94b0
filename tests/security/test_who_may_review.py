"""Who may review a run (SPEC §1): the owner of the job that produced it, the owner of a ladder
whose slots read it, or a reviewer such a ladder is shared with. Reading a run is not reviewing
it: anyone else gets a 404, and nothing is recorded (no review, no ``referee`` signal)."""

import pytest
from django.test import Client

from ladders import services
from loopweb.runs.models import Review, Role, Run
from signals_app.models import Signal
from tests.factories import CaseVersionFactory, CombinationFactory, UserFactory
from tests.ladders.builders import make_ladder, work
from tests.runs.helpers import finish, hand_job

pytestmark = pytest.mark.django_db

REJECT = {"aestheticRating": 1, "writeup": "x", "verdict": "reject"}


@pytest.fixture
def published_run(owner, driver) -> Run:
    """The owner's hand-launched run, published: every signed-in user may read it."""
    run = finish(driver, hand_job(owner, CaseVersionFactory(), CombinationFactory()))
    Run.objects.filter(pk=run.pk).update(published=True)
    return run


def _nothing_recorded(run: Run) -> None:
    assert not Review.objects.filter(run=run).exists()
    assert not Signal.objects.filter(run=run, name="referee").exists()


def test_another_owner_cannot_review_a_published_run_and_change_its_outcome(
    published_run, owner_api, outsider_api
):
    before = owner_api.get(f"/api/runs/{published_run.pk}/outcome").json()
    assert outsider_api.get(f"/api/runs/{published_run.pk}/").status_code == 200  # reads it
    response = outsider_api.post(f"/api/runs/{published_run.pk}/reviews", REJECT, format="json")
    assert response.status_code == 404
    _nothing_recorded(published_run)
    assert owner_api.get(f"/api/runs/{published_run.pk}/outcome").json() == before


def test_a_reviewer_shared_on_nothing_cannot_review_a_published_run(published_run, reviewer_api):
    response = reviewer_api.post(f"/api/runs/{published_run.pk}/reviews", REJECT, format="json")
    assert response.status_code == 404
    _nothing_recorded(published_run)


def test_the_console_review_form_refuses_a_stranger_too(published_run, outsider):
    browser = Client()
    browser.force_login(outsider)
    response = browser.post(
        f"/runs/{published_run.pk}/review",
        {"aesthetic-rating": "1", "writeup": "x", "verdict": "reject"},
    )
    assert response.status_code == 404
    _nothing_recorded(published_run)


def test_the_owner_of_the_job_reviews_its_run(published_run, owner_api):
    response = owner_api.post(f"/api/runs/{published_run.pk}/reviews", REJECT, format="json")
    assert response.status_code == 201
    assert Signal.objects.filter(run=published_run, name="referee").count() == 1


def test_a_ladders_owner_and_its_reviewers_review_the_runs_its_slots_read(
    owner, reviewer, driver, run_tasks, token_client
):
    """The runs come from another owner's hand launch: the ladder reads them all the same."""
    launcher = UserFactory(username="lena", role=Role.OWNER)
    version, combination = CaseVersionFactory(), CombinationFactory()
    run = finish(driver, hand_job(launcher, version, combination))
    ladder = make_ladder(owner, [version], [combination], reviewers=[reviewer.pk])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks)
    for user in (owner, reviewer):
        response = token_client(user).post(f"/api/runs/{run.pk}/reviews", REJECT, format="json")
        assert response.status_code == 201, (user.username, response.content)
    assert Review.objects.filter(run=run).count() == 2


def test_staff_who_are_none_of_those_cannot_review(published_run, staff, token_client):
    response = token_client(staff).post(
        f"/api/runs/{published_run.pk}/reviews", REJECT, format="json"
    )
    assert response.status_code == 404
    _nothing_recorded(published_run)
