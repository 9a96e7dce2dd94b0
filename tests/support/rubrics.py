"""The rubric the review tests share, as a ladder stores it, and a ladder of it whose runs wait
for review."""

from collections.abc import Callable

from ladders import services
from ladders.models import Ladder
from tests.ladders.builders import PERFECT, work

#: A number, a category and a yes/no criterion, each with its label and description.
JAM_RUBRIC = [
    {
        "id": "polish",
        "kind": "number",
        "label": "Polish",
        "description": "How finished it feels.",
        "required": True,
        "min": 1,
        "max": 10,
        "step": 1,
    },
    {
        "id": "category",
        "kind": "category",
        "label": "Category",
        "description": "The jam category it fits best.",
        "required": False,
        "labels": ["Gameplay", "Art", "Audio"],
    },
    {
        "id": "fun",
        "kind": "boolean",
        "label": "Fun",
        "description": "Would you play it again?",
        "required": False,
    },
]


def to_review(
    ladder: Ladder, driver, run_tasks: Callable[[], object], *, rounds: int = 1, **fields
) -> Ladder:
    """``ladder`` with ``JAM_RUBRIC`` (and ``fields``), its dispatch started and ``rounds`` of
    its jobs pushed with perfect runs: runs in its review queue."""
    Ladder.objects.filter(pk=ladder.pk).update(rubric=JAM_RUBRIC, **fields)
    services.start_dispatch(ladder=ladder)
    for _ in range(rounds):
        work(driver, run_tasks, PERFECT)
    return Ladder.objects.get(pk=ladder.pk)
