"""CREATE, DROP, SHOW, DESCRIBE and ALTER VIEW.

A view lives in the catalog as its query's text, as written, and the names
of its columns. Views and tables share one namespace per schema.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp
from sqlglot.tokens import TokenType

from lakeclone.catalog.entries import ObjectKind, ViewEntry
from lakeclone.dialect import Lsql
from lakeclone.engine import registry, results
from lakeclone.engine.compiler import spark_sql
from lakeclone.engine.context import SessionContext
from lakeclone.engine.ddl import check_column_names
from lakeclone.engine.objects import (
    make_room,
    properties_of,
    require_free_name,
    require_object,
    require_schema,
    store_parameters,
)
from lakeclone.engine.schema import type_text
from lakeclone.errors import ObjectExistsError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.names import QualifiedName
    from lakeclone.engine.executor import Execution

SHOW_SCHEMA = (
    "created_on TIMESTAMP, name STRING, kind STRING, database_name STRING, schema_name STRING, comment STRING, "
    "text STRING, is_secure STRING, is_materialized STRING, change_tracking STRING"
)

DESCRIBE_SCHEMA = (
    "name STRING, type STRING, kind STRING, `null?` STRING, default STRING, "
    "`primary key` STRING, `unique key` STRING, comment STRING"
)

# What CREATE VIEW reads; sqlglot parses more (UNIQUE, ...), which lakeclone refuses.
_CREATE_CLAUSES = {"this", "kind", "replace", "exists", "expression", "properties"}

# Table options sqlglot also parses after CREATE VIEW's name, which mean nothing for a view.
_TABLE_OPTIONS = (exp.ExternalProperty, exp.LocationProperty, exp.ClusterProperty)


def create_view(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] VIEW [IF NOT EXISTS] v [(col, ...)] [COMMENT = '...'] AS <query>``.

    The query is bound once, in the view's schema, so that a missing object
    fails the CREATE, and its output names become the view's columns unless
    a column list renames them.
    """
    expression = execution.expression
    for key, value in expression.args.items():
        if value and key not in _CREATE_CLAUSES:
            raise SqlCompilationError(f"CREATE VIEW … {key.upper()} is not supported by lakeclone.")
    target, declared = _target(expression.this)
    name = execution.tables.name(target)
    query = expression.expression
    if not isinstance(query, exp.Query):
        raise SqlCompilationError("CREATE VIEW needs AS <query>.")
    settings = _settings(expression)
    catalog = execution.catalog
    schema = require_schema(execution, name.database, name.schema)
    require_free_name(execution, name, ObjectKind.VIEW)
    if catalog.views.view(name.database, name.schema, name.name) is not None:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
        if not expression.args.get("replace"):
            raise ObjectExistsError(name.name)
    columns = _columns(execution, name, query, declared)
    definition = definition_text(execution.sql)
    with execution.work.records():
        # Again under the write lock: another process may have taken the name since.
        require_free_name(execution, name, ObjectKind.VIEW)
        held = make_room(execution, ObjectKind.VIEW, name)
        if held is not None:
            return held
        entry = catalog.views.create_view(schema, name.name, definition=definition, columns=columns, now=execution.now())
        store_parameters(execution, ObjectKind.VIEW, entry.id, settings)
    return results.status(execution.spark, f"View {name.name} successfully created.")


def _target(node: exp.Expression) -> tuple[exp.Table, list[str]]:
    """CREATE VIEW's name and its column list (empty when none is given)."""
    if not isinstance(node, exp.Schema):
        assert isinstance(node, exp.Table)
        return node, []
    names = []
    for column in node.expressions:
        if not isinstance(column, exp.Identifier):
            raise SqlCompilationError(
                f"unsupported view column {column.sql(dialect='snowflake')}: lakeclone takes column names only"
            )
        names.append(column.name)
    return node.this, names


def _settings(expression: exp.Expression) -> dict[str, str]:
    """CREATE VIEW's parameters (COMMENT, CHANGE_TRACKING)."""
    properties = expression.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, _TABLE_OPTIONS):
            raise SqlCompilationError(f"unsupported view option {prop.sql(dialect='snowflake')}")
    return properties_of(expression, ObjectKind.VIEW)


def _columns(execution: Execution, name: QualifiedName, query: exp.Query, declared: list[str]) -> list[str]:
    """The new view's column names, once its query binds in the view's schema (Spark analyses it; nothing runs)."""
    scope = execution.tables.nested(SessionContext(name.database, name.schema), str(name))
    produced = execution.spark.sql(spark_sql(query, scope)).columns
    if declared and len(declared) != len(produced):
        raise SqlCompilationError(
            f"View definition for '{name}' declared {len(declared)} column(s), but view query produces {len(produced)} column(s)."
        )
    columns = declared or produced
    check_column_names(columns)
    return columns


def definition_text(sql: str) -> str:
    """The query of a CREATE VIEW statement as written: its text after the first AS outside parentheses."""
    depth = 0
    for token in Lsql().tokenize(sql):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif token.token_type == TokenType.ALIAS and depth == 0:
            return sql[token.end + 1 :].strip()
    raise SqlCompilationError("CREATE VIEW needs AS <query>.")


def require_view(execution: Execution, target: exp.Table) -> ViewEntry:
    """The live view a statement names, or ObjectNotFoundError."""
    return require_object(execution, ObjectKind.VIEW, target, ViewEntry)


def _show_row(execution: Execution, view: ViewEntry) -> tuple[Any, ...]:
    """SHOW VIEWS' row; ``text`` is the view's query as written."""
    settings = execution.catalog.parameters.of(view.id)
    return (
        view.created_at,
        view.name,
        ObjectKind.VIEW.value,
        view.database,
        view.schema,
        settings.get("COMMENT", ""),
        view.definition,
        "false",
        "false",
        "ON" if settings.get("CHANGE_TRACKING") == "true" else "OFF",
    )


def describe_view(execution: Execution) -> DataFrame:
    """``DESCRIBE VIEW v``: each column's name and type, as its query yields them now."""
    view = require_view(execution, execution.expression.this)
    reference = exp.table_(view.name, db=view.schema, catalog=view.database, quoted=True)
    schema = execution.spark.sql(spark_sql(exp.select("*").from_(reference), execution.tables)).schema
    data = [
        (field.name, type_text(field), "COLUMN", "Y" if field.nullable else "N", None, "N", "N", None) for field in schema.fields
    ]
    return results.rows(execution.spark, DESCRIBE_SCHEMA, data)


def rename_view(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    """``ALTER VIEW v RENAME TO w``, inside ALTER's transaction; ``w`` may name another schema."""
    view = require_view(execution, old)
    name = execution.tables.name(new)
    schema = require_schema(execution, name.database, name.schema)
    catalog = execution.catalog
    if catalog.views.view(name.database, name.schema, name.name) is not None:
        raise ObjectExistsError(name.name)
    require_free_name(execution, name, ObjectKind.VIEW)
    catalog.views.rename_view(view, schema, name.name)


registry.schema_object(
    registry.SchemaObject(
        ObjectKind.VIEW,
        "VIEWS",
        columns=SHOW_SCHEMA,
        row=_show_row,
        create=create_view,
        rename=rename_view,
        shares_table_names=True,
        takes_parameters=True,
    )
)
registry.DESCRIBERS[ObjectKind.VIEW.value] = describe_view
