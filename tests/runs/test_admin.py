"""STYLE "staff": the admin console's pages for the run substrate render for a staff user."""

import pytest
from django.contrib import admin
from django.urls import reverse

from loopweb.runs import models, services
from loopweb.runs.models import ApiToken
from tests.factories import CoverageGroupFactory, GGConfigurationFactory
from tests.runs.helpers import finish, hand_job

pytestmark = pytest.mark.django_db

RUNS_MODELS = [model for model in admin.site._registry if model._meta.app_label == "runs"]


@pytest.fixture
def populated(owner, driver, version, combination):
    """At least one row of every runs model, so list and change pages render real rows."""
    GGConfigurationFactory()
    CoverageGroupFactory(owner=owner, combinations=[combination])
    ApiToken.objects.issue(owner)
    models.ProviderBudget.objects.create(provider="acme", max_in_flight=4)
    job = hand_job(owner, version, combination, retry_count=1)
    run = finish(driver, job, outcome="hung")
    services.review_run(run=run, reviewer=owner, aesthetic_rating=3, writeup="ok")
    return run


def test_every_runs_model_is_in_the_admin():
    names = {model.__name__ for model in RUNS_MODELS}

    assert names >= {
        "Account",
        "ApiToken",
        "Case",
        "CaseVersion",
        "ModelEntry",
        "GGConfiguration",
        "Combination",
        "CoverageGroup",
        "Job",
        "Run",
        "Review",
        "ProviderBudget",
    }


@pytest.mark.parametrize("model", RUNS_MODELS, ids=lambda m: m.__name__)
def test_the_changelist_renders_for_staff(client, staff, populated, model):
    client.force_login(staff)
    url = reverse(f"admin:runs_{model._meta.model_name}_changelist")

    response = client.get(url)

    assert response.status_code == 200
    assert client.get(url, {"q": "jump"}).status_code == 200


#: Rows the services own: the admin shows them read-only and adds none
#: (tests/security/test_the_admin_keeps_the_rules.py).
SERVICE_OWNED = {"CaseVersion", "Job", "Run", "Review"}


@pytest.mark.parametrize("model", RUNS_MODELS, ids=lambda m: m.__name__)
def test_the_change_and_add_pages_render_for_staff(client, staff, populated, model):
    client.force_login(staff)
    obj = model.objects.first()

    change = client.get(reverse(f"admin:runs_{model._meta.model_name}_change", args=[obj.pk]))
    add = client.get(reverse(f"admin:runs_{model._meta.model_name}_add"))

    assert change.status_code == 200
    assert add.status_code == (403 if model.__name__ in SERVICE_OWNED else 200)


def test_non_staff_users_are_sent_to_the_admin_login(client, owner):
    client.force_login(owner)

    response = client.get(reverse("admin:runs_job_changelist"))

    assert response.status_code == 302


def test_the_models_module_exports_what_the_admin_uses():
    assert set(models.__all__) >= {m.__name__ for m in RUNS_MODELS}
