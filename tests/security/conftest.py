"""The deployment the security tests probe: one object of every kind (``tests.fuzz.world``)."""

import datetime as dt

import pytest
from django.db import transaction
from django.test import override_settings
from django.utils import timezone

from loopweb.ops.models import WorkerProcess
from tests.fuzz.world import build_world


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker):
    """One deployment for the whole module; each test runs in a savepoint rolled back after it,
    so every row of the matrix starts from the same state."""
    fast = override_settings(PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"])
    outer = transaction.atomic()
    outer._from_testcase = True  # as Django's TestCase marks its own: durable blocks may nest
    with django_db_blocker.unblock(), fast, outer:
        world = build_world()
        # A task worker that keeps being heard from, so /readyz is ready for the whole module.
        later = timezone.now() + dt.timedelta(days=1)
        WorkerProcess.objects.create(
            worker_id="matrix", host="elsewhere", pid=1, started_at=later, beat_at=later
        )
        yield world
        transaction.set_rollback(True)
