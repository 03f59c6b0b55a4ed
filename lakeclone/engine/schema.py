"""Table schemas: column definitions to Spark types, and new row ids for written rows."""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.delta.writer import ROW_ID
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from pyspark.sql.types import DataType, StructField, StructType

# Snowflake's integer types are all NUMBER(38, 0); a 64-bit integer is the
# closest Spark type that does not turn every count into a decimal.
_INTEGERS = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}


def spark_type(kind: exp.DataType) -> DataType:
    """The Spark type of a column type written in lsql."""
    from pyspark.sql.types import LongType, _parse_datatype_string

    if kind.this in _INTEGERS:
        return LongType()
    text = kind.sql(dialect="spark")
    try:
        return _parse_datatype_string(text)
    except Exception:  # noqa: BLE001 - Spark raises several error types for a bad type string
        raise SqlCompilationError(f"Unsupported data type '{kind.sql(dialect='snowflake')}'.") from None


def struct_from_columns(columns: list[exp.Expression]) -> StructType:
    """The Spark schema of ``CREATE TABLE t (a INT NOT NULL, ...)``."""
    from pyspark.sql.types import StructField, StructType

    fields = []
    for column in columns:
        if not isinstance(column, exp.ColumnDef):
            raise SqlCompilationError(f"unsupported table element {column.sql(dialect='snowflake')}")
        kind = column.args.get("kind")
        if kind is None:
            raise SqlCompilationError(f"column '{column.name}' needs a type")
        constraints = column.args.get("constraints") or []
        not_null = any(
            isinstance(c.kind, exp.NotNullColumnConstraint) and not c.kind.args.get("allow_null")
            for c in constraints
        )
        comment = next(
            (c.kind.name for c in constraints if isinstance(c.kind, exp.CommentColumnConstraint)), None
        )
        metadata = {"comment": comment} if comment is not None else {}
        fields.append(StructField(column.name, spark_type(kind), not not_null, metadata))
    return StructType(fields)


def with_new_row_ids(frame: DataFrame) -> DataFrame:
    """``frame`` with a fresh, table-unique id for every row.

    Ids are a random 63-bit number for the write plus Spark's monotonically
    increasing id within it, so writers never need to agree on a counter.
    """
    return frame.withColumn(ROW_ID, new_row_id())


def new_row_id() -> Column:
    from pyspark.sql import functions as F

    write = secrets.randbits(63)
    return F.struct(F.lit(write).alias("write"), F.monotonically_increasing_id().alias("row"))


def conform(frame: DataFrame, schema: StructType, names: list[str] | None = None) -> DataFrame:
    """``frame``'s columns, taken by position, cast to ``schema``.

    ``names`` lists the target columns the frame's columns fill, in order;
    the others get NULL. A NULL in a NOT NULL column fails the statement, as
    it does in Snowflake.
    """
    from pyspark.sql import functions as F

    targets = names if names is not None else schema.fieldNames()
    upper = {n.upper(): n for n in schema.fieldNames()}
    resolved = []
    for target in targets:
        if target.upper() not in upper:
            raise SqlCompilationError(f"invalid identifier '{target}'")
        resolved.append(upper[target.upper()])
    if len(frame.columns) != len(resolved):
        raise SqlCompilationError(
            f"Insert value list does not match column list expecting {len(resolved)} but got {len(frame.columns)}"
        )
    # By position, as SQL's INSERT does: the query's own column names may repeat.
    positional = [f"_lakeclone_value_{index}" for index in range(len(resolved))]
    source = dict(zip(resolved, positional))
    columns = []
    for field in schema.fields:
        value = F.col(source[field.name]) if field.name in source else F.lit(None)
        columns.append(checked(value.cast(field.dataType), field).alias(field.name))
    return frame.toDF(*positional).select(*columns)


def checked(value: Column, field: StructField) -> Column:
    """``value``, failing the statement when it is NULL in a NOT NULL column."""
    from pyspark.sql import functions as F

    if field.nullable:
        return value
    name = field.name
    return F.when(value.isNull(), F.raise_error(F.lit(f"NULL result in a non-nullable column '{name}'"))).otherwise(value)
