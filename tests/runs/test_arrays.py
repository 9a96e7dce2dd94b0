"""``loopweb.runs.arrays``: many values in one statement as one parameter, on both databases."""

import pytest

from loopweb.runs.arrays import in_ids, in_keys
from loopweb.runs.models import ModelEntry

pytestmark = pytest.mark.django_db


def test_in_ids_finds_exactly_those_ids():
    entries = ModelEntry.objects.bulk_create(
        [ModelEntry(name=f"m{i}", provider="p") for i in range(5)]
    )
    wanted = {entries[1].pk, entries[3].pk, 10**12}
    found = ModelEntry.objects.filter(pk__in=in_ids(wanted)).values_list("pk", flat=True)
    assert set(found) == {entries[1].pk, entries[3].pk}


def test_in_keys_finds_exactly_those_keys():
    ModelEntry.objects.bulk_create(
        ModelEntry(name=name, provider="p")
        for name in ["a|1", "b,2", 'c"3', "d{4}", "e\\5", "NULL", " f ", "g'6"]
    )
    wanted = ["b,2", 'c"3', "d{4}", "e\\5", "NULL", " f ", "g'6", "h"]
    found = ModelEntry.objects.filter(name__in=in_keys(wanted))
    assert sorted(found.values_list("name", flat=True)) == sorted(wanted[:-1])
    assert not ModelEntry.objects.filter(name__in=in_keys([])).exists()
