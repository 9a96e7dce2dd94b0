"""The Content-Security-Policy in Chromium: nothing the site serves is refused by it. A live
board polls and swaps in its figures, opens a slot's side panel and loads its standing; the
history draws its legend; the evalsets use their stylesheet; the API docs render Swagger UI; the
admin's index and a list load. Every violation Chromium reports, as a ``securitypolicyviolation``
event or a console message, fails the test, and so does a script error."""

import pytest
from playwright.sync_api import expect

from tests.factories import UserFactory
from tests.ladders.builders import PERFECT, climbers, make_ladder, versions, work
from tests.tasks import run_queued_tasks

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

#: Runs in every document before its own scripts (Playwright's init scripts are not subject to
#: the page's policy): keeps each violation the document reports.
#: Milliseconds Swagger UI may take to parse and draw the whole schema (its title shows last).
SWAGGER_DRAWN = 60_000

LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  const where = `${e.sourceFile}:${e.lineNumber}`;
  window.__violations.push(
    `${e.effectiveDirective} refused ${e.blockedURI || "inline"} (${where}) ${e.sample}`
  );
});
"""


class Watch:
    """A page's policy violations and script errors, across its navigations."""

    def __init__(self, page):
        self.page = page
        self.reported: list[str] = []
        page.add_init_script(LISTEN)
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.reported.append(f"script error: {error}"))

    def _console(self, message) -> None:
        if "Content Security Policy" in message.text or "Content-Security-Policy" in message.text:
            self.reported.append(f"console {message.type}: {message.text}")

    def assert_none(self, where: str) -> None:
        """Nothing refused on the page now shown (call before leaving it)."""
        events = self.page.evaluate("window.__violations || []")
        assert events == [] and self.reported == [], (where, events, self.reported)


@pytest.fixture
def staff(db):
    user = UserFactory(username="stella")
    user.is_staff = user.is_superuser = True
    user.save()
    return user


def test_a_live_board_its_history_and_the_evalsets_are_refused_nothing(open_page, owner, driver):
    ladder = make_ladder(owner, versions(2, prefix="csp"), climbers(2, prefix="csp"), name="CSP")
    page = open_page(owner)
    watch = Watch(page)
    page.goto(f"/ladders/{ladder.pk}/")
    assert page.evaluate("document.querySelectorAll('style').length") == 0  # HTMX added none

    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Running")
    page.evaluate("window.sameDocument = true")
    # A driver completes rung 1: the board's polls swap in new rows and figures.
    work(driver, run_queued_tasks, PERFECT, rounds=1)
    expect(page.locator("#runs-done")).to_have_text("2 of 4 runs done")
    expect(page.locator("#slot-0-0")).to_have_attribute("data-status", "passed")
    expect(page.locator("#board-height-chart")).to_be_visible()  # the standing, loaded by HTMX
    for _ in range(4):  # four more polls of the board, each answered
        with page.expect_response(lambda r: r.url.split("?")[0].endswith("/board"), timeout=30_000):
            pass
    assert page.evaluate("window.sameDocument") is True

    # The run bar's segments are drawn at their widths (SVG width attributes, no style).
    bar = page.locator("#board-progress .runbar").bounding_box()
    done = page.locator("#board-progress .runbar-done").bounding_box()
    assert bar and done and abs(done["width"] - bar["width"] / 2) <= 2, (bar, done)

    # The slot's side panel: a fragment fetched by console.js through HTMX.
    page.locator("#slot-0-0").click()
    expect(page.locator("#slot-panel")).to_be_visible()
    watch.assert_none("the live board")

    # Stopped, the dispatch is in the history, whose legend draws each climber's colour.
    page.get_by_role("button", name="Stop", exact=True).click()
    expect(page.locator("#ladder-status")).to_have_text("Stopped")
    page.goto(f"/ladders/{ladder.pk}/history/")
    swatch = page.locator(".chart-legend .swatch rect").first
    expect(swatch).to_have_attribute("fill", "#3150d8")
    watch.assert_none("the history")

    page.goto("/evalsets/")
    expect(page.locator("h1")).to_be_visible()
    sheets = page.evaluate("[...document.styleSheets].map(s => s.href || 'inline')")
    assert any(s.endswith("/static/evalsets.css") for s in sheets), sheets
    assert "inline" not in sheets
    watch.assert_none("the evalsets")


def test_the_api_docs_render_with_nothing_refused(open_page):
    page = open_page()
    watch = Watch(page)
    page.goto("/api/docs/")
    # Swagger UI parses and draws the whole schema before its title shows: on a loaded machine
    # that takes longer than an action's usual wait.
    expect(page.locator(".swagger-ui .info .title")).to_contain_text(
        "Loopweb API", timeout=SWAGGER_DRAWN
    )
    expect(page.locator(".opblock-tag").first).to_be_visible()
    # An operation opens (Swagger UI's own scripts and styles at work).
    page.locator(".opblock-summary").first.click()
    expect(page.locator(".opblock-body").first).to_be_visible()
    page.wait_for_load_state("networkidle")  # whatever the opened operation loads, loaded
    watch.assert_none("the API docs")


def test_the_admin_index_and_a_list_load_with_nothing_refused(open_page, staff, owner):
    make_ladder(owner, versions(1, prefix="adm"), climbers(1, prefix="adm"), name="Admin CSP")
    page = open_page(staff)
    watch = Watch(page)
    page.goto("/admin/")
    expect(page.locator("#site-name")).to_be_visible()
    expect(page.locator("#content-main")).to_be_visible()
    watch.assert_none("the admin index")

    page.goto("/admin/ladders/ladder/")
    expect(page.locator("#result_list")).to_contain_text("Admin CSP")
    # The list's action bar is driven by the admin's scripts: ticking a row counts it.
    page.locator("#result_list input.action-select").first.check()
    expect(page.locator(".action-counter")).to_contain_text("1 of 1 selected")
    watch.assert_none("the admin list")


def test_a_refused_inline_style_is_reported(open_page, owner):
    """The watch itself: a style attribute the policy refuses is seen."""
    ladder = make_ladder(owner, versions(1, prefix="neg"), climbers(1, prefix="neg"))
    page = open_page(owner)
    watch = Watch(page)
    page.goto(f"/ladders/{ladder.pk}/")
    page.evaluate("document.body.insertAdjacentHTML('beforeend', '<p style=\"color: red\">x</p>')")
    page.wait_for_function("() => window.__violations.length > 0")
    with pytest.raises(AssertionError):
        watch.assert_none("a page with a style attribute")
