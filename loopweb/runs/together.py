"""Several independent queries answered in one round trip to the database.

A board read or a launch pass asks a handful of questions that do not depend on each other (a
slot's runs, the jobs in flight, the failed attempts). Asked one by one, each is a round trip;
on a busy machine each round trip is also a wait for the database's process and then for ours to
be scheduled again, which is most of what a poll costs under load. On PostgreSQL ``fetch_rows``
sends them as one multi-statement text (the client-side binding Django uses quotes each one's
parameters into it) and reads back each one's rows in turn; elsewhere it asks them one by one.
"""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet
from django.db import connection
from django.db.models import QuerySet

#: A query: a ``values_list`` queryset whose columns need no converter on PostgreSQL (numbers,
#: text, booleans, timestamps), or an SQL statement with its parameters.
Query = QuerySet | tuple[str, list | tuple]


def fetch_rows(*queries: Query) -> list[list[tuple]]:
    """Each query's rows, as tuples, in the order given."""
    with connection.cursor() as cursor:
        quote = getattr(cursor.cursor, "mogrify", None)  # client-side binding only
        if connection.vendor != "postgresql" or quote is None:
            return [_one_by_one(cursor, query) for query in queries]
        cursor.execute(";\n".join(quote(*compiled(query)) for query in queries))
        found = [cursor.fetchall()]
        while cursor.nextset():
            found.append(cursor.fetchall())
    assert len(found) == len(queries), "one result per statement"
    return found


def compiled(query: Query) -> tuple[str, list | tuple]:
    if isinstance(query, QuerySet):
        try:
            return query.query.sql_with_params()
        except EmptyResultSet:  # e.g. ``__in=[]``: nothing can match
            return "SELECT NULL WHERE false", ()
    return query


def _one_by_one(cursor, query: Query) -> list[tuple]:
    if isinstance(query, QuerySet):
        return [tuple(row) for row in query]  # through the ORM: its converters apply
    cursor.execute(*query)
    return cursor.fetchall()
