"""Columns of tables and views as Snowflake describes them: INFORMATION_SCHEMA.COLUMNS' types and ``SHOW COLUMNS``."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind, ViewEntry
from lakeclone.engine import registry, results
from lakeclone.engine.compiler import spark_sql
from lakeclone.engine.schema import BINARY_LENGTH, TEXT_LENGTH, snowflake_type
from lakeclone.engine.show import matches, scope_schemas
from lakeclone.errors import ObjectNotFoundError
from lakeclone.information_schema.visibility import sees, visible_keys

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField

    from lakeclone.catalog.entries import SchemaEntry, TableEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

SHOW_COLUMNS_SCHEMA = (
    "table_name STRING, schema_name STRING, column_name STRING, data_type STRING, `null?` STRING, default STRING, "
    "kind STRING, expression STRING, comment STRING, database_name STRING, autoincrement STRING"
)


@dataclass(frozen=True)
class Column:
    """A column of a table or view, with the default a feature keeps for it (``SEQ.NEXTVAL``) and its DDL clause.

    ``identity`` is an AUTOINCREMENT column's (start, increment): its ``default`` is DESCRIBE's
    ``IDENTITY START … INCREMENT … ORDER``, which SHOW COLUMNS and INFORMATION_SCHEMA show apart.
    """

    field: StructField
    default: str | None = None
    default_clause: str | None = None
    identity: tuple[str, str] | None = None

    @property
    def value_default(self) -> str | None:
        """The default SHOW COLUMNS and INFORMATION_SCHEMA.COLUMNS show: none for an AUTOINCREMENT column."""
        return None if self.identity is not None else self.default


def table_columns(tables: Tables, table: TableEntry) -> list[Column]:
    """A table's columns at the version the statement reads, with their defaults."""
    attributes: dict[str, dict[str, str | None]] = {}
    for supplier in registry.COLUMN_ATTRIBUTES:
        for column, values in supplier(tables.catalog, table.id).items():
            attributes.setdefault(column, {}).update(values)
    fields = tables.log(table).schema(tables.current_version(table)).fields
    found = [attributes.get(field.name.upper(), {}) for field in fields]
    return [_column(field, extra) for field, extra in zip(fields, found, strict=True)]


def _column(field: StructField, attributes: dict[str, str | None]) -> Column:
    start, increment = attributes.get("identity_start"), attributes.get("identity_increment")
    identity = (start, increment) if start is not None and increment is not None else None
    return Column(field, attributes.get("default"), attributes.get("ddl"), identity)


def view_columns(tables: Tables, view: ViewEntry) -> list[Column]:
    """A view's columns: what its query yields now (Spark analyses it, and runs nothing)."""
    reference = exp.table_(view.name, db=view.schema, catalog=view.database, quoted=True)
    return [Column(field) for field in tables.spark.sql(spark_sql(exp.select("*").from_(reference), tables)).schema.fields]


def relation_columns(tables: Tables, relation: TableEntry | ViewEntry) -> list[Column]:
    """A table's or a view's columns."""
    return view_columns(tables, relation) if isinstance(relation, ViewEntry) else table_columns(tables, relation)


def table_or_view(catalog: Catalog, name: QualifiedName, *, views_only: bool = False) -> TableEntry | ViewEntry | None:
    """The live table (unless ``views_only``) or view ``name`` names; None if none."""
    table = None if views_only else catalog.objects.table(name.database, name.schema, name.name)
    return table or catalog.views.view(name.database, name.schema, name.name)


def type_document(field: StructField) -> str:
    """SHOW COLUMNS' ``data_type``: Snowflake's JSON description of a column's type."""
    kind, length, precision, scale = snowflake_type(field)
    document: dict[str, Any]
    if kind == "NUMBER":
        document = {"type": "FIXED", "precision": precision, "scale": scale}
    elif kind == "FLOAT":
        document = {"type": "REAL"}
    elif kind == "TEXT":
        document = {"type": "TEXT", "length": length, "byteLength": min(4 * (length or 0), TEXT_LENGTH), "fixed": False}
    elif kind == "BINARY":
        document = {"type": "BINARY", "length": BINARY_LENGTH, "byteLength": BINARY_LENGTH, "fixed": False}
    elif kind.startswith("TIMESTAMP"):
        document = {"type": kind, "precision": 0, "scale": 9}
    else:
        document = {"type": kind}
    document["nullable"] = field.nullable
    return json.dumps(document, separators=(",", ":"))


def show_columns(execution: Execution, pattern: re.Pattern[str] | None) -> DataFrame:
    """``SHOW COLUMNS [LIKE '…'] [IN {ACCOUNT | DATABASE d | SCHEMA s | TABLE t | VIEW v}]``."""
    tables = execution.tables
    catalog = execution.catalog
    expression = execution.expression
    scope = expression.args.get("scope")
    scope_kind = ObjectKind.named(expression.args.get("scope_kind"))
    relations: list[TableEntry | ViewEntry]
    if isinstance(scope, exp.Table) and scope_kind in (ObjectKind.TABLE, ObjectKind.VIEW):
        name = tables.name(scope)
        found = table_or_view(catalog, name, views_only=scope_kind is ObjectKind.VIEW)
        if found is None:
            raise ObjectNotFoundError(str(name))
        relations = [found]
    else:
        everywhere = scope_kind is ObjectKind.ACCOUNT
        schemas: list[SchemaEntry] = (
            [s for d in catalog.objects.databases() for s in catalog.objects.schemas(d)]
            if everywhere
            else scope_schemas(execution)
        )
        seen_tables, seen_views = visible_keys(tables, "TABLES"), visible_keys(tables, "VIEWS")
        relations = [
            *(t for s in schemas for t in catalog.objects.tables(s) if sees(seen_tables, t)),
            *(v for s in schemas for v in catalog.views.in_schema(s) if sees(seen_views, v)),
        ]
    data: list[tuple[Any, ...]] = []
    for relation in relations:
        for column in relation_columns(tables, relation):
            if matches(pattern, column.field.name):
                data.append(_show_row(relation, column))
    data.sort(key=lambda row: (row[9], row[1], row[0]))
    return results.rows(execution.spark, SHOW_COLUMNS_SCHEMA, data)


def _show_row(relation: TableEntry | ViewEntry, column: Column) -> tuple[Any, ...]:
    field = column.field
    return (
        relation.name,
        relation.schema,
        field.name.upper(),
        type_document(field),
        "true" if field.nullable else "false",
        column.value_default,
        "COLUMN",
        None,
        field.metadata.get("comment") or "",
        relation.database,
        column.default if column.identity is not None else "",
    )
