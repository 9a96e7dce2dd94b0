"""SPEC §5, "Triggers": a pass is enqueued as a background task with every trigger, and a queued
pass that finds a later pass of the same ladder waiting returns at once (the later one sees
everything it would have). Another ladder's pass never stands in for it."""

import pytest
from django_tasks_db.models import DBTaskResult

from ladders.tasks import launch_pass
from loopweb import tasking
from tests.ladders.builders import climbers, make_ladder, versions
from tests.tasks import execute

pytestmark = pytest.mark.django_db


def queued_passes() -> list[DBTaskResult]:
    return list(
        DBTaskResult.objects.ready()
        .filter(task_path=launch_pass.module_path)
        .order_by("enqueued_at", "id")
    )


def run(result: DBTaskResult):
    result.claim("tests")
    execute(result)
    result.refresh_from_db()
    return result.return_value


@pytest.fixture
def two_ladders(owner):
    DBTaskResult.objects.all().delete()
    return (
        make_ladder(owner, versions(1, prefix="a"), climbers(1, prefix="a"), name="a"),
        make_ladder(owner, versions(1, prefix="b"), climbers(1, prefix="b"), name="b"),
    )


def test_a_pass_superseded_by_its_own_ladders_later_pass_returns_at_once(two_ladders):
    first, _ = two_ladders
    tasking.enqueue(launch_pass, first.pk)
    tasking.enqueue(launch_pass, first.pk)
    earlier, later = queued_passes()

    assert run(earlier) == {"coalesced": True}
    assert run(later) is None  # it ran (the ladder has no running dispatch: nothing to report)


def test_another_ladders_later_pass_never_stands_in_for_it(two_ladders):
    first, second = two_ladders
    tasking.enqueue(launch_pass, first.pk)
    tasking.enqueue(launch_pass, second.pk)
    earlier, later = queued_passes()

    assert run(earlier) != {"coalesced": True}
    assert run(later) != {"coalesced": True}


def test_a_pass_queued_after_another_ladders_runs_too(two_ladders):
    first, second = two_ladders
    tasking.enqueue(launch_pass, second.pk)
    tasking.enqueue(launch_pass, first.pk)
    tasking.enqueue(launch_pass, second.pk)
    a, b, c = queued_passes()

    assert run(a) == {"coalesced": True}
    assert run(b) != {"coalesced": True}
    assert run(c) != {"coalesced": True}
