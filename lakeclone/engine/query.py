"""Queries: bound to pinned table versions and run by Spark SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry, results
from lakeclone.engine.compiler import spark_sql
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution


@registry.statement(exp.Select, exp.Union, exp.Intersect, exp.Except, bind=needs.query, query_type="SELECT")
def select(execution: Execution) -> DataFrame:
    """Run a query. The frame reads the versions current at the statement's start, however long it is kept."""
    return execution.spark.sql(spark_sql(execution.expression, execution.tables))


# Spark's plan mode for each of Databricks' EXPLAIN modes; Snowflake's EXPLAIN USING TEXT shows the formatted plan.
_SPARK_MODES = {None: "FORMATTED", "FORMATTED": "FORMATTED", "EXTENDED": "EXTENDED", "CODEGEN": "CODEGEN", "COST": "COST"}


@registry.statement(lx.Explain, bind=needs.explain, query_type="EXPLAIN")
def explain(execution: Execution) -> DataFrame:
    """``EXPLAIN [USING TEXT] q``: Spark's plan of a query as lakeclone binds it, in one row (``content``).

    Databricks' ``EXPLAIN [EXTENDED | FORMATTED | CODEGEN | COST] q`` gives the
    same in a column named ``plan``. The plan shows the expressions of the
    masking and row access policies a read goes through, so a query reading
    through one is explained to ACCOUNTADMIN only: a policy's body is its
    owner's to read.
    """
    expression = execution.expression
    statement = expression.this
    using, mode = expression.text("using") or None, expression.text("mode") or None
    if using in ("TABULAR", "JSON"):
        raise SqlCompilationError(f"EXPLAIN USING {using} is not supported by lakeclone: EXPLAIN USING TEXT shows Spark's plan.")
    if not isinstance(statement, (exp.Select, exp.Union, exp.Intersect, exp.Except)):
        raise SqlCompilationError("lakeclone explains queries: EXPLAIN SELECT …")
    tables = execution.tables
    sql = spark_sql(statement, tables)
    authorizer = registry.SLOTS.authorizer
    if tables.protected and authorizer is not None and not authorizer.administers(execution.catalog, execution.session.role):
        names = ", ".join(sorted({str(name) for name in tables.protected}))
        raise SqlCompilationError(
            f"EXPLAIN cannot show the plan of a query that reads {names} through policies: a policy's body is its owner's."
        )
    plan = execution.spark.sql(f"EXPLAIN {_SPARK_MODES[mode]} {sql}").collect()[0][0]
    return results.rows(execution.spark, f"{'plan' if mode else 'content'} STRING", [(plan,)])
