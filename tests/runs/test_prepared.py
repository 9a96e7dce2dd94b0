"""``loopweb.runs.prepared``: statements the ORM writes once, bound to other values at each use."""

import pytest
from django.db.models.expressions import RawSQL

from loopweb.runs.arrays import in_keys
from loopweb.runs.models import ModelEntry
from loopweb.runs.prepared import Prepared
from loopweb.runs.together import fetch_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def entries():
    return ModelEntry.objects.bulk_create(
        ModelEntry(name=f"m{i}", provider="even" if i % 2 == 0 else "odd") for i in range(6)
    )


def by_provider(provider):
    return (
        ModelEntry.objects.filter(provider=RawSQL("%s", (provider,)))
        .order_by("name")
        .values_list("name")
    )


def test_each_use_binds_its_values_into_what_the_orm_wrote_once(entries):
    written = []

    def build(provider):
        written.append(provider)
        return [by_provider(provider), ("SELECT CAST(%s AS TEXT)", [provider])]

    prepared = Prepared(build, "provider")
    [evens, echoed] = fetch_rows(*prepared.bind(provider="even"))
    [odds, _] = fetch_rows(*prepared.bind(provider="odd"))

    assert evens == [("m0",), ("m2",), ("m4",)] == list(by_provider("even"))
    assert odds == [("m1",), ("m3",), ("m5",)]
    assert echoed == [("even",)]
    assert len(written) == 1  # written by the ORM once, for both


def test_a_value_for_every_marker_and_only_those():
    prepared = Prepared(lambda provider: [by_provider(provider)], "provider")
    with pytest.raises(AssertionError):
        prepared.bind()
    with pytest.raises(AssertionError):
        prepared.bind(provider="even", model="m1")


def test_a_marker_a_field_would_convert_is_refused():
    """A marker given as a lookup's value would be made into text by the field, never bound."""
    prepared = Prepared(lambda name: [ModelEntry.objects.filter(name=name)], "name")
    with pytest.raises(AssertionError, match="reached no statement"):
        prepared.bind(name="m1")


@pytest.mark.postgres
def test_a_list_of_keys_is_bound_as_one_array(entries):
    prepared = Prepared(
        lambda names: [ModelEntry.objects.filter(name__in=in_keys(names)).values_list("name")],
        "names",
    )
    [found] = fetch_rows(*prepared.bind(names=["m1", "m4", "none"]))
    assert sorted(found) == [("m1",), ("m4",)]
