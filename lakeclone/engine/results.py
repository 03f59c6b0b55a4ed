"""The small frames DDL and DML statements return, as Snowflake's worksheets show them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession


def status(spark: SparkSession, message: str) -> DataFrame:
    """A one-row ``status`` frame: ``Table T successfully created.``"""
    return spark.createDataFrame([(message,)], "status STRING")


def counts(spark: SparkSession, columns: Sequence[tuple[str, int]]) -> DataFrame:
    """A one-row frame of counts: ``number of rows inserted``."""
    schema = ", ".join(f"`{name}` BIGINT" for name, _ in columns)
    return spark.createDataFrame([tuple(int(v) for _, v in columns)], schema)


def rows(spark: SparkSession, schema: str, data: Sequence[Sequence[Any]]) -> DataFrame:
    """A frame of rows built on the driver: SHOW and DESCRIBE results."""
    return spark.createDataFrame([tuple(r) for r in data], schema)
