"""``loopweb.runs.together``: independent queries answered in one round trip on PostgreSQL, one
by one elsewhere, each with the rows it would have alone."""

import pytest
from django.db import connection
from django.db.models import Count, Max
from django.test.utils import CaptureQueriesContext

from loopweb.runs.models import ModelEntry
from loopweb.runs.together import fetch_rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def entries():
    return ModelEntry.objects.bulk_create(
        [
            ModelEntry(name="a", provider="p", launchable=True),
            ModelEntry(name="b", provider="p", launchable=False),
            ModelEntry(name="c'; DROP TABLE runs_modelentry; --", provider="q", launchable=True),
        ]
    )


def test_each_query_has_the_rows_it_has_alone_in_the_order_given(entries):
    names = ModelEntry.objects.order_by("name").values_list("name", "launchable")
    per_provider = (
        ModelEntry.objects.values("provider")
        .annotate(n=Count("id"), top=Max("id"))
        .values_list("provider", "n", "top")
        .order_by("provider")
    )
    quoted = ("SELECT name FROM runs_modelentry WHERE name = %s", [entries[2].name])

    found = fetch_rows(names, per_provider, quoted)

    assert found == [
        [tuple(row) for row in names],
        [("p", 2, entries[1].pk), ("q", 1, entries[2].pk)],
        [(entries[2].name,)],  # a parameter is quoted into the text, never run as SQL
    ]
    assert ModelEntry.objects.count() == 3


def test_a_query_nothing_can_match_answers_no_rows(entries):
    nothing = ModelEntry.objects.filter(name__in=[]).values_list("name")
    everything = ModelEntry.objects.order_by("pk").values_list("pk", flat=False)

    assert fetch_rows(nothing, everything) == [[], [(e.pk,) for e in entries]]


@pytest.mark.postgres
def test_on_postgresql_they_travel_as_one_statement(entries):
    with CaptureQueriesContext(connection) as sent:
        fetch_rows(
            ModelEntry.objects.values_list("name"),
            ModelEntry.objects.values_list("provider"),
            ("SELECT %s::int", [1]),
        )
    assert len(sent.captured_queries) == 1
