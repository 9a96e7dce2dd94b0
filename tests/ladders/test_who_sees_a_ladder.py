"""Who sees a ladder is one rule written twice: ``selectors.ladders_for`` for the ORM and
``access.SEES_SQL`` for the one query a polled progress read is answered by. They agree for every
reader and every ladder."""

import pytest
from django.db import connection

from ladders import access
from ladders.selectors import ladders_for
from loopweb.runs.models import Role
from tests.factories import UserFactory
from tests.ladders.builders import climbers, make_ladder, versions

pytestmark = pytest.mark.django_db


def sees_by_sql(user, ladder_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {access.SEES_SQL}", access.sees_params(user, ladder_id))  # noqa: S608
        return bool(cursor.fetchone()[0])


def test_the_sql_rule_sees_exactly_the_ladders_ladders_for_lists(owner, reviewer, staff):
    other = UserFactory(username="oscar", role=Role.OWNER)
    outsider = UserFactory(username="nina", role=Role.REVIEWER)
    shared = make_ladder(owner, versions(1, prefix="s"), climbers(1, prefix="s"), name="Shared")
    shared.reviewers.add(reviewer)
    own = make_ladder(owner, versions(1, prefix="o"), climbers(1, prefix="o"), name="Own")
    theirs = make_ladder(other, versions(1, prefix="t"), climbers(1, prefix="t"), name="Theirs")
    theirs.reviewers.add(reviewer, outsider)
    theirs.reviewers.remove(outsider)  # a reviewer removed sees it no more
    absent = theirs.pk + 1000

    for user in (owner, reviewer, staff, other, outsider):
        listed = set(ladders_for(user).values_list("pk", flat=True))
        for ladder_id in (shared.pk, own.pk, theirs.pk, absent):
            assert sees_by_sql(user, ladder_id) == (ladder_id in listed), (user, ladder_id)
    assert {u.username for u in (owner, reviewer, staff) if sees_by_sql(u, shared.pk)} == {
        "olive",
        "rita",
        "stella",
    }
