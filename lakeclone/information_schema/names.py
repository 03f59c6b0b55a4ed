"""The names a statement may use at a point, for completion: what the role sees, nothing more.

Given the qualifier typed so far (``SHOP.SALES.``), the names that may follow
it: a database's schemas, a schema's tables, views and streams, a relation's
columns. Without one, the databases, the current database's schemas and the
current schema's relations. Read from the catalog (and, for columns, the
relation's schema), filtered as SHOW filters them: no Spark job runs for a
name, and a column list costs one read of a table's latest schema.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeclone.catalog.entries import ViewEntry
from lakeclone.catalog.names import QualifiedName
from lakeclone.information_schema.columns import relation_columns, table_or_view
from lakeclone.information_schema.visibility import sees, visible_keys

if TYPE_CHECKING:
    from lakeclone.catalog.entries import StreamEntry, TableEntry
    from lakeclone.engine.tables import Tables


@dataclass(frozen=True)
class Name:
    """A name, and the kind of object it names (``DATABASE``, ``SCHEMA``, ``TABLE``, ``VIEW``, ``STREAM``, ``COLUMN``)."""

    name: str
    kind: str


def names_after(tables: Tables, qualifier: tuple[str, ...]) -> list[Name]:
    """The names that may follow ``qualifier`` (normalized names, outermost first), sorted within each kind."""
    catalog = tables.catalog
    session = tables.session
    found: list[Name] = []
    if not qualifier:
        seen = visible_keys(tables, "DATABASES")
        found += [Name(d.name, "DATABASE") for d in catalog.objects.databases() if seen is None or (d.name,) in seen]
        if session.database is not None:
            found += _schemas(tables, session.database)
            if session.schema is not None:
                found += _relations(tables, session.database, session.schema)
        return found
    if len(qualifier) == 1:
        (first,) = qualifier
        found += _schemas(tables, first)
        if session.database is not None:
            found += _relations(tables, session.database, first)
            if session.schema is not None:
                found += _columns(tables, session.database, session.schema, first)
        return found
    if len(qualifier) == 2:
        first, second = qualifier
        found += _relations(tables, first, second)
        if session.database is not None:
            found += _columns(tables, session.database, first, second)
        return found
    if len(qualifier) == 3:
        return _columns(tables, *qualifier)
    return []


def _schemas(tables: Tables, database_name: str) -> list[Name]:
    catalog = tables.catalog
    database = catalog.objects.database(database_name)
    if database is None:
        return []
    seen = visible_keys(tables, "SCHEMAS")
    return [Name(s.name, "SCHEMA") for s in catalog.objects.schemas(database) if seen is None or (database.name, s.name) in seen]


def _relations(tables: Tables, database: str, schema_name: str) -> list[Name]:
    catalog = tables.catalog
    schema = catalog.objects.schema(database, schema_name)
    if schema is None:
        return []
    listed: list[tuple[str, list[TableEntry] | list[ViewEntry] | list[StreamEntry]]] = [
        ("TABLE", catalog.objects.tables(schema)),
        ("VIEW", catalog.views.in_schema(schema)),
        ("STREAM", catalog.streams.in_schema(schema)),
    ]
    found = []
    for kind, entries in listed:
        seen = visible_keys(tables, f"{kind}S")
        found += sorted((Name(e.name, kind) for e in entries if sees(seen, e)), key=lambda n: n.name)
    return found


def _columns(tables: Tables, database: str, schema: str, name: str) -> list[Name]:
    """A table's or view's columns, in their order; none for a stream (its table's, and METADATA$ columns)."""
    relation = table_or_view(tables.catalog, QualifiedName(database, schema, name))
    if relation is None:
        return []
    kind = "VIEWS" if isinstance(relation, ViewEntry) else "TABLES"
    if not sees(visible_keys(tables, kind), relation):
        return []
    return [Name(column.field.name.upper(), "COLUMN") for column in relation_columns(tables, relation)]
