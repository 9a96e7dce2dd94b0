"""Statements the ORM writes once, bound to other values at each use.

A board's partial read asks the same few questions at every change, about other cells and
climbers each time. Written by the ORM each time they cost several times what PostgreSQL takes
to answer them. A ``Prepared`` is built from a function that makes those questions (querysets,
or statements with their parameters) from its arguments: it calls it once per database with a
``Marker`` standing for each argument, keeps what the ORM wrote, and at each use puts the values
given in place of the markers among the written parameters.

A marker must reach the written parameters as it is: as a parameter of a ``RawSQL`` (such as
``loopweb.runs.arrays.in_keys``), never as a lookup's value, which a field would convert. What
the function reads besides its arguments is written in for good: a ``Prepared`` belongs with
what it was built from (a board's dispatch), not with the process.
"""

from collections.abc import Callable, Sequence

from django.db import connection

from loopweb.runs.together import Query, compiled


class Marker:
    """Stands for an argument while the ORM writes a statement."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __copy__(self) -> "Marker":
        return self  # querysets are copied as they are built: the marker stays itself

    def __deepcopy__(self, memo) -> "Marker":
        return self

    def __repr__(self) -> str:
        return f"Marker({self.name!r})"


class Prepared:
    """The statements ``build`` makes, written once per database, bound at each ``bind``."""

    def __init__(self, build: Callable[..., Sequence[Query]], *names: str):
        self._build = build
        self._names = names
        self._written: dict[str, list[tuple[str, tuple]]] = {}

    def bind(self, **values) -> list[tuple[str, list]]:
        """The statements with ``values`` (one per name) in place of their markers."""
        assert set(values) == set(self._names), "a value for every marker, and only those"
        written = self._written.get(connection.alias)
        if written is None:
            written = self._written[connection.alias] = self._write()
        return [
            (sql, [values[p.name] if isinstance(p, Marker) else p for p in params])
            for sql, params in written
        ]

    def _write(self) -> list[tuple[str, tuple]]:
        markers = {name: Marker(name) for name in self._names}
        written = [compiled(query) for query in self._build(**markers)]
        found = {p.name for _, params in written for p in params if isinstance(p, Marker)}
        assert found == set(self._names), f"markers that reached no statement: {markers}"
        return [(sql, tuple(params)) for sql, params in written]
