"""What the review queue's page shows: the reader's entries (their queue, or their own reviews),
filtered and ordered as they chose, and the run on show with its review form. The view
(``loopweb.console.views.queue``) only reads the request and answers."""

from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse

from ladders import queue as review_queue
from ladders.access import controls
from ladders.models import DispatchClimber, Ladder
from ladders.selectors import slot_run_entries
from loopweb.console import queries
from loopweb.console.access import can_review
from loopweb.console.forms import ReviewInput
from loopweb.console.presenters import pin_text, plural
from loopweb.console.review import run_summary
from loopweb.console.review_form import rubric_fields
from loopweb.console.review_queue import ORDERS, OUTCOMES, VIEWS, Choice, arrange
from loopweb.console.runs import acceptance_of
from loopweb.runs.models import Review
from loopweb.runs.outcomes import RATING_ORDER


def queue_url(ladder, choice: Choice, **extra) -> str:
    query = {**choice.query(), **{k: v for k, v in extra.items() if v is not None}}
    url = reverse("console:queue", args=[ladder.pk])
    return f"{url}?{urlencode(query)}" if query else url


@dataclass
class QueuePage:
    """The reader's entries in the view they chose, and their own reviews among them."""

    ladder: Ladder
    choice: Choice
    rungs: list[dict]
    entries: list[dict]
    mine: dict[int, Review] = field(default_factory=dict)

    @classmethod
    def read(cls, user, ladder: Ladder, choice: Choice) -> "QueuePage":
        rungs = ladder.dispatch.snapshot["rungs"] if hasattr(ladder, "dispatch") else []
        numbers = {r["id"]: i + 1 for i, r in enumerate(rungs)}
        if choice.view == "mine":
            every = slot_run_entries(ladder)
            mine = {
                r.run_id: r
                for r in Review.objects.filter(reviewer=user, run_id__in=[e["run"] for e in every])
            }
            entries = [e for e in every if e["run"] in mine]
        else:
            entries, mine = review_queue.queue_for(ladder, user), {}
        acceptance = acceptance_of([e["run"] for e in entries]) if choice.outcome else None
        kept = arrange(entries, choice, numbers=numbers, acceptance=acceptance, reviews=mine)
        return cls(ladder, choice, rungs, kept, mine)

    @property
    def ids(self) -> list[int]:
        return [e["run"] for e in self.entries]

    @property
    def numbers(self) -> dict[str, int]:
        return {r["id"]: i + 1 for i, r in enumerate(self.rungs)}

    def pick(self, *, current: int | None, after: int | None) -> int | None:
        """The index of the entry to show: the one being reviewed, the one after a skipped run
        (wrapping round), or the first."""
        ids = self.ids
        if not ids:
            return None
        if current in ids:
            return ids.index(current)
        if after in ids:
            return (ids.index(after) + 1) % len(ids)
        return 0


def context(request, page: QueuePage, index, review: ReviewInput, values: dict, errors) -> dict:
    ladder, choice, entries, numbers = page.ladder, page.choice, page.entries, page.numbers
    found = {
        "ladder": ladder,
        "choice": choice,
        "left": len(entries),
        "left_text": (
            plural(len(entries), "run") + " left to review"
            if choice.view == "todo"
            else plural(len(entries), "review") + " of yours"
        ),
        "control": controls(request.user, ladder),
        "may_review": can_review(request.user),
        "review": review,
        "criteria": rubric_fields(ladder.rubric, values, errors),
        "errors": errors,
        "entry": None,
        "views": VIEWS,
        "orders": ORDERS,
        "order_label": ORDERS[choice.order],
        "outcomes": OUTCOMES,
        "ratings": [*reversed(RATING_ORDER), "unrated"],
        "rung_options": [
            (r["id"], f"Rung {i + 1} · {pin_text(r)}") for i, r in enumerate(page.rungs)
        ],
        "climber_options": _climber_options(ladder),
        "hidden": choice.query(),
        "list": [
            {**e, "number": numbers.get(e["rung"]), "url": queue_url(ladder, choice, run=e["run"])}
            for e in entries[:200]
        ],
    }
    if index is not None:
        found.update(_shown_entry(request, page, index, review, values, errors))
    return found


def _shown_entry(request, page: QueuePage, index: int, review, values, errors) -> dict:
    ladder, choice, entries = page.ladder, page.choice, page.entries
    entry = entries[index]
    run = queries.run_for(request.user, entry["run"])
    number = page.numbers.get(entry["rung"])
    rung = page.rungs[number - 1] if number else None
    mine_review = page.mine.get(entry["run"])
    if mine_review is not None and request.method != "POST":
        review = ReviewInput(
            aesthetic_rating=str(mine_review.aesthetic_rating),
            writeup=mine_review.writeup,
            verdict=mine_review.verdict,
        )
        values = mine_review.values
    several = len(entries) > 1
    return {
        "entry": entry,
        "review": review,
        "criteria": rubric_fields(ladder.rubric, values, errors),
        "mine_review": mine_review,
        "position": index + 1,
        "run": run,
        "summary": run_summary(run, queries.checklist_of(run)) if run else None,
        "rung_number": number,
        "rung_pin": pin_text(rung) if rung else entry["rung"],
        "climber": queries.climber_label(ladder.dispatch, entry["climber"]),
        "next_url": queue_url(ladder, choice, run=entries[(index + 1) % len(entries)]["run"])
        if several
        else None,
        "previous_url": queue_url(ladder, choice, run=entries[index - 1]["run"])
        if several
        else None,
        "skip_url": queue_url(ladder, choice, after=entry["run"]) if several else None,
    }


def _climber_options(ladder) -> list[tuple[str, str]]:
    if not hasattr(ladder, "dispatch"):
        return []
    keys = list(
        DispatchClimber.objects.filter(dispatch=ladder.dispatch)
        .order_by("position")
        .values_list("combination_key", flat=True)
    )
    return list(zip(keys, queries.climber_labels(ladder.dispatch, keys), strict=True))
