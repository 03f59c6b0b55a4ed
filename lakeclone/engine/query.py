"""Queries: bound to snapshot views and run by Spark SQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.engine.compiler import spark_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution


def select(execution: Execution) -> DataFrame:
    """Run a query. The frame reads the snapshots current at the statement's start, however long it is kept."""
    return execution.spark.sql(spark_sql(execution.expression, execution.tables))
