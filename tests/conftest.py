import os

import pytest
from rest_framework.test import APIClient

from ladders import shared_progress
from loopweb.runs.models import ApiToken, Role
from tests.factories import UserFactory
from tests.tasks import run_queued_tasks


def pytest_configure(config):
    os.environ.setdefault("DEBUG", "1")


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
