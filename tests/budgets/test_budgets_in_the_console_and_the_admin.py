"""Staff edit provider budgets in the console and the admin; owners see them (and their figures)
and change nothing."""

import pytest

from loopweb.runs import services
from loopweb.runs.models import ProviderBudget
from tests.budgets.helpers import budget, queue, starts
from tests.console.helpers import Browser, text_of

pytestmark = pytest.mark.django_db


def test_owners_see_each_budget_with_its_figures_and_no_form(owner, driver, version, acme):
    budget(max_in_flight=2, per_minute=30)
    budget(provider="zenith", model="zen-1", enabled=False)
    queue(owner, version, acme, n=3)
    services.claim_jobs(driver=driver, limit=5)

    page = Browser(owner).get("/budgets/")

    assert page.status_code == 200
    text = text_of(page)
    assert "acme every model 2 of 2 2 of 30 full: jobs wait" in text
    assert "zenith zen-1 0 of no cap 0 of no cap disabled" in text
    assert "Add a budget" not in text and "Change" not in text


def test_staff_add_change_and_delete_a_budget_in_the_console(staff):
    browser = Browser(staff)
    answer = browser.submit(
        "/budgets/", {"provider": "acme", "model": "", "maxInFlight": "16", "enabled": "on"}
    )
    assert answer.status_code == 302
    limit = ProviderBudget.objects.get()
    assert (limit.provider, limit.model, limit.max_in_flight, limit.per_minute) == (
        "acme", "", 16, None,
    )  # fmt: skip

    answer = browser.submit(
        f"/budgets/{limit.pk}/",
        {"provider": "acme", "model": "", "maxInFlight": "8", "perMinute": "120"},
    )
    assert answer.status_code == 302
    limit.refresh_from_db()
    assert (limit.max_in_flight, limit.per_minute, limit.enabled) == (8, 120, False)

    assert browser.submit(f"/budgets/{limit.pk}/", {"delete": "1"}).status_code == 302
    assert not ProviderBudget.objects.exists()


def test_the_console_refuses_what_the_api_refuses_with_the_same_words(staff):
    browser = Browser(staff)
    answer = browser.submit("/budgets/", {"provider": "acme", "maxInFlight": "0"})

    assert answer.status_code == 400
    assert "Ensure this value is greater than or equal to 1." in text_of(answer)
    answer = browser.submit("/budgets/", {"provider": "acme", "perMinute": "many"})
    assert answer.status_code == 400
    assert "A valid integer is required." in text_of(answer)
    assert not ProviderBudget.objects.exists()


def test_an_owner_cannot_post_to_the_budgets(owner):
    limit = budget(max_in_flight=2)
    browser = Browser(owner)

    assert browser.submit("/budgets/", {"provider": "zenith"}).status_code == 403
    assert browser.submit(f"/budgets/{limit.pk}/", {"delete": "1"}).status_code == 403
    assert ProviderBudget.objects.count() == 1


def test_staff_edit_a_budget_in_the_admin_and_see_its_figures(staff, owner, driver, version, acme):
    limit = budget(max_in_flight=4)
    queue(owner, version, acme, n=2)
    services.claim_jobs(driver=driver, limit=5)
    browser = Browser(staff)

    listing = browser.get("/admin/runs/providerbudget/")
    assert listing.status_code == 200
    assert "4 / none" in text_of(listing)
    page = browser.get(f"/admin/runs/providerbudget/{limit.pk}/change/")
    assert page.status_code == 200
    answer = browser.submit(
        f"/admin/runs/providerbudget/{limit.pk}/change/",
        {"provider": "acme", "model": "", "max_in_flight": "6", "per_minute": "", "enabled": "on"},
    )
    assert answer.status_code == 302, text_of(answer)[:2000]
    limit.refresh_from_db()
    assert limit.max_in_flight == 6
    assert sum(starts(limit).values()) == 2  # the claims' state was kept


def test_owners_have_no_budget_admin(owner):
    assert Browser(owner).get("/admin/runs/providerbudget/").status_code == 302
