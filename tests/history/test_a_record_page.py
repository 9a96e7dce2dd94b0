"""A record's own page: the ended dispatch's frozen grid, drawn by the same grid component as the
live board (each slot's status, tally and pass rate), with its head (who ran and stopped it,
cost) and links to its exports; the history table links to it."""

from ladders import services
from ladders.models import FinalStanding
from loopweb.history.models import DispatchRecord
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


def slot_runs(record_id: int, index: int, number: int) -> list[int]:
    """The run ids a record's standing holds for one slot."""
    standing = DispatchRecord.objects.get(pk=record_id).standing
    return list(standing.climbers[index]["runs"][number - 1])


def test_a_record_slot_lists_the_runs_it_counted_each_linking_to_its_run_page(
    owner, owner_api, driver, run_tasks
):
    ladder = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    rungs = list(ladder.rungs.order_by("position").values_list("rung_id", flat=True))
    held = slot_runs(row["id"], 1, 2)
    assert held
    client = Browser(owner)
    url = f"/ladders/{ladder.pk}/history/{row['id']}/slots/1/{rungs[1]}/"

    panel = client.get(url, headers={"HX-Request": "true"})
    page = client.get(url)

    assert panel.status_code == 200 and page.status_code == 200
    html = panel.content.decode()
    assert "<html" not in html  # the record page's side panel, not a page
    for run_id in held:
        assert f'href="/runs/{run_id}/?ladder={ladder.pk}"' in html
        assert f'data-run="{run_id}"' in page.content.decode()
    text = text_of(panel)
    assert "m2 via aider (acme) on Step 2" in text and "1 of 1 passed" in text
    assert f"{len(held)} run" in text


def test_the_record_page_draws_a_slot_named_in_its_address_open_and_its_grid_opens_the_others(
    owner, owner_api, driver, run_tasks
):
    ladder = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    rungs = list(ladder.rungs.order_by("position").values_list("rung_id", flat=True))
    [run_id] = slot_runs(row["id"], 0, 1)
    client = Browser(owner)

    page = client.get(f"/ladders/{ladder.pk}/history/{row['id']}/", {"slot": f"0/{rungs[0]}"})

    html = page.content.decode()
    assert 'class="board-layout has-panel"' in html
    assert f'data-run="{run_id}"' in html
    slot_url = f"/ladders/{ladder.pk}/history/{row['id']}/slots/0/RUNG/"
    assert f'data-slot-url="{slot_url}"' in html
    closed = client.get(f"/ladders/{ladder.pk}/history/{row['id']}/", {"slot": "9/nope"})
    assert closed.status_code == 200 and "has-panel" not in closed.content.decode()


def test_an_older_records_slot_still_lists_its_runs_after_a_new_run_replaced_its_dispatch(
    owner, owner_api, driver, run_tasks
):
    ladder = ended(owner, driver, run_tasks)
    services.start_dispatch(ladder=ladder, by=owner)
    work(driver, run_tasks, PAID)
    first, latest = sorted(r["id"] for r in history(owner_api, ladder)["results"])
    rung = ladder.rungs.order_by("position").values_list("rung_id", flat=True)[0]
    [counted] = slot_runs(first, 0, 1)
    client = Browser(owner)

    older = client.get(f"/ladders/{ladder.pk}/history/{first}/slots/0/{rung}/")

    assert older.status_code == 200
    assert f'data-run="{counted}"' in older.content.decode()
    assert "0 of 1 passed" in text_of(older)  # m1 failed rung 1 in the first dispatch


def test_a_record_whose_standing_keeps_no_runs_says_so_and_keeps_its_tally(
    owner, owner_api, driver, run_tasks
):
    ladder = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    standing = DispatchRecord.objects.get(pk=row["id"]).standing
    # As a record kept before records held their slots' runs reads (ladders.document).
    bare = [{**c, "runs": [[] for _ in c["runs"]]} for c in standing.slots]
    FinalStanding.objects.filter(pk=standing.pk).update(slots=bare)
    rung = ladder.rungs.order_by("position").values_list("rung_id", flat=True)[0]

    page = Browser(owner).get(f"/ladders/{ladder.pk}/history/{row['id']}/slots/0/{rung}/")

    assert page.status_code == 200
    assert "not the ids of the runs it counted" in text_of(page)
    assert 'data-run="' not in page.content.decode()
    assert "0 of 1 passed" in text_of(page)


def test_a_slot_no_record_has_is_not_found(owner, outsider, owner_api, driver, run_tasks):
    ladder = ended(owner, driver, run_tasks)
    [row] = history(owner_api, ladder)["results"]
    rung = ladder.rungs.order_by("position").values_list("rung_id", flat=True)[0]
    base = f"/ladders/{ladder.pk}/history/{row['id']}/slots"
    client = Browser(owner)
    assert client.get(f"{base}/2/{rung}/").status_code == 404
    assert client.get(f"{base}/0/no-such-rung/").status_code == 404
    other = f"/ladders/{ladder.pk}/history/{row['id'] + 9}/slots/0/{rung}/"
    assert client.get(other).status_code == 404
    assert Browser(outsider).get(f"{base}/0/{rung}/").status_code == 404
