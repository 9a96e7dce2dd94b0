"""Console tests: signed-in browser clients that enforce CSRF, and a small catalog."""

import pytest

from tests.console.helpers import Browser
from tests.factories import CaseFactory, CaseVersionFactory
from tests.ladders.builders import climbers, make_ladder, versions


@pytest.fixture
def browser():
    return Browser


@pytest.fixture
def owner_client(owner):
    return Browser(owner)


@pytest.fixture
def reviewer_client(reviewer):
    return Browser(reviewer)


@pytest.fixture
def outsider_client(outsider):
    return Browser(outsider)


@pytest.fixture
def ladder(owner, reviewer):
    """Two climbers over two rungs, shared with the reviewer."""
    return make_ladder(owner, versions(2), climbers(2), name="platformer", reviewers=[reviewer.pk])


@pytest.fixture
def catalog(db):
    """jump-1 at versions 1 (older) and 3 (newest), a legacy version, and a performance case."""
    jump = CaseFactory(slug="jump-1", title="Jump once")
    old = CaseVersionFactory(case=jump, version="1")
    new = CaseVersionFactory(
        case=jump, version="3", variants=["default", "hard"], engines=["godot"]
    )
    new.ingested_at = old.ingested_at.replace(year=old.ingested_at.year + 1)
    new.save()
    legacy = CaseVersionFactory(case=CaseFactory(slug="old-jump", title="Old jump"), legacy=True)
    perf = CaseVersionFactory(case=CaseFactory(slug="fps", title="Frame rate", kind="performance"))
    return {"old": old, "new": new, "legacy": legacy, "perf": perf}
