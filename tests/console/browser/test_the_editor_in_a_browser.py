"""The ladder editor under a quick hand: nothing the user picks or types while the editor is
being swapped, or while one of its requests is in flight, is lost."""

import pytest
from playwright.sync_api import expect

from tests.factories import CombinationFactory
from tests.ladders.builders import versions

pytestmark = [
    pytest.mark.browser,
    pytest.mark.xdist_group("browser"),
    pytest.mark.django_db(transaction=True),
]

#: Pick a case the instant the editor has been swapped in: after the swap, before anything else
#: the page would do in a later task. A user that fast must not lose the pick.
PICK_RIGHT_AFTER_THE_SWAP = """slug => document.body.addEventListener('htmx:afterSwap', () => {
    setTimeout(() => {
        const select = document.getElementById('add-case');
        select.value = slug;
        select.dispatchEvent(new Event('change', {bubbles: true}));
        window.pickedAfterSwap = true;
    }, 0);
}, {once: true})"""


def test_a_pick_made_the_moment_the_editor_is_swapped_in_is_not_lost(open_page, owner):
    versions(1, prefix="jump")
    page = open_page(owner)
    page.goto("/ladders/new/")
    page.evaluate(PICK_RIGHT_AFTER_THE_SWAP, "jump-1")

    page.get_by_role("button", name="Save ladder").click()  # no name: the editor is swapped

    # A function, not an expression: Playwright evaluates an expression with eval(), which the
    # page's Content-Security-Policy refuses.
    page.wait_for_function("() => window.pickedAfterSwap === true")
    expect(page.get_by_label("Case", exact=True)).to_have_value("jump-1")
    expect(page.get_by_label("Version", exact=True)).to_have_value("1")


def test_the_editor_holds_still_while_its_request_is_in_flight(open_page, owner):
    versions(2, prefix="jump")
    CombinationFactory(model="gpt-x")
    page = open_page(owner)
    page.goto("/ladders/new/")
    page.get_by_label("Name", exact=True).fill("Platformer climb")

    held = []

    def hold_the_first_post(route):
        if route.request.method == "POST" and not held:
            held.append(route)
        else:
            route.continue_()

    page.route("**/ladders/new/", hold_the_first_post)
    page.get_by_label("Case", exact=True).select_option("jump-2")

    # While the pick is in flight, nothing can be typed or picked that its answer would undo.
    expect(page.locator("#editor-controls")).to_have_attribute("disabled", "")
    expect(page.get_by_label("Name", exact=True)).to_be_disabled()
    expect(page.get_by_label("gpt-x via aider (acme)")).to_be_disabled()
    # The route's handler runs in this process only when Playwright next hears from the browser,
    # which the expectations above need not wait for: listen until it has run.
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    held[0].continue_()

    expect(page.get_by_label("Version", exact=True)).to_have_value("1")
    expect(page.get_by_label("Case", exact=True)).to_be_focused()  # where the pick was made
    expect(page.get_by_label("Name", exact=True)).to_be_enabled()
    expect(page.get_by_label("Name", exact=True)).to_have_value("Platformer climb")
    page.get_by_label("Name", exact=True).fill("Platformer climb, second try")
    page.get_by_role("button", name="Add rung").click()
    expect(page.locator("#editor-status")).to_contain_text("(jump-2@1)")
    expect(page.get_by_label("Name", exact=True)).to_have_value("Platformer climb, second try")
