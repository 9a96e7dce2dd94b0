import pytest

from tests.factories import CaseVersionFactory, CombinationFactory


@pytest.fixture
def version(db):
    return CaseVersionFactory(case__slug="jump-1", version="3")


@pytest.fixture
def acme(db):
    return CombinationFactory(harness="aider", model="acme-large", provider="acme")


@pytest.fixture
def acme_small(db):
    return CombinationFactory(harness="aider", model="acme-small", provider="acme")


@pytest.fixture
def other(db):
    return CombinationFactory(harness="aider", model="zen-1", provider="zenith")
