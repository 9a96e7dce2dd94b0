"""Seed 004: "The run's stored rating folds in every reviewer's checklist overrides, so the gate
never reads it." Overriding checklist items moves a run's stored rating and never a slot's
tally, status or the ladder's progress. Who may override: who may review (SPEC §1)."""

import pytest

from ladders import services
from loopweb.runs.models import ChecklistOverride, Role, Run
from tests.factories import CaseVersionFactory, CombinationFactory, UserFactory
from tests.ladders.builders import make_ladder, progress_of, work
from tests.runs.helpers import finish, hand_job

pytestmark = pytest.mark.django_db

PASSABLE = {  # 60 %, criticals pass
    "checklist": {"starts": True, "jump": True, "score": True, "music": False, "pause": False},
    "toolchain": {"build": "ok", "loaded": True},
}
FLAWLESS = {
    "checklist": {"starts": True, "jump": True, "score": True, "music": True, "pause": True},
    "toolchain": {"build": "ok", "loaded": True},
}


def climbed(owner, reviewer, driver, run_tasks, record, floor):
    ladder = make_ladder(
        owner,
        [CaseVersionFactory()],
        [CombinationFactory()],
        reviewers=[reviewer.pk],
        gate={"floor": floor},
    )
    services.start_dispatch(ladder=ladder)
    [run] = work(driver, run_tasks, record)
    return ladder, run


def board(ladder) -> list:
    return progress_of(ladder)["climbers"]


def test_overrides_that_lift_a_failing_run_never_pass_its_slot(
    owner, reviewer, driver, run_tasks, token_client
):
    ladder, run = climbed(owner, reviewer, driver, run_tasks, PASSABLE, floor="great")
    before = board(ladder)
    assert before[0]["slots"][0]["status"] == "failed"

    for item in ("music", "pause"):
        response = token_client(reviewer).post(
            f"/api/runs/{run.pk}/overrides", {"item": item, "passed": True}, format="json"
        )
        assert response.status_code == 201, response.content
    run_tasks()

    run.refresh_from_db()
    assert (run.validator_rating, run.stored_rating) == ("passable", "flawless")
    assert board(ladder) == before


def test_overrides_that_sink_a_passing_run_never_fail_its_slot(
    owner, reviewer, driver, run_tasks, token_client
):
    ladder, run = climbed(owner, reviewer, driver, run_tasks, FLAWLESS, floor="flawless")
    before = board(ladder)
    assert before[0]["slots"][0]["status"] == "passed"

    for item in ("starts", "jump", "score", "music", "pause"):
        token_client(owner).post(
            f"/api/runs/{run.pk}/overrides", {"item": item, "passed": False}, format="json"
        )
    run_tasks()

    run.refresh_from_db()
    assert (run.validator_rating, run.stored_rating) == ("flawless", "broken")
    assert board(ladder) == before
    assert before[0]["tally"] == board(ladder)[0]["tally"]


def test_a_ladders_owner_and_reviewer_override_the_runs_its_slots_read(
    owner, reviewer, driver, run_tasks, token_client
):
    """The run comes from another owner's hand launch: the ladder reads it all the same."""
    launcher = UserFactory(username="lena", role=Role.OWNER)
    version, combination = CaseVersionFactory(), CombinationFactory()
    run = finish(driver, hand_job(launcher, version, combination), record=PASSABLE)
    ladder = make_ladder(owner, [version], [combination], reviewers=[reviewer.pk])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks)

    for user, item in ((owner, "music"), (reviewer, "pause"), (launcher, "score")):
        response = token_client(user).post(
            f"/api/runs/{run.pk}/overrides", {"item": item, "passed": True}, format="json"
        )
        assert response.status_code == 201, (user.username, response.content)
    run.refresh_from_db()
    assert run.stored_rating == "flawless"


def test_the_owner_and_reviewer_of_another_ladder_are_told_the_run_does_not_exist(
    owner, reviewer, driver, run_tasks, token_client
):
    version, combination = CaseVersionFactory(), CombinationFactory()
    run = finish(driver, hand_job(owner, version, combination), record=PASSABLE)
    other_owner = UserFactory(username="otto", role=Role.OWNER)
    other_reviewer = UserFactory(username="ruth", role=Role.REVIEWER)
    make_ladder(other_owner, [CaseVersionFactory()], [combination], reviewers=[other_reviewer.pk])
    Run.objects.filter(pk=run.pk).update(published=True)  # they read it

    for user in (other_owner, other_reviewer):
        api = token_client(user)
        assert api.get(f"/api/runs/{run.pk}/overrides").status_code == 200
        response = api.post(
            f"/api/runs/{run.pk}/overrides", {"item": "pause", "passed": True}, format="json"
        )
        assert response.status_code == 404, user.username
    assert not ChecklistOverride.objects.exists()
