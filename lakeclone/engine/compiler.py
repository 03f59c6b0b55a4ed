"""Compiling lsql expressions to Spark SQL over table views."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.engine import timetravel

if TYPE_CHECKING:
    from lakeclone.engine.tables import Tables

SPARK = "spark"


def bind_tables(expression: exp.Expression, tables: Tables) -> exp.Expression:
    """A copy of ``expression`` whose table references read pinned snapshot views.

    Each reference is replaced by the view of the table at its time-travel
    point (or now), aliased to the name the query used, so that ``t.col``
    keeps resolving. CTE names are left alone. The session functions answer
    from lakeclone's session and the Lake's clock, not from Spark's.
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
        if not table.db and not table.catalog and table.name in ctes:
            continue
        entry = tables.entry(table)
        snapshot = tables.snapshot(entry, timetravel.point_of(table))
        view = tables.view(entry, snapshot)
        alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
        table.replace(exp.Table(this=exp.to_identifier(view), alias=alias))
    return bound


def _session_value(node: exp.Expression, tables: Tables) -> exp.Expression:
    if isinstance(node, exp.CurrentDatabase):
        return exp.Literal.string(tables.session.database or "") if tables.session.database else exp.null()
    if isinstance(node, exp.CurrentSchema):
        return exp.Literal.string(tables.session.schema or "") if tables.session.schema else exp.null()
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
    """Spark SQL text for a query, its tables bound to snapshot views."""
    return to_spark(bind_tables(expression, tables))
