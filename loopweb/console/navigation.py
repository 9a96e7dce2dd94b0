"""What the console's navigation offers the signed-in user: the pages their role can use (SPEC
§1). A context processor, read lazily: a fragment that shows no navigation asks nothing."""

from functools import cached_property

from ladders.access import creates_ladders


class Offered:
    """The parts of the console the user's role may open, for the top bar."""

    def __init__(self, user):
        self.user = user

    @cached_property
    def manage(self) -> bool:
        """Owners and staff: the editor, groups and combinations, their acceptance rule,
        proposals and webhooks. Reviewers and drivers would be refused or find nothing."""
        return creates_ladders(self.user)

    @property
    def admin(self) -> bool:
        return self.user.is_staff


def navigation(request) -> dict:
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"offered": Offered(user)}
