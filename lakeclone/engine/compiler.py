"""Compiling lsql expressions to Spark SQL over table views."""

from __future__ import annotations

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
    keeps resolving. CTE names are left alone.
    """
    bound = expression.copy()
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


def to_spark(expression: exp.Expression) -> str:
    return expression.sql(dialect=SPARK)


def spark_sql(expression: exp.Expression, tables: Tables) -> str:
    """Spark SQL text for a query, its tables bound to snapshot views."""
    return to_spark(bind_tables(expression, tables))
