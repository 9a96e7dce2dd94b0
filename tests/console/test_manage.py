"""What an owner manages without the admin: combinations, coverage groups, the acceptance rule."""

from django.urls import reverse

from ladders import services
from loopweb.runs.models import Combination, CoverageGroup
from signals_app.models import AcceptanceRule
from tests.console.helpers import text_of
from tests.factories import CombinationFactory, CoverageGroupFactory
from tests.ladders.builders import PERFECT, make_ladder, versions, work


def test_an_owner_adds_a_harness_combination_checked_like_the_api(owner_client):
    url = reverse("console:combinations")
    refused = owner_client.submit(url, {"kind": "harness", "harness": "a|b", "model": "m"})
    assert refused.status_code == 400
    text = text_of(refused)
    assert "'|' is not allowed here." in text or "This field is required" in text
    assert not Combination.objects.exists()
    added = owner_client.submit(
        url,
        {"kind": "harness", "harness": "aider", "model": "gpt-z", "provider": "acme"},
        follow=True,
    )
    # Added; its model is not in the catalog yet, which it says at once.
    assert "Combination gpt-z via aider (acme) added, but it cannot be launched" in text_of(added)
    assert Combination.objects.get().key == "aider|gpt-z|acme"
    again = owner_client.submit(
        url, {"kind": "harness", "harness": "aider", "model": "gpt-z", "provider": "acme"}
    )
    assert again.status_code == 400 and "already" in text_of(again)


def test_an_owner_creates_renames_and_edits_a_group(owner_client, owner):
    a, b, c = (CombinationFactory(model=f"g{i}") for i in range(3))
    created = owner_client.submit(
        reverse("console:groups"), {"name": "frontier", "members": [b.pk, a.pk]}, follow=True
    )
    group = CoverageGroup.objects.get(owner=owner)
    assert "Group frontier created." in text_of(created)
    assert [m.combination_id for m in group.memberships.all()] == [b.pk, a.pk]

    url = reverse("console:group", args=[group.pk])
    owner_client.submit(url, {"action": "rename", "name": "front line"})
    owner_client.submit(url, {"action": "add", "combination": c.pk})
    owner_client.submit(url, {"action": "remove", "combination": b.pk})
    group.refresh_from_db()
    assert group.name == "front line"
    assert [m.combination_id for m in group.memberships.all()] == [a.pk, c.pk]

    blank = owner_client.submit(url, {"action": "rename", "name": ""})
    assert blank.status_code == 400 and "may not be blank" in text_of(blank)
    unknown = owner_client.submit(url, {"action": "add", "combination": 999999})
    assert unknown.status_code == 400 and "Unknown combination id: 999999." in text_of(unknown)


def test_a_group_page_lists_the_ladders_that_use_it(owner_client, owner):
    group = CoverageGroupFactory(owner=owner, name="used", combinations=[CombinationFactory()])
    make_ladder(owner, versions(1, prefix="ug"), [], groups=[group.pk], name="Uses it")
    page = owner_client.get(reverse("console:group", args=[group.pk]))
    assert "Uses it" in text_of(page)
    listed = owner_client.get(reverse("console:groups"))
    assert "Uses it" in text_of(listed)


def test_groups_are_their_owners(outsider_client, reviewer_client, owner):
    group = CoverageGroupFactory(owner=owner, name="mine")
    assert outsider_client.get(reverse("console:group", args=[group.pk])).status_code == 404
    assert "mine" not in text_of(outsider_client.get(reverse("console:groups")))
    assert reviewer_client.get(reverse("console:groups")).status_code == 403


def test_the_rule_is_checked_like_the_api_with_e195(owner_client, owner):
    url = reverse("console:acceptance-rule")
    body = {
        "name": "perf",
        "description": "fast",
        "requires": "bench_score",
        "excludes-events": "revert",
        "window-days": "14",
        "action": "save",
    }
    refused = owner_client.submit(url, body)
    assert refused.status_code == 400
    assert "E195: " in text_of(refused) and "requires names verdicts only" in text_of(refused)
    assert not AcceptanceRule.objects.exists()

    saved = owner_client.submit(url, {**body, "requires": "tests, referee"}, follow=True)
    assert "Acceptance rule perf saved." in text_of(saved)
    stored = AcceptanceRule.objects.get(user=owner)
    assert stored.requires == ["tests", "referee"] and stored.excludes_events == ["revert"]


def test_the_preview_reads_the_owners_latest_runs_under_the_draft(
    owner_client, owner, driver, run_tasks
):
    ladder = make_ladder(owner, versions(1, prefix="pv"), [CombinationFactory(model="pv")])
    services.start_dispatch(ladder=ladder)
    work(driver, run_tasks, PERFECT)
    url = reverse("console:acceptance-rule")
    shown = text_of(owner_client.get(url))
    assert "How your rule reads your latest runs" in shown
    assert "0 success · 0 failure · 1 unknown" in shown  # no tests verdict yet
    draft = owner_client.submit(
        url,
        {
            "name": "none",
            "description": "nothing",
            "requires": "",
            "excludes-events": "",
            "window-days": "0",
            "action": "preview",
        },
    )
    text = text_of(draft)
    assert "How this draft reads your latest runs" in text
    assert "1 success · 0 failure · 0 unknown" in text
    assert not AcceptanceRule.objects.exists()  # a preview saves nothing
