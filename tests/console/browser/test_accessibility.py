"""axe-core finds nothing on any console page: the board (and its slot panel open), the slot's own
page, the run page, the review queue, the history, a record, a compare, the editor, groups, the
acceptance rule, evalsets, proposals, webhooks, budgets, the sign-in page and the error pages.

axe-core is vendored (vendor/axe.min.js, 4.14.1, MPL-2.0; see vendor/README.md) and injected as
an init script, which the page's Content-Security-Policy does not govern; nothing is fetched from
the network. Every rule axe runs by default counts (WCAG 2 A and AA, and its best practices, such
as heading order), at a desktop width and on a phone."""

from pathlib import Path

import pytest

from tests.console.browser.pages import console_pages, console_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

AXE = Path(__file__).parent / "vendor" / "axe.min.js"

RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.slice(0, 5).map(
      (n) => `${n.target.join(" ")}: ${n.failureSummary.replace(/\\s+/g, " ")}`
    ),
    count: v.nodes.length,
  }));
}"""

AS_OWNER = ["ladders", "board", "slot", "run", "queue", "history", "record", "record slot",
            "record chart", "compare", "editor", "new ladder", "groups", "group", "combinations",
            "rule", "evalsets", "evalset", "proposals", "proposal", "webhooks", "webhook",
            "budgets"]  # fmt: skip
AS_REVIEWER = ["ladders", "board", "run", "queue", "history", "compare"]


@pytest.fixture
def world(owner, reviewer, driver):
    return console_world(owner, reviewer, driver)


def violations(page, where: str) -> list[str]:
    page.wait_for_load_state("networkidle")
    assert page.evaluate("typeof axe") == "object", "axe-core was not injected"
    found = page.evaluate(RUN_AXE)
    return [
        f"{where}: {v['id']} ({v['impact']}, {v['count']} node(s)): {v['help']}\n    "
        + "\n    ".join(v["nodes"])
        for v in found
    ]


def audited(open_page, user, viewport=None):
    page = open_page(user)
    if viewport:
        page.set_viewport_size(viewport)
    page.add_init_script(path=str(AXE))
    return page


@pytest.mark.parametrize("width", [1440, 390], ids=["desktop", "phone"])
def test_no_owner_page_has_an_axe_violation(open_page, owner, world, width):
    pages = console_pages(world)
    page = audited(open_page, owner, {"width": width, "height": 900})
    found = []
    for name in AS_OWNER:
        response = page.goto(pages[name])
        assert response.status == 200, (name, response.status)
        found += violations(page, name)
    # The board with a slot's side panel open.
    page.goto(pages["board"])
    page.locator("#slot-0-1").click()
    page.locator("#slot-panel .panel-inner").wait_for()
    found += violations(page, "board with its slot panel")
    assert page.goto("/no-such-page/").status == 404
    found += violations(page, "404")
    assert found == [], "\n".join(found)


def test_no_reviewer_page_has_an_axe_violation(open_page, reviewer, world):
    pages = console_pages(world)
    page = audited(open_page, reviewer)
    found = []
    for name in AS_REVIEWER:
        response = page.goto(pages[name])
        assert response.status == 200, (name, response.status)
        found += violations(page, f"{name} (reviewer)")
    assert page.goto(pages["groups"]).status == 403  # refused: the console's 403
    found += violations(page, "403")
    assert found == [], "\n".join(found)


def test_the_sign_in_page_has_no_axe_violation(open_page, world):
    page = audited(open_page, None)
    page.goto("/login/")
    found = violations(page, "sign in")
    assert found == [], "\n".join(found)
