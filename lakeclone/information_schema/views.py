"""The INFORMATION_SCHEMA views, built from the catalog and the tables' Delta logs when a query names one.

``INFORMATION_SCHEMA.TABLES`` reads the current database's view;
``db.INFORMATION_SCHEMA.TABLES`` another database's. Each lists only what the
session's role sees, as SHOW does: objects it holds a privilege on, in a
schema and database it may use. Reading one needs USAGE on its database,
which the binder's privilege check asks for like any name's container.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import results
from lakeclone.engine.schema import snowflake_type
from lakeclone.engine.show import table_attributes
from lakeclone.information_schema.columns import Column, table_columns, view_columns
from lakeclone.information_schema.visibility import sees, visible_keys

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import DatabaseEntry, SchemaEntry, TableEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.engine.tables import Tables

SCHEMA = "INFORMATION_SCHEMA"

TABLES_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, TABLE_OWNER STRING, TABLE_TYPE STRING, "
    "IS_TRANSIENT STRING, CLUSTERING_KEY STRING, ROW_COUNT BIGINT, BYTES BIGINT, RETENTION_TIME BIGINT, "
    "CREATED TIMESTAMP, LAST_ALTERED TIMESTAMP, AUTO_CLUSTERING_ON STRING, COMMENT STRING"
)
COLUMNS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, COLUMN_NAME STRING, ORDINAL_POSITION BIGINT, "
    "COLUMN_DEFAULT STRING, IS_NULLABLE STRING, DATA_TYPE STRING, CHARACTER_MAXIMUM_LENGTH BIGINT, "
    "NUMERIC_PRECISION BIGINT, NUMERIC_SCALE BIGINT, IS_IDENTITY STRING, IDENTITY_START STRING, "
    "IDENTITY_INCREMENT STRING, COMMENT STRING"
)
VIEWS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, TABLE_OWNER STRING, VIEW_DEFINITION STRING, "
    "CHECK_OPTION STRING, IS_UPDATABLE STRING, INSERTABLE_INTO STRING, IS_SECURE STRING, CREATED TIMESTAMP, COMMENT STRING"
)
SCHEMATA_SCHEMA = (
    "CATALOG_NAME STRING, SCHEMA_NAME STRING, SCHEMA_OWNER STRING, IS_TRANSIENT STRING, IS_MANAGED_ACCESS STRING, "
    "RETENTION_TIME BIGINT, CREATED TIMESTAMP, COMMENT STRING"
)
TABLE_PRIVILEGES_SCHEMA = (
    "GRANTOR STRING, GRANTEE STRING, TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, "
    "PRIVILEGE_TYPE STRING, IS_GRANTABLE STRING, WITH_HIERARCHY STRING"
)


def bind_information_schema(tables: Tables, table: exp.Table, name: QualifiedName) -> exp.Expression | None:
    """``[db.]INFORMATION_SCHEMA.<view>`` bound to its rows for the session's role; None for any other name."""
    if name.schema != SCHEMA or name.name not in VIEWS:
        return None
    database = tables.catalog.objects.database(name.database)
    if database is None:
        return None
    frame = VIEWS[name.name](tables, database)
    alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name.name))
    return tables.bind_frame(frame, alias)


def _tables(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    schemas = catalog.objects.schemas(database)
    seen_tables, seen_views = visible_keys(tables, "TABLES"), visible_keys(tables, "VIEWS")
    listed = [table for table in (t for s in schemas for t in catalog.objects.tables(s)) if sees(seen_tables, table)]
    counts = tables.delta.latest_counts([table.location for table in listed])
    settings = catalog.parameters.table_parameters(listed)
    data: list[tuple[Any, ...]] = []
    for table in listed:
        attributes = table_attributes(catalog, table.id)
        count = counts[table.location]
        data.append(
            (
                table.database,
                table.schema,
                table.name,
                catalog.access.owner(ObjectKind.TABLE, table.id) or None,
                "BASE TABLE",
                "NO",
                attributes["cluster_by"] or None,
                count.rows,
                count.size,
                int(settings[table.id][params.RETENTION]),
                table.created_at,
                _last_altered(tables, table, count.version),
                attributes["automatic_clustering"],
                settings[table.id]["COMMENT"] or None,
            )
        )
    for view in (v for s in schemas for v in catalog.views.in_schema(s)):
        if sees(seen_views, view):
            comment = catalog.parameters.of(view.id).get("COMMENT") or None
            owner = catalog.access.owner(ObjectKind.VIEW, view.id) or None
            data.append(
                (
                    view.database,
                    view.schema,
                    view.name,
                    owner,
                    "VIEW",
                    "NO",
                    None,
                    None,
                    None,
                    None,
                    view.created_at,
                    view.created_at,
                    "OFF",
                    comment,
                )
            )
    return results.rows(tables.spark, TABLES_SCHEMA, sorted(data, key=_by_name))


def _last_altered(tables: Tables, table: TableEntry, version: int) -> dt.datetime:
    """When a table last changed: its latest commit's time by the Lake's clock (its creation, for a clone made since)."""
    commits = tables.log(table).commits_after(version - 1)
    return max(commits[-1].timestamp, table.created_at) if commits else table.created_at


def _columns(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    schemas = catalog.objects.schemas(database)
    seen_tables, seen_views = visible_keys(tables, "TABLES"), visible_keys(tables, "VIEWS")
    data: list[tuple[Any, ...]] = []
    for table in (t for s in schemas for t in catalog.objects.tables(s)):
        if sees(seen_tables, table):
            data += _column_rows(table.database, table.schema, table.name, table_columns(tables, table))
    for view in (v for s in schemas for v in catalog.views.in_schema(s)):
        if sees(seen_views, view):
            data += _column_rows(view.database, view.schema, view.name, view_columns(tables, view))
    return results.rows(tables.spark, COLUMNS_SCHEMA, sorted(data, key=lambda row: (*_by_name(row), row[4])))


def _column_rows(database: str, schema: str, name: str, columns: Sequence[Column]) -> Iterable[tuple[Any, ...]]:
    for position, column in enumerate(columns, 1):
        field = column.field
        kind, length, precision, scale = snowflake_type(field)
        yield (
            database,
            schema,
            name,
            field.name.upper(),
            position,
            column.value_default,
            "YES" if field.nullable else "NO",
            kind,
            length,
            precision,
            scale,
            "YES" if column.identity is not None else "NO",
            *(column.identity or (None, None)),
            field.metadata.get("comment"),
        )


def _views(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    seen = visible_keys(tables, "VIEWS")
    data = [
        (
            view.database,
            view.schema,
            view.name,
            catalog.access.owner(ObjectKind.VIEW, view.id) or None,
            view.definition,
            "NONE",
            "NO",
            "NO",
            "NO",
            view.created_at,
            catalog.parameters.of(view.id).get("COMMENT") or None,
        )
        for schema in catalog.objects.schemas(database)
        for view in catalog.views.in_schema(schema)
        if sees(seen, view)
    ]
    return results.rows(tables.spark, VIEWS_SCHEMA, sorted(data, key=_by_name))


def _schemata(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    visible = visible_keys(tables, "SCHEMAS")
    data: list[tuple[Any, ...]] = [
        (
            database.name,
            SCHEMA,
            None,
            "NO",
            "NO",
            1,
            database.created_at,
            "Views describing the contents of schemas in this database",
        )
    ]
    for schema in catalog.objects.schemas(database):
        if visible is None or (database.name, schema.name) in visible:
            retention = int(catalog.parameters.effective(params.RETENTION, _containers(database, schema))[0])
            comment = catalog.parameters.of(schema.id).get("COMMENT") or None
            owner = catalog.access.owner(ObjectKind.SCHEMA, schema.id) or None
            data.append((database.name, schema.name, owner, "NO", "NO", retention, schema.created_at, comment))
    return results.rows(tables.spark, SCHEMATA_SCHEMA, sorted(data, key=lambda row: row[1]))


def _containers(database: DatabaseEntry, schema: SchemaEntry) -> list[tuple[ObjectKind, str]]:
    return [(ObjectKind.SCHEMA, schema.id), (ObjectKind.DATABASE, database.id)]


def _table_privileges(tables: Tables, database: DatabaseEntry) -> DataFrame:
    """Each privilege on a table or view the role sees, ownership included, as Snowflake lists them."""
    catalog = tables.catalog
    seen = {ObjectKind.TABLE: visible_keys(tables, "TABLES"), ObjectKind.VIEW: visible_keys(tables, "VIEWS")}
    data: list[tuple[Any, ...]] = []
    for schema in catalog.objects.schemas(database):
        for kind, visible in seen.items():
            for entry in catalog.schema_objects.in_schema(kind, schema):
                if not sees(visible, entry):
                    continue
                object_id, name = entry.id, entry.name
                owner = catalog.access.owner(kind, object_id)
                if owner:
                    data.append((owner, owner, database.name, schema.name, name, "OWNERSHIP", "YES", "NO"))
                for grant in catalog.access.grants_on(kind, object_id):
                    grantable = "YES" if grant.grant_option else "NO"
                    data.append(
                        (grant.granted_by, grant.role, database.name, schema.name, name, grant.privilege, grantable, "NO")
                    )
    return results.rows(
        tables.spark, TABLE_PRIVILEGES_SCHEMA, sorted(data, key=lambda row: (row[2], row[3], row[4], row[1], row[5]))
    )


def _by_name(row: Sequence[Any]) -> tuple[str, str, str]:
    return row[0], row[1], row[2]


VIEWS: dict[str, Callable[[Tables, DatabaseEntry], DataFrame]] = {
    "TABLES": _tables,
    "COLUMNS": _columns,
    "VIEWS": _views,
    "SCHEMATA": _schemata,
    "TABLE_PRIVILEGES": _table_privileges,
}
"""Each view by name: its rows for the session's role in one database."""
