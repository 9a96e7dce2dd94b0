"""The API docs in Chromium with every request beyond the site itself refused: Swagger UI comes
from the project's own static files, so it renders offline."""

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

#: Milliseconds Swagger UI may take to parse and draw the whole schema (its title shows last).
SWAGGER_DRAWN = 60_000


def offline(page, live_server) -> list[str]:
    """Abort every request to another host; return the addresses refused."""
    local = urlsplit(live_server.url).netloc
    refused = []

    def route(r):
        if urlsplit(r.request.url).netloc == local:
            r.continue_()
        else:
            refused.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    return refused


def test_swagger_ui_renders_the_schema_with_no_network(open_page, shot, live_server):
    page = open_page()
    refused = offline(page, live_server)
    page.goto("/api/docs/")

    # Swagger UI parses and draws the whole schema before its title shows: on a loaded machine
    # that takes longer than an action's usual wait.
    expect(page.locator(".swagger-ui .info .title")).to_contain_text(
        "Loopweb API", timeout=SWAGGER_DRAWN
    )
    expect(page.locator(".opblock-tag").first).to_be_visible()
    expect(page.get_by_text("/api/ladders/{id}/progress").first).to_be_attached()
    shot(page, "api-docs-offline")
    assert refused == []
