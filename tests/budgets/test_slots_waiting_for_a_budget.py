"""The board and the slot panel show the slots whose next job waits on a provider budget at its
cap, and which budget; waiting never makes a board read Needs attention."""

import pytest
from django.urls import reverse

from ladders import services as ladder_services
from loopweb.runs import services
from tests.budgets.helpers import budget
from tests.console.helpers import Browser, text_of
from tests.ladders.builders import climbers, make_ladder, progress_of, versions

pytestmark = pytest.mark.django_db


@pytest.fixture
def waiting_ladder(owner, driver, run_tasks):
    """Three climbers on acme under a budget of one in flight: one claimed, two waiting."""
    budget(max_in_flight=1)
    ladder = make_ladder(owner, versions(2, prefix="w"), climbers(3, prefix="wm"))
    ladder_services.start_dispatch(ladder=ladder)
    run_tasks()
    assert len(services.claim_jobs(driver=driver, limit=5)) == 1
    return ladder


def test_the_board_names_the_budget_and_the_slots_waiting_on_it(owner, waiting_ladder):
    page = Browser(owner).get(reverse("console:board", args=[waiting_ladder.pk]))

    text = text_of(page)
    assert "Waiting for a provider budget" in text
    assert "acme (every model) · 1 of 1 in flight · 2 slots:" in text
    assert "wm2 via aider (acme) on rung 1, wm3 via aider (acme) on rung 1" in text
    assert "Needs attention" not in text


def test_waiting_never_reads_needs_attention(waiting_ladder):
    board = progress_of(waiting_ladder)
    assert board["ladder"]["status"] == "running"
    assert {c["status"] for c in board["climbers"]} == {"running"}


def test_the_slot_panel_says_which_budget_its_job_waits_on(owner, waiting_ladder):
    board = progress_of(waiting_ladder)
    rung = board["dispatch"]["rungs"][0]["id"]
    browser = Browser(owner)

    waiting = browser.get(reverse("console:slot", args=[waiting_ladder.pk, 2, rung]))
    claimed = browser.get(reverse("console:slot", args=[waiting_ladder.pk, 0, rung]))

    assert "Waiting for the acme (every model) budget: 1 of 1 in flight." in text_of(waiting)
    assert "Waiting for the" not in text_of(claimed)


def test_a_board_refresh_follows_a_budget_that_fills_or_empties(
    owner, driver, run_tasks, waiting_ladder
):
    browser = Browser(owner)
    page = browser.get(reverse("console:board", args=[waiting_ladder.pk]))
    version = page.context["version"]
    refresh = reverse("console:board-refresh", args=[waiting_ladder.pk])
    assert browser.get(refresh, {"v": version}).status_code == 204

    # Staff raise the cap: nothing of this board changed but what it waits on.
    from loopweb.runs.models import ProviderBudget

    ProviderBudget.objects.update(max_in_flight=5)
    changed = browser.get(refresh, {"v": version})

    assert changed.status_code == 200
    assert "Waiting for a provider budget" not in text_of(changed)


def test_progress_reads_waiting_for_on_each_slot_whose_job_waits(owner_api, waiting_ladder):
    body = owner_api.get(f"/api/ladders/{waiting_ladder.pk}/progress").json()

    rung = body["dispatch"]["rungs"][0]["id"]
    waiting = {
        climber["label"]: slot.get("waitingFor")
        for climber in body["climbers"]
        for slot in climber["slots"]
        if slot["rung"] == rung
    }
    budget_id = next(w for w in waiting.values() if w)["budget"]
    assert waiting == {
        "wm1 via aider (acme)": None,
        "wm2 via aider (acme)": {"budget": budget_id, "provider": "acme", "model": None},
        "wm3 via aider (acme)": {"budget": budget_id, "provider": "acme", "model": None},
    }
    assert body["ladder"]["status"] == "running"


def _waiting_labels(body: dict) -> dict[str, bool]:
    return {
        climber["label"]: any("waitingFor" in slot for slot in climber["slots"])
        for climber in body["climbers"]
    }


@pytest.fixture
def noted_at_once(monkeypatch):
    """Every read notes the budgets' state (a process notes it at most once a second)."""
    from loopweb.runs import waiting_marks

    monkeypatch.setattr(waiting_marks, "EVERY", 0.0)
    monkeypatch.setattr(waiting_marks, "_due", 0.0)


# A version is a snapshot of committed writes: these read it across commits.
@pytest.mark.django_db(transaction=True)
def test_a_version_is_not_current_once_what_its_slots_wait_on_changed(
    owner_api, waiting_ladder, noted_at_once
):
    url = f"/api/ladders/{waiting_ladder.pk}/progress"
    first = owner_api.get(url)
    assert _waiting_labels(first.json())["wm2 via aider (acme)"]
    assert owner_api.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304

    # Staff raise the cap: nothing of this board changed but what its slots wait on.
    from loopweb.runs.models import ProviderBudget

    ProviderBudget.objects.update(max_in_flight=5)
    again = owner_api.get(url, HTTP_IF_NONE_MATCH=first["ETag"])

    assert again.status_code == 200
    assert not any(_waiting_labels(again.json()).values())
    assert again["ETag"] != first["ETag"]


@pytest.mark.django_db(transaction=True)
def test_since_a_version_answers_the_slots_that_began_or_stopped_waiting(
    owner_api, waiting_ladder, noted_at_once
):
    from loopweb.runs.models import ProviderBudget

    url = f"/api/ladders/{waiting_ladder.pk}/progress"
    version = owner_api.get(url).json()["version"]
    ProviderBudget.objects.update(max_in_flight=5)

    stopped = owner_api.get(url, {"since": version}).json()
    assert stopped["since"] == version
    assert _waiting_labels(stopped) == {
        "wm2 via aider (acme)": False,
        "wm3 via aider (acme)": False,
    }

    ProviderBudget.objects.update(max_in_flight=1)
    began = owner_api.get(url, {"since": stopped["version"]}).json()
    assert began["since"] == stopped["version"]
    assert _waiting_labels(began) == {"wm2 via aider (acme)": True, "wm3 via aider (acme)": True}
