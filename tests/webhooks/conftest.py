import pytest

from tests.webhooks import receiver as http_receiver


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    """Loopback is allowed (the test's receiver), attempts are short, and the backoff keeps its
    production shape: tests fast-forward deferred attempts instead of waiting for them."""
    settings.LOOPWEB_WEBHOOK_ALLOWED_HOSTS = "127.0.0.1"
    settings.LOOPWEB_WEBHOOK_TIMEOUT = 0.5
    settings.LOOPWEB_WEBHOOK_RETRY_BASE = 30
    settings.LOOPWEB_WEBHOOK_MAX_ATTEMPTS = 4
    settings.LOOPWEB_WEBHOOK_FAILING_AFTER = 2
    settings.LOOPWEB_PUBLIC_URL = "https://loopweb.example"
    return settings


@pytest.fixture
def receiver():
    server = http_receiver.start()
    yield server
    http_receiver.stop(server)
