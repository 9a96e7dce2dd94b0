"""End-to-end tests in Debian's Chromium, driven by Playwright against pytest-django's live
server. No browser is ever downloaded: Playwright launches /usr/bin/chromium."""

import os
from pathlib import Path

import pytest
from django.test import Client

# Playwright's sync API keeps an event loop running in this thread; the test thread's ORM calls
# (the scripted driver) are still plain synchronous code.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from playwright.sync_api import expect, sync_playwright  # noqa: E402

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
SCREENSHOTS = Path(__file__).resolve().parents[3] / "var" / "screenshots"

#: Milliseconds Playwright waits before each action (``LOOPWEB_BROWSER_SLOW_MO``): run the
#: journeys slowed down to see that none depends on the machine's speed.
SLOW_MO = float(os.environ.get("LOOPWEB_BROWSER_SLOW_MO", "0"))

expect.set_options(timeout=10_000)


@pytest.fixture(scope="session")
def chromium():
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=ARGS, slow_mo=SLOW_MO
        )
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def quick_board(settings):
    """The board polls every 2 s in production; a test need not wait that long."""
    settings.LOOPWEB_BOARD_POLL_MS = 250


@pytest.fixture
def open_page(chromium, live_server):
    """``open_page(user)``: a page in a fresh browser context, signed in as ``user`` (or not)."""
    contexts = []

    def open_(user=None):
        context = chromium.new_context(
            base_url=live_server.url, viewport={"width": 1280, "height": 900}
        )
        contexts.append(context)
        if user is not None:
            client = Client()
            client.force_login(user)
            context.add_cookies(
                [
                    {
                        "name": "sessionid",
                        "value": client.cookies["sessionid"].value,
                        "url": live_server.url,
                    }
                ]
            )
        page = context.new_page()
        page.set_default_timeout(10_000)
        return page

    yield open_
    for context in contexts:
        context.close()


@pytest.fixture
def shot():
    """Save a full-page screenshot under var/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def save(page, name: str) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        # A full-page shot stretches the viewport, and Chromium settles the scroll position
        # back only at the next focus change: make that change now, not in the next click,
        # and give the focus back.
        page.evaluate(
            """() => new Promise(done => {
                const focused = document.activeElement;
                focused?.blur();
                requestAnimationFrame(() => requestAnimationFrame(() => {
                    focused?.focus({preventScroll: true});
                    done();
                }));
            })"""
        )
        return path

    return save
