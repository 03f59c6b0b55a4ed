"""Binding lsql expressions to table versions and compiling them to Spark SQL."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone import timetravel
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.engine.tables import Tables

SPARK = "spark"

# What a table reference may carry besides its name; anything else parses but
# lakeclone does not run it, and saying so beats ignoring it.
_TABLE_ARGS = {"this", "db", "catalog", "alias", "when", "version", "joins", "laterals", "pivots", "sample"}
_UNSUPPORTED_TABLE_ARGS = {"changes": "CHANGES", "system_time": "FOR SYSTEM_TIME", "partition": "PARTITION"}


def bind_tables(expression: exp.Expression, tables: Tables) -> exp.Expression:
    """A copy of ``expression`` whose table references read pinned Delta versions.

    Each reference becomes ``delta.`<location>` VERSION AS OF n`` for the
    table at its time-travel point (or the version the statement reads now),
    aliased to the name the query used, so that ``t.col`` keeps resolving. CTE
    names are left alone. The session functions answer from lakeclone's
    session and the Lake's clock, not from Spark's.
    """
    bound = expression.copy()
    for node in list(bound.find_all(exp.CurrentDatabase, exp.CurrentSchema, exp.CurrentTimestamp, exp.CurrentDate)):
        value = _session_value(node, tables)
        if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
            # Snowflake names such a column after the call: CURRENT_DATABASE().
            value = exp.alias_(value, exp.to_identifier(node.sql(dialect="snowflake").upper(), quoted=True))
        node.replace(value)
    ctes = {cte.alias_or_name for cte in bound.find_all(exp.CTE)}
    for table in list(bound.find_all(exp.Table)):
        if not isinstance(table.this, exp.Identifier):
            continue
        check_table_clauses(table)
        if not table.db and not table.catalog and table.name in ctes:
            continue
        entry = tables.entry(table)
        version = tables.version(entry, timetravel.point_of(table))
        alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
        reference = tables.reference(entry, version, alias)
        for key in ("joins", "laterals", "pivots", "sample"):
            if table.args.get(key):
                reference.set(key, table.args[key])
        table.replace(reference)
    return bound


def check_table_clauses(table: exp.Table) -> None:
    """Refuse the clauses of a table reference that lakeclone parses but does not run."""
    for key, value in table.args.items():
        if value and key not in _TABLE_ARGS:
            clause = _UNSUPPORTED_TABLE_ARGS.get(key, key.upper())
            raise SqlCompilationError(f"{clause} on a table reference is not supported by lakeclone.")


def _session_value(node: exp.Expr, tables: Tables) -> exp.Expr:
    if isinstance(node, exp.CurrentDatabase):
        return exp.Literal.string(tables.session.database) if tables.session.database else exp.null()
    if isinstance(node, exp.CurrentSchema):
        return exp.Literal.string(tables.session.schema) if tables.session.schema else exp.null()
    moment = tables.now.astimezone(dt.timezone.utc)
    if isinstance(node, exp.CurrentDate):
        return exp.cast(exp.Literal.string(moment.date().isoformat()), exp.DataType.Type.DATE)
    return exp.cast(exp.Literal.string(moment.strftime("%Y-%m-%d %H:%M:%S.%f")), exp.DataType.Type.TIMESTAMP)


def to_spark(expression: exp.Expression) -> str:
    """Spark SQL text for an lsql expression."""
    return _spark_forms(expression.copy()).sql(dialect=SPARK)


def _spark_forms(expression: exp.Expression) -> exp.Expression:
    """Rewrite the Snowflake forms sqlglot keeps that Spark cannot parse.

    sqlglot's Snowflake parser turns ``x NOT IN (SELECT ...)`` into
    ``x <> ALL (SELECT ...)``, which Spark has no syntax for.
    """
    for node in list(expression.find_all(exp.NEQ)):
        quantified = node.expression
        if isinstance(quantified, exp.All) and isinstance(quantified.this, exp.Query):
            node.replace(exp.not_(exp.In(this=node.this, query=exp.Subquery(this=quantified.this))))
    return expression


def spark_sql(expression: exp.Expression, tables: Tables) -> str:
    """Spark SQL text for a query, its tables bound to pinned versions."""
    return to_spark(bind_tables(expression, tables))
