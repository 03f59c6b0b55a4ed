"""The small frames DDL and DML statements return, as Snowflake's worksheets show them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def status(spark: SparkSession, message: str) -> DataFrame:
    """A one-row ``status`` frame: ``Table T successfully created.``"""
    return _one_row(spark, [("status", exp.Literal.string(message))])


def counts(spark: SparkSession, columns: Sequence[tuple[str, int]]) -> DataFrame:
    """A one-row frame of counts: ``number of rows inserted``."""
    return _one_row(
        spark,
        [(name, exp.cast(exp.Literal.number(int(value)), exp.DataType.Type.BIGINT)) for name, value in columns],
    )


def _one_row(spark: SparkSession, columns: Sequence[tuple[str, exp.Expression]]) -> DataFrame:
    # A VALUES query is a local relation Spark collects on the driver; a frame
    # made with createDataFrame is an RDD, and collecting it runs a Spark job.
    values = ", ".join(value.sql(dialect="spark") for _, value in columns)
    names = ", ".join(exp.to_identifier(name, quoted=True).sql(dialect="spark") for name, _ in columns)
    return spark.sql(f"SELECT * FROM VALUES ({values}) AS result({names})")


def rows(spark: SparkSession, schema: str, data: Sequence[Sequence[Any]]) -> DataFrame:
    """A frame of rows built on the driver: SHOW and DESCRIBE results."""
    return spark.createDataFrame([tuple(r) for r in data], schema)
