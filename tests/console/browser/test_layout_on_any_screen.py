"""The console's layout from a phone to a wide desktop: at 390 × 844, 1024 × 768, 1440 × 900 and
1920 × 1080 no page scrolls sideways (a wide grid or table may scroll inside its own box), no
card overlaps another, and nothing sticks out of the card that holds it (a fact cut off at the
card's edge, as "Finished" and "Input tokens" were on the run page at 1024 px). Screenshots of
each page at each size are kept under var/screenshots/layout-*.png."""

import pytest

from tests.console.browser.pages import console_pages, console_world

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

SCREENS = {
    "phone": {"width": 390, "height": 844},
    "1024": {"width": 1024, "height": 768},
    "1440": {"width": 1440, "height": 900},
    "1920": {"width": 1920, "height": 1080},
}

#: Every box on the page that is a card of its own, and where a reader would see one overlap
#: another or an element stick out of it.
CARDS = ".card, .section, .board, .side-panel, .history-section"

PROBLEMS = """(cards) => {
  const problems = [];
  const shown = (el) => {
    const r = el.getBoundingClientRect();
    return r.width > 1 && r.height > 1 && getComputedStyle(el).visibility !== "hidden";
  };
  const name = (el) => {
    const list = typeof el.className === "string" ? el.className.split(/\\s+/) : [];
    const classes = list.filter(Boolean);
    return [el.tagName.toLowerCase() + (el.id ? "#" + el.id : ""), ...classes].join(".");
  };
  const px = (n) => Math.round(n);
  // The nearest box between el and card that clips or scrolls sideways: it holds el.
  const held = (el, card) => {
    for (let p = el.parentElement; p && p !== card; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== "visible") return true;
    }
    return false;
  };
  const all = [...document.querySelectorAll(cards)].filter(shown);
  for (const card of all) {
    const box = card.getBoundingClientRect();
    for (const el of card.querySelectorAll("*")) {
      if (!shown(el) || held(el, card)) continue;
      const r = el.getBoundingClientRect();
      if (r.right > box.right + 1 || r.left < box.left - 1) {
        const where = `${px(r.left)}–${px(r.right)} in ${px(box.left)}–${px(box.right)}`;
        problems.push(`${name(el)} sticks out of ${name(card)} (${where})`);
      }
    }
    for (const other of all) {
      if (other === card || card.contains(other) || other.contains(card)) continue;
      const o = other.getBoundingClientRect();
      const w = Math.min(box.right, o.right) - Math.max(box.left, o.left);
      const h = Math.min(box.bottom, o.bottom) - Math.max(box.top, o.top);
      if (w > 1 && h > 1 && all.indexOf(card) < all.indexOf(other)) {
        problems.push(`${name(card)} overlaps ${name(other)} (${px(w)} × ${px(h)} px)`);
      }
    }
  }
  const wide = document.documentElement.scrollWidth;
  if (wide > innerWidth) problems.push(`the page is ${wide} px wide in ${innerWidth}`);
  return problems;
}"""

PAGES = ["run", "slot", "board", "history", "record", "record slot", "record chart", "compare",
         "editor", "queue", "ladders", "groups", "rule", "evalsets", "proposal",
         "webhooks"]  # fmt: skip


@pytest.fixture
def world(owner, reviewer, driver):
    return console_world(owner, reviewer, driver)


def check(page, shot, name: str, screen: str) -> list[str]:
    page.wait_for_load_state("networkidle")
    problems = page.evaluate(PROBLEMS, CARDS)
    shot(page, f"layout-{name.replace(' ', '-')}-{screen}")
    return [f"{name} at {screen}: {p}" for p in problems]


@pytest.mark.parametrize("screen", list(SCREENS))
def test_no_page_scrolls_sideways_overlaps_or_cuts_anything_off(
    open_page, shot, owner, world, screen
):
    pages = console_pages(world)
    page = open_page(owner)
    page.set_viewport_size(SCREENS[screen])
    problems = []
    for name in PAGES:
        response = page.goto(pages[name])
        assert response.status == 200, (name, response.status)
        problems += check(page, shot, name, screen)
    # The board with a slot's side panel open.
    page.goto(pages["board"])
    page.locator("#slot-0-1").click()
    page.locator("#slot-panel .panel-inner").wait_for()
    problems += check(page, shot, "board-with-panel", screen)
    assert problems == [], "\n".join(problems)


def test_the_run_page_keeps_its_reviews_beside_the_run_on_a_desktop(open_page, owner, world):
    page = open_page(owner)
    page.set_viewport_size(SCREENS["1440"])
    page.goto(console_pages(world)["run"])
    run = page.locator("article.card").first.bounding_box()
    reviews = page.locator(".review-form").bounding_box()
    assert reviews["x"] >= run["x"] + run["width"]  # beside it, not over it
    for term in ("Finished", "Input tokens"):
        fact = page.locator(".run-facts dt", has_text=term).first
        box = fact.bounding_box()
        assert box["x"] + box["width"] <= run["x"] + run["width"]


@pytest.mark.parametrize("screen", ["phone", "1440"])
def test_the_error_pages_are_the_consoles_own_at_any_width(
    open_page, shot, reviewer, world, screen
):
    pages = console_pages(world)
    page = open_page(reviewer)
    page.set_viewport_size(SCREENS[screen])
    assert page.goto(pages["groups"]).status == 403
    assert page.locator("h1").inner_text() == "Not allowed"
    assert page.locator(".navlinks").is_visible()
    problems = check(page, shot, "403", screen)
    assert page.goto("/no-such-page/").status == 404
    assert page.locator("h1").inner_text() == "Page not found"
    problems += check(page, shot, "404", screen)
    assert problems == [], "\n".join(problems)
