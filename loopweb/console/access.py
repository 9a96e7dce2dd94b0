"""Who may see and control a ladder in the console: the same rules as the API.

The owner (and staff) control a ladder; its reviewers read its board and work its queue;
anybody else gets a 404, so the console never reveals that another owner's ladder exists.
"""

from functools import wraps
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect

from ladders.access import NOT_CONTROLLED, controls
from ladders.models import Ladder
from ladders.selectors import ladders_for
from loopweb.runs.access import role_of
from loopweb.runs.models import Role


def viewable_ladder(user, pk: int) -> Ladder:
    ladder = ladders_for(user).filter(pk=pk).first()
    if ladder is None:
        raise Http404("No such ladder.")
    return ladder


def controlled_ladder(user, pk: int) -> Ladder:
    """The ladder, for Run, Stop, Retry and edits: 404 for outsiders, 403 for its reviewers."""
    ladder = viewable_ladder(user, pk)
    if not controls(user, ladder):
        raise PermissionDenied(NOT_CONTROLLED)
    return ladder


def can_review(user) -> bool:
    return user.is_staff or role_of(user) in (Role.OWNER, Role.REVIEWER)


def signed_in(view):
    """``login_required`` that also serves HTMX: a board polling after its session expired is
    sent to the sign-in page as a whole page, not swapped into the board."""
    guarded = login_required(view)

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated and request.htmx:
            back = quote(request.htmx.current_url_abs_path or request.path)
            return HttpResponseClientRedirect(f"{resolve_url(settings.LOGIN_URL)}?next={back}")
        return guarded(request, *args, **kwargs)

    return wrapper
