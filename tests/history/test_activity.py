"""Who pressed Run, Stop, Stop and cancel running and Retry, and who changed the configuration,
and when: on the board and, read-only, in the admin."""

from django.test import Client

from ladders import services
from ladders.models import Ladder
from loopweb.history.models import Activity, DispatchRecord
from tests.console.helpers import Browser, text_of
from tests.ladders.builders import climbers, config, make_ladder, rung, versions, work


def actions(ladder):
    return [
        (a.action, a.by_name, a.detail)
        for a in Activity.objects.filter(ladder=ladder).order_by("at", "id")
    ]


def test_every_button_and_edit_is_kept_with_who_pressed_it(owner, staff, driver, run_tasks):
    steps = versions(2)
    ladder = make_ladder(owner, steps, climbers(2), retryCount=0)
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, lambda job: "infrastructure")  # both climbers block
    key = ladder.dispatch.climbers.first().combination_key
    services.retry_climber(ladder=ladder, combination_key=key, by=staff)
    services.stop_dispatch(ladder=ladder, by=owner)
    data = config(rungs=[rung(v) for v in steps], combinations=[c.pk for c in climbers(1, "z")])
    services.save_ladder(owner=owner, data=data, ladder=Ladder.objects.get(pk=ladder.pk), by=staff)
    order = list(reversed(ladder.rungs.values_list("rung_id", flat=True)))
    services.reorder_rungs(ladder=ladder, order=order, by=owner)
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, cancel_running=True, by=staff)
    assert actions(ladder) == [
        ("created", "olive", {}),
        ("run", "olive", {}),
        ("retry", "stella", {"climber": key}),
        ("stop", "olive", {"cancelled": 1}),
        ("edited", "stella", {}),
        ("rungsReordered", "olive", {}),
        ("run", "olive", {}),
        ("stopCancelRunning", "stella", {"cancelled": 1}),
    ]
    board = text_of(Browser(owner).get(f"/ladders/{ladder.pk}/standing"))
    assert "stella pressed Stop and cancel running (1 job cancelled)" in board
    assert f"stella retried {key}" in board


def test_a_finish_is_no_one_pressing_stop(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks)
    assert [a for a, _, _ in actions(ladder)] == ["created", "run"]


def test_the_admin_shows_records_and_activity_read_only(owner, staff, run_tasks):
    ladder = make_ladder(owner, versions(1), climbers(1))
    services.start_dispatch(ladder=ladder, by=owner)
    services.stop_dispatch(ladder=ladder, by=owner)
    run_tasks()
    client = Client()
    client.force_login(staff)
    record = DispatchRecord.objects.get(ladder=ladder)
    activity = Activity.objects.filter(ladder=ladder).first()
    for path in ("dispatchrecord", "activity"):
        listing = client.get(f"/admin/history/{path}/")
        assert listing.status_code == 200
        assert client.get(f"/admin/history/{path}/add/").status_code == 403
    page = client.get(f"/admin/history/dispatchrecord/{record.pk}/change/")
    assert page.status_code == 200 and record.dispatch_id in page.content.decode()
    assert b'name="_save"' not in page.content
    assert client.post(f"/admin/history/activity/{activity.pk}/delete/").status_code == 403
    assert Activity.objects.filter(pk=activity.pk).exists()
