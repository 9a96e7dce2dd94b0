"""What the engine announces about a dispatch's life (``ladders.lifecycle``), for the apps that
keep its history and notify others: each announcement once, with who pressed the button, inside
the transaction that made the change."""

import contextlib

import pytest

from ladders import lifecycle, services
from ladders.models import Dispatch, DispatchClimber, DispatchStatus
from tests.factories import UserFactory
from tests.ladders.builders import climbers, config, make_ladder, rung, versions, work
from tests.runs.helpers import BROKEN


@contextlib.contextmanager
def heard(signal):
    calls = []

    def receiver(sender, **kwargs):
        calls.append(kwargs)

    signal.connect(receiver, weak=False)
    try:
        yield calls
    finally:
        signal.disconnect(receiver)


def test_run_and_stop_say_who_pressed_them_and_what_the_stop_cancelled(owner, driver):
    ladder = make_ladder(owner, versions(2), climbers(2))
    with heard(lifecycle.dispatch_started) as started:
        first = services.start_dispatch(ladder=ladder, by=owner)
    assert [(c["dispatch"].pk, c["by"], c["previous"]) for c in started] == [
        (first.pk, owner, None)
    ]
    stopper = UserFactory(username="stan", is_staff=True)
    with heard(lifecycle.dispatch_ended) as ended:
        cancelled = services.stop_dispatch(ladder=ladder, by=stopper)
    [call] = ended
    assert call["by"] == stopper and call["cancelled"] == cancelled == 2
    assert call["cancel_running"] is False
    assert call["dispatch"].status == DispatchStatus.STOPPED
    assert call["final"].dispatch_id == first.pk
    stored = Dispatch.objects.get(pk=first.pk)
    assert (stored.started_by, stored.stopped_by) == (owner, stopper)

    old_id = stored.dispatch_id
    with heard(lifecycle.dispatch_started) as started:
        services.start_dispatch(ladder=ladder, by=stopper)
    assert started[0]["previous"] == old_id
    again = Dispatch.objects.get(pk=first.pk)
    assert (again.started_by, again.stopped_by) == (stopper, None)


def test_a_finished_dispatch_is_announced_once_with_no_one_as_its_stopper(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(2))
    services.start_dispatch(ladder=ladder, by=owner)
    with heard(lifecycle.dispatch_ended) as ended:
        work(driver, run_tasks)
        services.run_launch_pass(ladder_id=ladder.pk)  # a later pass finds it ended already
    [call] = ended
    assert call["dispatch"].status == DispatchStatus.FINISHED
    assert (call["by"], call["cancelled"]) == (None, 0)
    assert call["final"].slot_counts["passed"] == 4


def test_a_block_is_announced_by_the_pass_that_finds_it_and_again_after_a_retry(
    owner, driver, run_tasks
):
    ladder = make_ladder(owner, versions(2), climbers(2), retryCount=0)
    services.start_dispatch(ladder=ladder, by=owner)
    with heard(lifecycle.climbers_blocked) as blocked:
        work(driver, run_tasks, lambda job: "infrastructure")
        services.run_launch_pass(ladder_id=ladder.pk)  # still blocked: nothing new to say
    announced = [
        (row.combination_key, standing.blocked_reason)
        for call in blocked
        for row, standing in call["climbers"]
    ]
    assert sorted(announced) == sorted(
        (c.combination_key, "failing") for c in ladder_climbers(ladder)
    )
    assert {c.blocked for c in ladder_climbers(ladder)} == {"failing"}

    key = ladder_climbers(ladder)[0].combination_key
    with heard(lifecycle.climber_retried) as retried, heard(lifecycle.climbers_blocked) as again:
        services.retry_climber(ladder=ladder, combination_key=key, by=owner)
        assert (
            DispatchClimber.objects.get(dispatch__ladder=ladder, combination_key=key).blocked == ""
        )
        work(driver, run_tasks, lambda job: "infrastructure")
    assert [(c["climber"].combination_key, c["by"]) for c in retried] == [(key, owner)]
    assert [row.combination_key for call in again for row, _ in call["climbers"]] == [key]


def test_a_rung_failed_by_the_gate_is_no_block(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(1))
    services.start_dispatch(ladder=ladder)
    with heard(lifecycle.climbers_blocked) as blocked:
        work(driver, run_tasks, BROKEN)
    assert blocked == []


def test_configuration_changes_say_who_made_them(owner, staff):
    steps = versions(2)
    with heard(lifecycle.ladder_configured) as configured:
        ladder = make_ladder(owner, steps, climbers(1))
        data = config(name="renamed", rungs=[rung(v) for v in steps])
        services.save_ladder(owner=owner, data=data, ladder=ladder, by=staff)
        order = list(reversed(ladder.rungs.values_list("rung_id", flat=True)))
        services.reorder_rungs(ladder=ladder, order=order, by=staff)
    assert [(c["ladder"].pk, c["by"], c["change"]) for c in configured] == [
        (ladder.pk, owner, "created"),
        (ladder.pk, staff, "edited"),
        (ladder.pk, staff, "rungs reordered"),
    ]


@pytest.mark.django_db(transaction=True)
def test_what_a_receiver_writes_rolls_back_with_the_change(owner):
    """The announcement is made inside the transaction: a receiver that fails undoes the Run."""
    ladder = make_ladder(owner, versions(1), climbers(1))

    def refuse(sender, **kwargs):
        raise RuntimeError("receiver failed")

    lifecycle.dispatch_started.connect(refuse, weak=False)
    try:
        with pytest.raises(RuntimeError):
            services.start_dispatch(ladder=ladder, by=owner, run_pass=False)
    finally:
        lifecycle.dispatch_started.disconnect(refuse)
    assert not Dispatch.objects.filter(ladder=ladder).exists()


def ladder_climbers(ladder):
    return list(DispatchClimber.objects.filter(dispatch__ladder=ladder).order_by("position"))
