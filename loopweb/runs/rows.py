"""Model instances from rows of a statement written by hand (a driver's claim, a token's lookup:
the ORM's writing of them cost several times the database's answer), made as the ORM makes
them: each field's database converters applied, then ``Model.from_db``."""

from django.db.models import Model


class Columns[M: Model]:
    """A model's concrete fields as columns of a statement's rows, from ``start`` on."""

    def __init__(self, model: type[M], connection, *, alias: str | None = None, start: int = 0):
        fields = model._meta.concrete_fields
        quote = connection.ops.quote_name
        self.model = model
        self.names = [f.attname for f in fields]
        #: The quoted columns by field name, in order; and as ``alias.column`` (default: the table).
        self.column = {f.name: quote(f.column) for f in fields}
        self.plain = list(self.column.values())
        self.qualified = [f"{quote(alias or model._meta.db_table)}.{name}" for name in self.plain]
        self.where = slice(start, start + len(fields))
        self._pk = start + list(fields).index(model._meta.pk)
        self.converters = []
        for i, f in enumerate(fields):
            column = f.get_col(alias or model._meta.db_table)
            for convert in (
                *connection.ops.get_db_converters(column),
                *f.get_db_converters(connection),
            ):
                self.converters.append((i, convert, column))

    def instance(self, row, connection) -> M:
        values = list(row[self.where])
        for i, convert, column in self.converters:
            values[i] = convert(values[i], column, connection)
        return self.model.from_db(connection.alias, self.names, values)

    def instance_or_none(self, row, connection) -> M | None:
        """As ``instance``, or None where the row has no primary key (a ``LEFT JOIN`` that found
        nothing)."""
        if row[self._pk] is None:
            return None
        return self.instance(row, connection)
