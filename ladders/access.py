"""Who may create and control ladders: one rule, read by the API and the console alike.

The owner (and staff) control a ladder: edit, delete, Run, Stop, Retry. Its reviewers read it;
``selectors.ladders_for`` is who sees it at all.
"""

from ladders.models import Ladder
from loopweb.runs.access import role_of
from loopweb.runs.models import Role

NOT_CONTROLLED = "Only the ladder's owner can change or run it."
NOT_CREATED = "Only owners create ladders."


def controls(user, ladder: Ladder) -> bool:
    return user.is_staff or ladder.owner_id == user.pk


def creates_ladders(user) -> bool:
    return user.is_staff or role_of(user) == Role.OWNER
