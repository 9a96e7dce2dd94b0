import pytest


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    """The standing users' passwords need not resist brute force here."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
