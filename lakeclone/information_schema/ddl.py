"""``GET_DDL('TABLE' | 'VIEW' | 'SCHEMA' | 'DATABASE', name [, fully_qualified])`` and ``SHOW CREATE TABLE``.

The statements that make an object again as it is now: a table's columns
(types, NOT NULL, defaults, comments), the key constraints and clustering key
features add, and the parameters set on it; a view's column names and query;
a schema's or database's objects after it. Run through lakeclone, a table's
DDL makes a table with the same Delta schema: types are spelled so that
lakeclone reads them back as the same Spark type (``BIGINT``, ``NUMBER(10,2)``,
``FLOAT`` for a double), each a spelling Snowflake also accepts.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import ObjectKind
from lakeclone.dialect import table_reference
from lakeclone.engine import registry, results
from lakeclone.engine.schema import PLAIN_NAME, declared_semi_structured, quoted_if_needed, snowflake_type
from lakeclone.engine.show import table_attributes
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError
from lakeclone.information_schema.columns import Column, table_columns
from lakeclone.information_schema.visibility import sees, visible_keys

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructField

    from lakeclone.catalog.entries import DatabaseEntry, SchemaEntry, TableEntry, ViewEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

_KINDS = (ObjectKind.TABLE, ObjectKind.VIEW, ObjectKind.SCHEMA, ObjectKind.DATABASE)


def get_ddl(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """``GET_DDL(kind, name [, fully_qualified])`` bound to its text, for an object the role sees."""
    arguments = call.expressions
    if not 2 <= len(arguments) <= 3 or not all(_is_string(a) for a in arguments[:2]):
        raise SqlCompilationError("GET_DDL takes an object's kind and name: GET_DDL('TABLE', 't' [, TRUE]).")
    kind, name = ObjectKind.named(arguments[0].name), arguments[1].name
    qualified = len(arguments) == 3 and _flag(arguments[2])
    if kind is None or kind not in _KINDS:
        raise SqlCompilationError(f"Invalid object type '{arguments[0].name}' for GET_DDL: {', '.join(_KINDS)}.")
    return exp.Literal.string(object_ddl(tables, kind, name, qualified=qualified))


def show_create_table(execution: Execution, pattern: re.Pattern[str] | None) -> DataFrame:
    """``SHOW CREATE TABLE t`` (Databricks' spelling): its DDL, fully qualified, in the column ``createtab_stmt``."""
    scope = execution.expression.args["scope"]
    tables = execution.tables
    name = tables.name(scope)
    parts = (name.database, name.schema, name.name)
    # Databricks shows a view's DDL for SHOW CREATE TABLE <view> too.
    is_view = tables.catalog.objects.table(*parts) is None and tables.catalog.views.view(*parts) is not None
    kind = ObjectKind.VIEW if is_view else ObjectKind.TABLE
    text = object_ddl(tables, kind, scope.sql(dialect="snowflake"), qualified=True)
    return results.rows(execution.spark, "createtab_stmt STRING", [(text,)])


def object_ddl(tables: Tables, kind: ObjectKind, name: str, *, qualified: bool) -> str:
    """The DDL of the ``kind`` object ``name`` names (as a statement would name it), if the role sees it."""
    catalog = tables.catalog
    if kind is ObjectKind.DATABASE:
        database = catalog.objects.database(name.upper() if PLAIN_NAME.fullmatch(name) else name)
        if database is None or not _sees(tables, "DATABASES", (database.name,)):
            raise ObjectNotFoundError(name, "Database")
        return database_ddl(tables, database, qualified=qualified)
    reference = table_reference(name if kind is not ObjectKind.SCHEMA else f"{name}.x")
    if kind is ObjectKind.SCHEMA:
        schema_name = tables.name(reference)
        schema = catalog.objects.schema(schema_name.database, schema_name.schema)
        if schema is None or not _sees(tables, "SCHEMAS", (schema.database, schema.name)):
            raise ObjectNotFoundError(f"{schema_name.database}.{schema_name.schema}", "Schema")
        return schema_ddl(tables, schema, qualified=qualified)
    qualified_name = tables.name(reference)
    if kind is ObjectKind.TABLE:
        entry = catalog.objects.table(qualified_name.database, qualified_name.schema, qualified_name.name)
        if entry is None or not _sees(tables, "TABLES", (entry.database, entry.schema, entry.name)):
            raise ObjectNotFoundError(str(qualified_name))
        return table_ddl(tables, entry, qualified=qualified)
    view = catalog.views.view(qualified_name.database, qualified_name.schema, qualified_name.name)
    if view is None or not _sees(tables, "VIEWS", (view.database, view.schema, view.name)):
        raise ObjectNotFoundError(str(qualified_name))
    return view_ddl(tables, view, qualified=qualified)


def table_ddl(tables: Tables, entry: TableEntry, *, qualified: bool) -> str:
    """``create or replace TABLE name (columns, constraints) [cluster by (…)] [parameters];``."""
    catalog = tables.catalog
    elements = [_column(column) for column in table_columns(tables, entry)]
    for describe in registry.TABLE_DDL_ELEMENTS:
        elements += describe(catalog, entry)
    clauses = []
    keys = table_attributes(catalog, entry.id)["clusteringColumns"]
    if keys:
        clauses.append(f"cluster by ({', '.join(keys)})")
    clauses += _parameters(catalog.parameters.of(entry.id))
    name = _name(entry.database, entry.schema, entry.name, qualified=qualified)
    body = ",\n".join(f"\t{element}" for element in elements)
    return f"create or replace TABLE {name} (\n{body}\n){_suffix(clauses)};"


def view_ddl(tables: Tables, view: ViewEntry, *, qualified: bool) -> str:
    """``create or replace view name (columns) [COMMENT = '…'] as <its query>;``."""
    columns = ", ".join(quoted_if_needed(column) for column in view.columns)
    comment = _parameters({"COMMENT": tables.catalog.parameters.of(view.id).get("COMMENT", "")})
    name = _name(view.database, view.schema, view.name, qualified=qualified)
    return f"create or replace view {name} ({columns}){_suffix(comment)} as {view.definition.strip()};"


def schema_ddl(tables: Tables, schema: SchemaEntry, *, qualified: bool) -> str:
    """The schema's DDL, then its tables' and views' the role sees, each a statement of its own."""
    return _schema_ddl(tables, schema, _Seen(tables), qualified=qualified)


def database_ddl(tables: Tables, database: DatabaseEntry, *, qualified: bool) -> str:
    """The database's DDL, then each schema's the role may use."""
    catalog = tables.catalog
    clauses = _parameters(catalog.parameters.of(database.id))
    statements = [f"create or replace database {quoted_if_needed(database.name)}{_suffix(clauses)};"]
    schemas = visible_keys(tables, "SCHEMAS")
    seen = _Seen(tables)
    for schema in catalog.objects.schemas(database):
        if schemas is None or (database.name, schema.name) in schemas:
            statements.append(_schema_ddl(tables, schema, seen, qualified=qualified))
    return "\n\n".join(statements)


class _Seen:
    """The tables and views the role sees, read once for a whole DDL."""

    def __init__(self, tables: Tables) -> None:
        self.tables = visible_keys(tables, "TABLES")
        self.views = visible_keys(tables, "VIEWS")


def _schema_ddl(tables: Tables, schema: SchemaEntry, seen: _Seen, *, qualified: bool) -> str:
    catalog = tables.catalog
    clauses = _parameters(catalog.parameters.of(schema.id))
    statements = [f"create or replace schema {_name(schema.database, schema.name, qualified=qualified)}{_suffix(clauses)};"]
    statements += [table_ddl(tables, t, qualified=qualified) for t in catalog.objects.tables(schema) if sees(seen.tables, t)]
    statements += [view_ddl(tables, v, qualified=qualified) for v in catalog.views.in_schema(schema) if sees(seen.views, v)]
    return "\n\n".join(statements)


def _column(column: Column) -> str:
    field = column.field
    parts = [quoted_if_needed(field.name), ddl_type(field)]
    if not field.nullable:
        parts.append("NOT NULL")
    if column.default_clause is not None:
        parts.append(column.default_clause)
    comment = field.metadata.get("comment")
    if comment:
        parts.append(f"COMMENT {_string(str(comment))}")
    return " ".join(parts)


def ddl_type(field: StructField) -> str:
    """A column's type as DDL spells it: a Snowflake spelling lakeclone reads back as the same Spark type."""
    from pyspark.sql import types as T

    kind: DataType = field.dataType
    if isinstance(kind, T.DecimalType):
        return f"NUMBER({kind.precision},{kind.scale})"
    if isinstance(kind, (T.StringType, T.CharType, T.VarcharType)):
        declared = str(field.metadata.get("__CHAR_VARCHAR_TYPE_STRING", ""))
        return declared.upper() if declared else "VARCHAR"
    named: dict[type[DataType], str] = {
        T.ByteType: "TINYINT",
        T.ShortType: "SMALLINT",
        T.IntegerType: "INT",
        T.LongType: "BIGINT",
        T.FloatType: "REAL",
        T.DoubleType: "FLOAT",
    }
    if type(kind) in named:
        return named[type(kind)]
    if isinstance(kind, (T.ArrayType, T.MapType, T.StructType)) and declared_semi_structured(field) is None:
        return kind.simpleString().upper()
    return snowflake_type(field)[0]


def _parameters(values: dict[str, str]) -> list[str]:
    """``KEY = value`` for each parameter set on the object, COMMENT last, as CREATE takes them."""
    clauses = []
    for key, parameter in params.PARAMETERS.items():
        value = values.get(key)
        if key == "COMMENT" or value is None:
            continue
        clauses.append(f"{key} = {value.upper() if parameter.type == 'BOOLEAN' else value}")
    if values.get("COMMENT"):
        clauses.append(f"COMMENT = {_string(values['COMMENT'])}")
    return clauses


def _suffix(clauses: list[str]) -> str:
    return "".join(f" {clause}" for clause in clauses)


def _name(*parts: str, qualified: bool) -> str:
    return ".".join(quoted_if_needed(part) for part in (parts if qualified else parts[-1:]))


def _string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _is_string(value: exp.Expression) -> bool:
    return isinstance(value, exp.Literal) and value.is_string


def _flag(value: exp.Expression) -> bool:
    if isinstance(value, exp.Boolean):
        return bool(value.this)
    raise SqlCompilationError(f"GET_DDL's third argument is TRUE or FALSE, got {value.sql(dialect='snowflake')}.")


def _sees(tables: Tables, listing: str, key: tuple[str, ...]) -> bool:
    seen = visible_keys(tables, listing)
    return seen is None or key in seen
