"""A record's own page: the ended dispatch's frozen grid, drawn by the same grid component as the
live board (each slot's status, tally and pass rate), with its head (who ran and stopped it,
cost) and links to its exports; the history table links to it."""

from ladders import services
from tests.console.helpers import Browser, text_of
from tests.history.helpers import PAID, PAID_BROKEN, history
from tests.ladders.builders import climbers, make_ladder, versions, work


def ended(owner, driver, run_tasks):
    ladder = make_ladder(owner, versions(2), climbers(2), name="frozen")
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, lambda job: PAID_BROKEN if job.combination.model == "m1" else PAID)
    return ladder


def test_a_record_page_draws_its_frozen_grid(owner, owner_api, driver, run_tasks):
    ladder = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    client = Browser(owner)

    page = client.get(f"/ladders/{ladder.pk}/history/{row['id']}/")

    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('<tr id="climber-row-') == 2
    assert 'id="slot-0-0" class="slot slot-failed' in html
    assert 'id="slot-1-1" class="slot slot-passed' in html
    text = text_of(page)
    assert f"Record #{row['id']}" in text and "Failed at rung 1" in text and "Completed" in text
    assert "1 of 1 passed" in text  # a slot's tally and its pass rate, as on the board
    listing = client.get(f"/ladders/{ladder.pk}/history/").content.decode()
    assert f'href="/ladders/{ladder.pk}/history/{row["id"]}/"' in listing


def test_a_record_of_another_ladder_or_none_is_not_found(
    owner, outsider, owner_api, driver, run_tasks
):
    ladder = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    assert Browser(owner).get(f"/ladders/{ladder.pk}/history/{row['id'] + 99}/").status_code == 404
    assert Browser(outsider).get(f"/ladders/{ladder.pk}/history/{row['id']}/").status_code == 404
