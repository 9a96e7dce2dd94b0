"""Who may create and control ladders: one rule, read by the API and the console alike.

The owner (and staff) control a ladder: edit, delete, Run, Stop, Retry. Its reviewers read it;
``selectors.ladders_for`` is who sees it at all, and ``SEES_SQL`` the same rule as one SQL
condition, for the one query a polled progress read is answered by.
"""

from django.db.models import Q

from ladders.models import Ladder
from loopweb.runs.access import role_of
from loopweb.runs.models import Role

NOT_CONTROLLED = "Only the ladder's owner can change or run it."
NOT_CREATED = "Only owners create ladders."


#: ``selectors.ladders_for`` as an SQL condition: the ladder ``%(ladder)s`` exists and the user
#: ``%(viewer)s`` owns it or reviews it, or is staff (``%(staff)s``). A test holds the two equal
#: (``tests/ladders/test_who_sees_a_ladder.py``).
SEES_SQL = f"""EXISTS (
    SELECT 1 FROM {Ladder._meta.db_table} AS seen
    WHERE seen.id = %(ladder)s AND (%(staff)s OR seen.owner_id = %(viewer)s OR EXISTS (
        SELECT 1 FROM {Ladder.reviewers.through._meta.db_table} AS reads
        WHERE reads.ladder_id = seen.id AND reads.user_id = %(viewer)s)))"""  # noqa: S608


def sees_params(user, ladder_id: int) -> dict:
    return {"ladder": ladder_id, "viewer": user.pk, "staff": bool(user.is_staff)}


def by_readers(ladder: Ladder) -> Q:
    """Reviews by the ladder's owner or one of its reviewers: those its board, its queue and its
    agreement count."""
    return Q(reviewer=ladder.owner_id) | Q(reviewer__in=ladder.reviewers.values("pk"))


def controls(user, ladder: Ladder) -> bool:
    return user.is_staff or ladder.owner_id == user.pk


def creates_ladders(user) -> bool:
    return user.is_staff or role_of(user) == Role.OWNER
