"""History, compare, the editor, the run page and the slot panels on a phone (390 × 844): the
page is never wider than the screen, the records, the compare's climbers and the editor's rungs
stack into the screen's width instead of scrolling sideways in their own box, and a slot's panel
(the board's and a record's) holds its runs without scrolling sideways; on none of these pages
does anything but a grid of rung slots or a chart (or the run page's checklist overrides form)
scroll sideways in its own box. Screenshots are kept under var/screenshots/phone-*.png."""

import pytest

from tests.console.browser.pages import console_pages, console_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

PHONE = {"width": 390, "height": 844}

#: How wide the page and a box are: what a reader would have to scroll sideways to see.
WIDTHS = """(selector) => {
  const box = selector ? document.querySelector(selector) : null;
  return {
    page: document.documentElement.scrollWidth,
    screen: window.innerWidth,
    box: box ? {scroll: box.scrollWidth, client: box.clientWidth,
                right: Math.round(box.getBoundingClientRect().right)} : null,
  };
}"""

#: Every box shown in the page's main part that scrolls sideways (its content wider than it), but
#: a grid of rung slots and a chart: a reader would have to scroll it to read the row.
SCROLLERS = """() => [...document.querySelectorAll("main *")]
  .filter((el) => el.checkVisibility()
    && ["auto", "scroll"].includes(getComputedStyle(el).overflowX)
    && el.scrollWidth > el.clientWidth + 1
    && !el.closest(".grid-scroll, .chart-scroll"))
  .map((el) => {
    const classes = typeof el.className === "string" ? el.className.split(/\\s+/) : [];
    const name = [el.tagName.toLowerCase() + (el.id ? "#" + el.id : ""), ...classes].join(".");
    const within = el.parentElement.closest("[id]")?.id;
    return `${name} in #${within} (${el.scrollWidth} px in ${el.clientWidth})`;
  })"""

#: Each page, and the box on it that must fit the screen without scrolling sideways.
FITS = {
    "history": "#records",
    "compare": "#compare-table",
    "editor": "table.rungs",
    "run": "main",
    "slot": "main .card",
    "record slot": "#slot-panel",
}


@pytest.fixture
def world(owner, reviewer, driver):
    return console_world(owner, reviewer, driver)


def problems_of(page, name: str, selector: str) -> list[str]:
    page.wait_for_load_state("networkidle")
    found = page.evaluate(WIDTHS, selector)
    problems = []
    if found["page"] > found["screen"]:
        problems.append(f"{name}: the page is {found['page']} px wide in {found['screen']}")
    box = found["box"]
    if box is None:
        problems.append(f"{name}: no {selector}")
    elif box["scroll"] > box["client"] or box["right"] > found["screen"]:
        problems.append(
            f"{name}: {selector} is {box['scroll']} px wide in a box of {box['client']} px"
            f" ending at {box['right']} px"
        )
    problems += [f"{name}: {box} scrolls sideways" for box in page.evaluate(SCROLLERS)]
    return problems


def test_history_compare_the_editor_the_run_page_and_slot_panels_fit_a_phone(
    open_page, shot, owner, world
):
    pages = console_pages(world)
    page = open_page(owner)
    page.set_viewport_size(PHONE)
    problems = []
    for name, selector in FITS.items():
        response = page.goto(pages[name])
        assert response.status == 200, (name, response.status)
        problems += problems_of(page, name, selector)
        shot(page, f"phone-{name.replace(' ', '-')}")
    # The board's side panel, opened from its grid.
    page.goto(pages["board"])
    page.locator("#slot-0-1").click()
    page.locator("#slot-panel .panel-inner").wait_for()
    problems += problems_of(page, "board with its slot panel", "#slot-panel")
    shot(page, "phone-board-with-panel")
    assert problems == [], "\n".join(problems)
