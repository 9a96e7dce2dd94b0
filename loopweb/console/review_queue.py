"""The review queue's filters, orders and the validator/reviewer disagreement: pure functions over
the queue's entries (``ladders.selectors.slot_run_entries``)."""

from dataclasses import dataclass

from loopweb.runs.outcomes import RATING_ORDER

ORDERS = {
    "hardest": "Hardest rung first",
    "ladder": "Ladder order",
    "rating": "Lowest validator rating first",
    "newest": "Newest first",
}
DEFAULT_ORDER = "hardest"
VIEWS = {"todo": "To review", "mine": "My reviews"}
OUTCOMES = ("success", "failure", "unknown")
HIGH = ("flawless", "great")
LOW = ("scuffed", "broken")


@dataclass(frozen=True)
class Choice:
    """What the reader picked: the view, the order and the filters (all from the query)."""

    view: str = "todo"
    order: str = DEFAULT_ORDER
    rung: str = ""
    climber: str = ""
    rating: str = ""
    outcome: str = ""
    disagree: bool = False

    @classmethod
    def from_query(cls, query) -> "Choice":
        view = query.get("view", "todo")
        order = query.get("order", DEFAULT_ORDER)
        outcome = query.get("outcome", "")
        return cls(
            view=view if view in VIEWS else "todo",
            order=order if order in ORDERS else DEFAULT_ORDER,
            rung=query.get("rung", ""),
            climber=query.get("climber", ""),
            rating=query.get("rating", ""),
            outcome=outcome if outcome in OUTCOMES else "",
            disagree=query.get("disagree") == "1",
        )

    def query(self) -> dict:
        """The non-default parts, for links that keep the reader's choice."""
        found = {
            "view": self.view if self.view != "todo" else "",
            "order": self.order if self.order != DEFAULT_ORDER else "",
            "rung": self.rung,
            "climber": self.climber,
            "rating": self.rating,
            "outcome": self.outcome,
            "disagree": "1" if self.disagree else "",
        }
        return {k: v for k, v in found.items() if v}

    @property
    def filtered(self) -> bool:
        return bool(self.rung or self.climber or self.rating or self.outcome or self.disagree)


def disagrees(rating: str | None, review) -> bool:
    """Whether the validator and the reviewer read the run differently: a run rated flawless or
    great that the reviewer rejected (or rated 1-2 without a verdict), or one rated scuffed or
    broken that the reviewer accepted (or rated 4-5 without a verdict)."""
    if review is None or rating is None:
        return False
    if review.verdict:
        positive, negative = review.verdict == "accept", review.verdict == "reject"
    else:
        positive, negative = review.aesthetic_rating >= 4, review.aesthetic_rating <= 2
    return (rating in HIGH and negative) or (rating in LOW and positive)


def _rating_rank(rating: str | None) -> int:
    # Unrated first: it is the reading a reviewer can least take from the validator.
    return -1 if rating is None else RATING_ORDER.index(rating)


def arrange(
    entries: list[dict],
    choice: Choice,
    *,
    numbers: dict[str, int],
    acceptance: dict[int, str] | None = None,
    reviews: dict[int, object] | None = None,
) -> list[dict]:
    """The entries the reader's filters keep, in the order they chose. ``acceptance`` (run →
    success/failure/unknown) is needed only with the outcome filter, ``reviews`` (run → the
    reader's review) with the disagreement filter."""
    kept = [
        e
        for e in entries
        if (not choice.rung or e["rung"] == choice.rung)
        and (not choice.climber or e["climber"] == choice.climber)
        and (not choice.rating or (e["validatorRating"] or "unrated") == choice.rating)
        and (not choice.outcome or (acceptance or {}).get(e["run"]) == choice.outcome)
        and (not choice.disagree or disagrees(e["validatorRating"], (reviews or {}).get(e["run"])))
    ]
    # Ladder order is the entries' own order; every other order keeps it among equals.
    position = {e["run"]: i for i, e in enumerate(entries)}
    if choice.order == "hardest":
        kept.sort(key=lambda e: (-numbers.get(e["rung"], 0), position[e["run"]]))
    elif choice.order == "rating":
        kept.sort(key=lambda e: (_rating_rank(e["validatorRating"]), position[e["run"]]))
    elif choice.order == "newest":
        kept.sort(key=lambda e: (e["finishedAt"], e["run"]), reverse=True)
    return kept
