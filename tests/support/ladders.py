"""Starting a ladder in a test: saved with the standard body, then Run."""

from ladders import services
from ladders.models import Ladder
from tests.ladders.builders import make_ladder


def start(owner, steps, combos, **overrides) -> Ladder:
    """A ladder of ``steps`` (case versions, one rung each) climbed by ``combos``, with the
    standard settings and ``overrides`` (``ladders.bodies.ladder_body``), and its dispatch
    started."""
    ladder = make_ladder(owner, steps, combos, **overrides)
    services.start_dispatch(ladder=ladder)
    return ladder
