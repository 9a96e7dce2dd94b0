"""``loopweb.runs.arrays``: many values in one statement as one parameter, on both databases."""

import pytest

from loopweb.runs.arrays import in_cells, in_ids, in_keys
from loopweb.runs.cells import joined_cell_key
from loopweb.runs.models import ModelEntry

pytestmark = pytest.mark.django_db


def test_in_ids_finds_exactly_those_ids():
    entries = ModelEntry.objects.bulk_create(
        [ModelEntry(name=f"m{i}", provider="p") for i in range(5)]
    )
    wanted = {entries[1].pk, entries[3].pk, 10**12}
    found = ModelEntry.objects.filter(pk__in=in_ids(wanted)).values_list("pk", flat=True)
    assert set(found) == {entries[1].pk, entries[3].pk}


def test_in_cells_is_every_pin_with_every_combination_joined_as_cell_keys_are():
    pins = ["case-a@1/default/-", "case-b@2/hard/x"]
    combinations = ["h|m1|p", "h|m2|p|cfg"]
    keys = [joined_cell_key(p, c) for p in pins for c in combinations]
    # Any text column will do: model entries named as cells, and one cell not asked for.
    ModelEntry.objects.bulk_create(
        ModelEntry(name=key, provider="p")
        for key in [*keys, joined_cell_key("case-c@1/default/-", "h|m1|p")]
    )

    found = ModelEntry.objects.filter(name__in=in_cells(pins, combinations))

    assert sorted(found.values_list("name", flat=True)) == sorted(keys)
    assert not ModelEntry.objects.filter(name__in=in_cells([], combinations)).exists()


def test_in_keys_finds_exactly_those_keys():
    ModelEntry.objects.bulk_create(
        ModelEntry(name=name, provider="p") for name in ["a|1", "b,2", 'c"3', "d{4}"]
    )
    found = ModelEntry.objects.filter(name__in=in_keys(["b,2", 'c"3', "d{4}", "e"]))
    assert sorted(found.values_list("name", flat=True)) == ["b,2", 'c"3', "d{4}"]
    assert not ModelEntry.objects.filter(name__in=in_keys([])).exists()
