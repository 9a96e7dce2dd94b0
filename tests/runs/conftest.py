"""The substrate's tests run the substrate alone.

Higher layers (ladders, signals, evalsets) subscribe to the substrate's signals and add run
visibility rules; their behaviour is tested with them. Here every subscriber is detached, so a
test of the run substrate sees only what the substrate does, and query budgets count only its
own queries. Tests that need a subscriber connect their own.
"""

import pytest

from loopweb.runs import access, hooks
from tests.factories import CaseVersionFactory, CombinationFactory

SUBSTRATE_SIGNALS = [
    hooks.attempt_ending,
    hooks.retry_enqueued,
    hooks.jobs_ended,
    hooks.run_pushing,
    hooks.run_pushed,
    hooks.run_reviewed,
]


@pytest.fixture(autouse=True)
def substrate_alone():
    saved = [(signal, signal.receivers) for signal in SUBSTRATE_SIGNALS]
    rules = list(access._run_visibility)
    for signal in SUBSTRATE_SIGNALS:
        signal.receivers = []
        signal.sender_receivers_cache.clear()
    access._run_visibility.clear()
    yield
    for signal, receivers in saved:
        signal.receivers = receivers
        signal.sender_receivers_cache.clear()
    access._run_visibility[:] = rules


@pytest.fixture
def version(db):
    """jump-1@3, a validator-rated version with the five-item checklist of the factories."""
    return CaseVersionFactory(case__slug="jump-1", version="3")


@pytest.fixture
def combination(db):
    return CombinationFactory(harness="aider", model="gpt-x", provider="acme")
