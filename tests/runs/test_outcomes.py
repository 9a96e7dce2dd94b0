"""Outcome and rating words are defined once (``loopweb.runs.outcomes``); the models' choices
are those words, and the sets the substrate and the gate read are made of them."""

from ladders import gate
from loopweb.runs import outcomes
from loopweb.runs.models import MODEL_FAILURES, NEVER_COUNTED, RETRYABLE_OUTCOMES, Outcome, Rating


def test_the_choices_are_the_words():
    words = {v for k, v in vars(outcomes).items() if k.isupper() and isinstance(v, str)}
    assert set(Outcome.values) | set(Rating.values) == words
    assert list(reversed(Rating.values)) == list(outcomes.RATING_ORDER)


def test_the_sets_are_read_from_one_place():
    assert gate.MODEL_FAILURES is MODEL_FAILURES is outcomes.MODEL_FAILURES
    assert RETRYABLE_OUTCOMES is outcomes.RETRYABLE_OUTCOMES
    assert NEVER_COUNTED is outcomes.NEVER_COUNTED
    assert MODEL_FAILURES <= set(Outcome.values) and NEVER_COUNTED <= set(Outcome.values)
