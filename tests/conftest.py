import os

import pytest
from rest_framework.test import APIClient

from ladders import shared_progress
from loopweb.runs.models import ApiToken, Role
from tests.factories import UserFactory
from tests.tasks import run_queued_tasks


def pytest_configure(config):
    os.environ.setdefault("DEBUG", "1")


#: Fixtures through which a test reaches the database.
DATABASE_FIXTURES = {"db", "transactional_db", "live_server", "django_db_reset_sequences"}


def pytest_collection_modifyitems(config, items):
    """``LOOPWEB_DATABASE_TESTS_ONLY=1`` (``make test-sqlite``): run only the tests that reach
    the database. The others (pure functions, documents, the layers) give the same answer on
    every database, and ``make test`` runs them already."""
    if os.environ.get("LOOPWEB_DATABASE_TESTS_ONLY") != "1":
        return
    kept, left = [], []
    for item in items:
        reaches = item.get_closest_marker("django_db") or DATABASE_FIXTURES & set(
            getattr(item, "fixturenames", ())
        )
        (kept if reaches else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Test users have passwords; the production hasher is slow by design."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def boards_of_this_test_only():
    """Each web process keeps the boards it computed; a test starts with none, as a new process
    would (SQLite reuses ids a rolled-back test used)."""
    shared_progress.reset()


def _token_client(user) -> APIClient:
    _, raw = ApiToken.objects.issue(user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {raw}")
    client.user = user
    return client


@pytest.fixture
def owner(db):
    return UserFactory(username="olive", role=Role.OWNER)


@pytest.fixture
def reviewer(db):
    return UserFactory(username="rita", role=Role.REVIEWER)


@pytest.fixture
def outsider(db):
    return UserFactory(username="oscar", role=Role.OWNER)


@pytest.fixture
def driver(db):
    return UserFactory(username="drv", role=Role.DRIVER)


@pytest.fixture
def owner_api(owner):
    return _token_client(owner)


@pytest.fixture
def reviewer_api(reviewer):
    return _token_client(reviewer)


@pytest.fixture
def outsider_api(outsider):
    return _token_client(outsider)


@pytest.fixture
def driver_api(driver):
    return _token_client(driver)


@pytest.fixture
def anon_api():
    return APIClient()


@pytest.fixture
def token_client():
    return _token_client


@pytest.fixture
def run_tasks():
    """Run every background task queued so far (and those they queue), like a worker would."""
    return run_queued_tasks


@pytest.fixture
def staff(db):
    """A staff superuser: the admin and every object."""
    user = UserFactory(username="stella")
    user.is_staff = user.is_superuser = True
    user.save()
    return user
