from tests.console.browser.conftest import chromium, open_page, quick_board  # noqa: F401
