"""The words of a run's outcome and rating, and the sets of them the substrate and the gate read,
defined once. Pure: the models' choices (``Outcome``, ``Rating``) are these words.
"""

COMPLETED = "completed"
CATASTROPHIC = "catastrophic"
TIMED_OUT = "timedOut"
HARNESS_ERROR = "harnessError"
LIMIT_EXCEEDED = "limitExceeded"
HUNG = "hung"
INFRASTRUCTURE = "infrastructure"
CANCELED = "canceled"

#: The model had its attempt and failed: the gate reads such a run as broken.
MODEL_FAILURES = frozenset({CATASTROPHIC, TIMED_OUT, HARNESS_ERROR, LIMIT_EXCEEDED, HUNG})
#: An attempt ending so is retried automatically while its retries last.
RETRYABLE_OUTCOMES = frozenset({INFRASTRUCTURE, CATASTROPHIC, HARNESS_ERROR, HUNG})
#: A run ending so never counts for its cell.
NEVER_COUNTED = frozenset({INFRASTRUCTURE, CANCELED})

FLAWLESS = "flawless"
GREAT = "great"
PASSABLE = "passable"
SCUFFED = "scuffed"
BROKEN = "broken"
#: Worst first.
RATING_ORDER = (BROKEN, SCUFFED, PASSABLE, GREAT, FLAWLESS)
RATING_RANK = {rating: rank for rank, rating in enumerate(RATING_ORDER)}


def rating_at_least(rating: str, floor: str) -> bool:
    return RATING_RANK[rating] >= RATING_RANK[floor]
