"""The INFORMATION_SCHEMA views, built from the catalog and the tables' Delta logs when a query names one.

``INFORMATION_SCHEMA.TABLES`` reads the current database's view;
``db.INFORMATION_SCHEMA.TABLES`` another database's. Each lists only what the
session's role sees, as SHOW does: objects it holds a privilege on, in a
schema and database it may use. Reading one needs USAGE on its database,
which the binder's privilege check asks for like any name's container.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry, results
from lakeclone.engine.compiler import spark_sql
from lakeclone.engine.show import table_attributes

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField

    from lakeclone.catalog.entries import DatabaseEntry, SchemaEntry, TableEntry, ViewEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.engine.tables import Tables

SCHEMA = "INFORMATION_SCHEMA"

TABLES_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, TABLE_OWNER STRING, TABLE_TYPE STRING, "
    "IS_TRANSIENT STRING, CLUSTERING_KEY STRING, ROW_COUNT BIGINT, BYTES BIGINT, RETENTION_TIME BIGINT, "
    "CREATED TIMESTAMP, AUTO_CLUSTERING_ON STRING, COMMENT STRING"
)
COLUMNS_SCHEMA = (
    "TABLE_CATALOG STRING, TABLE_SCHEMA STRING, TABLE_NAME STRING, COLUMN_NAME STRING, ORDINAL_POSITION BIGINT, "
    "COLUMN_DEFAULT STRING, IS_NULLABLE STRING, DATA_TYPE STRING, CHARACTER_MAXIMUM_LENGTH BIGINT, "
    "NUMERIC_PRECISION BIGINT, NUMERIC_SCALE BIGINT, COMMENT STRING"
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

# Snowflake's length of a VARCHAR declared without one.
_TEXT_LENGTH = 16_777_216


def bind_information_schema(tables: Tables, table: exp.Table, name: QualifiedName) -> exp.Expression | None:
    """``[db.]INFORMATION_SCHEMA.<view>`` bound to its rows for the session's role; None for any other name."""
    if name.schema != SCHEMA or name.name not in VIEWS:
        return None
    database = tables.catalog.database(name.database)
    if database is None:
        return None
    frame = VIEWS[name.name](tables, database)
    alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(name.name))
    return tables.bind_frame(frame, alias)


def _tables(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    schemas = catalog.schemas(database)
    seen_tables, seen_views = _visible(tables, "TABLES"), _visible(tables, "VIEWS")
    listed = [table for table in (t for s in schemas for t in catalog.tables(s)) if _sees(seen_tables, table)]
    counts = tables.delta.latest_counts([table.location for table in listed])
    settings = catalog.table_parameters(listed)
    data: list[tuple[Any, ...]] = []
    for table in listed:
        attributes = table_attributes(catalog, table.id)
        count = counts[table.location]
        data.append(
            (
                table.database,
                table.schema,
                table.name,
                catalog.owner("TABLE", table.id) or None,
                "BASE TABLE",
                "NO",
                attributes["cluster_by"] or None,
                count.rows,
                count.size,
                int(settings[table.id][params.RETENTION]),
                table.created_at,
                attributes["automatic_clustering"],
                settings[table.id]["COMMENT"] or None,
            )
        )
    for view in (v for s in schemas for v in catalog.views(s)):
        if _sees(seen_views, view):
            comment = catalog.parameters(view.id).get("COMMENT") or None
            owner = catalog.owner("VIEW", view.id) or None
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
                    "OFF",
                    comment,
                )
            )
    return results.rows(tables.spark, TABLES_SCHEMA, sorted(data, key=_by_name))


def _columns(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    schemas = catalog.schemas(database)
    seen_tables, seen_views = _visible(tables, "TABLES"), _visible(tables, "VIEWS")
    data: list[tuple[Any, ...]] = []
    for table in (t for s in schemas for t in catalog.tables(s)):
        if not _sees(seen_tables, table):
            continue
        attributes: dict[str, dict[str, str | None]] = {}
        for supplier in registry.COLUMN_ATTRIBUTES:
            for column, values in supplier(catalog, table.id).items():
                attributes.setdefault(column, {}).update(values)
        fields = tables.log(table).schema(tables.current_version(table)).fields
        data += _column_rows(table.database, table.schema, table.name, fields, attributes)
    for view in (v for s in schemas for v in catalog.views(s)):
        if _sees(seen_views, view):
            # A view's columns are what its query yields now: Spark analyses it, and runs nothing.
            reference = exp.table_(view.name, db=view.schema, catalog=view.database, quoted=True)
            fields = tables.spark.sql(spark_sql(exp.select("*").from_(reference), tables)).schema.fields
            data += _column_rows(view.database, view.schema, view.name, fields, {})
    return results.rows(tables.spark, COLUMNS_SCHEMA, sorted(data, key=lambda row: (*_by_name(row), row[4])))


def _column_rows(
    database: str, schema: str, name: str, fields: Sequence[StructField], attributes: dict[str, dict[str, str | None]]
) -> Iterable[tuple[Any, ...]]:
    for position, field in enumerate(fields, 1):
        kind, length, precision, scale = snowflake_type(field)
        yield (
            database,
            schema,
            name,
            field.name.upper(),
            position,
            attributes.get(field.name.upper(), {}).get("default"),
            "YES" if field.nullable else "NO",
            kind,
            length,
            precision,
            scale,
            field.metadata.get("comment"),
        )


def snowflake_type(field: StructField) -> tuple[str, int | None, int | None, int | None]:
    """A column's type as Snowflake's INFORMATION_SCHEMA.COLUMNS gives it: (DATA_TYPE, length, precision, scale)."""
    from pyspark.sql import types as T

    kind = field.dataType
    if isinstance(kind, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "NUMBER", None, 38, 0
    if isinstance(kind, T.DecimalType):
        return "NUMBER", None, kind.precision, kind.scale
    if isinstance(kind, (T.FloatType, T.DoubleType)):
        return "FLOAT", None, None, None
    if isinstance(kind, (T.StringType, T.CharType, T.VarcharType)):
        declared = str(field.metadata.get("__CHAR_VARCHAR_TYPE_STRING", ""))
        length = int(declared[declared.index("(") + 1 : -1]) if "(" in declared else _TEXT_LENGTH
        return "TEXT", length, None, None
    named = {
        T.BooleanType: "BOOLEAN",
        T.DateType: "DATE",
        T.TimestampType: "TIMESTAMP_LTZ",
        T.TimestampNTZType: "TIMESTAMP_NTZ",
        T.BinaryType: "BINARY",
        T.VariantType: "VARIANT",
        T.ArrayType: "ARRAY",
        T.MapType: "OBJECT",
        T.StructType: "OBJECT",
    }
    return named.get(type(kind), kind.simpleString().upper()), None, None, None


def _views(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    seen = _visible(tables, "VIEWS")
    data = [
        (
            view.database,
            view.schema,
            view.name,
            catalog.owner("VIEW", view.id) or None,
            view.definition,
            "NONE",
            "NO",
            "NO",
            "NO",
            view.created_at,
            catalog.parameters(view.id).get("COMMENT") or None,
        )
        for schema in catalog.schemas(database)
        for view in catalog.views(schema)
        if _sees(seen, view)
    ]
    return results.rows(tables.spark, VIEWS_SCHEMA, sorted(data, key=_by_name))


def _schemata(tables: Tables, database: DatabaseEntry) -> DataFrame:
    catalog = tables.catalog
    visible = _visible(tables, "SCHEMAS")
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
    for schema in catalog.schemas(database):
        if visible is None or (database.name, schema.name) in visible:
            retention = int(catalog.effective(params.RETENTION, _containers(database, schema))[0])
            comment = catalog.parameters(schema.id).get("COMMENT") or None
            owner = catalog.owner("SCHEMA", schema.id) or None
            data.append((database.name, schema.name, owner, "NO", "NO", retention, schema.created_at, comment))
    return results.rows(tables.spark, SCHEMATA_SCHEMA, sorted(data, key=lambda row: row[1]))


def _containers(database: DatabaseEntry, schema: SchemaEntry) -> list[tuple[ObjectKind, str]]:
    return [(ObjectKind.SCHEMA, schema.id), (ObjectKind.DATABASE, database.id)]


def _table_privileges(tables: Tables, database: DatabaseEntry) -> DataFrame:
    """Each privilege on a table or view the role sees, ownership included, as Snowflake lists them."""
    catalog = tables.catalog
    seen = {"TABLE": _visible(tables, "TABLES"), "VIEW": _visible(tables, "VIEWS")}
    data: list[tuple[Any, ...]] = []
    for schema in catalog.schemas(database):
        objects = [("TABLE", t) for t in catalog.tables(schema)] + [("VIEW", v) for v in catalog.views(schema)]
        for kind, entry in objects:
            if not _sees(seen[kind], entry):
                continue
            object_id, name = entry.id, entry.name
            owner = catalog.owner(kind, object_id)
            if owner:
                data.append((owner, owner, database.name, schema.name, name, "OWNERSHIP", "YES", "NO"))
            for grant in catalog.grants_on(kind, object_id):
                grantable = "YES" if grant.grant_option else "NO"
                data.append((grant.granted_by, grant.role, database.name, schema.name, name, grant.privilege, grantable, "NO"))
    return results.rows(
        tables.spark, TABLE_PRIVILEGES_SCHEMA, sorted(data, key=lambda row: (row[2], row[3], row[4], row[1], row[5]))
    )


def _sees(visible: set[tuple[str, ...]] | None, entry: TableEntry | ViewEntry) -> bool:
    return visible is None or (entry.database, entry.schema, entry.name) in visible


def _visible(tables: Tables, listing: str) -> set[tuple[str, ...]] | None:
    """The keys of the objects ``SHOW <listing>`` would list to the session's role; None when it sees all."""
    authorizer = registry.SLOTS.authorizer
    found = authorizer.visible(tables.catalog, tables.session.role, listing) if authorizer is not None else None
    return None if found is None else found[1]


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
