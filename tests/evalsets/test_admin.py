"""Every verify gate model is in the admin, with list columns, filters and search that work."""

import pytest
from django.test import Client

from tests.evalsets.helpers import regressed_and_costlier
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

MODELS = ["evalset", "evalsetrun", "proposal", "outcomeresult", "revertdraft", "advisoryflag"]


@pytest.fixture
def staff_client(db):
    staff = UserFactory(username="sam")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def gate_data(owner):
    regressed, _ = regressed_and_costlier(owner)
    return regressed.evalset


@pytest.mark.parametrize("model", MODELS)
def test_each_changelist_and_change_page_renders(staff_client, gate_data, model):
    from django.apps import apps

    listing = staff_client.get(f"/admin/evalsets/{model}/?q=a")
    assert listing.status_code == 200
    obj = apps.get_model("evalsets", model).objects.first()
    assert staff_client.get(f"/admin/evalsets/{model}/{obj.pk}/change/").status_code == 200


def test_the_admin_adds_nothing_by_hand(staff_client, db):
    for model in MODELS:
        assert staff_client.get(f"/admin/evalsets/{model}/add/").status_code == 403
