"""Queries: bound to pinned table versions and run by Spark SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.engine import registry
from lakeclone.engine.compiler import spark_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution


@registry.statement(exp.Select, exp.Union, exp.Intersect, exp.Except)
def select(execution: Execution) -> DataFrame:
    """Run a query. The frame reads the versions current at the statement's start, however long it is kept."""
    return execution.spark.sql(spark_sql(execution.expression, execution.tables))
