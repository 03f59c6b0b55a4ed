"""Table schemas: column definitions to Spark types, and rows cast to a table's columns."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.delta.statements import quoted, string_literal
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructType

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
    except Exception:
        raise SqlCompilationError(f"Unsupported data type '{kind.sql(dialect='snowflake')}'.") from None


def struct_from_columns(elements: list[exp.Expression], consumed: Collection[int] = ()) -> StructType:
    """The Spark schema of ``CREATE TABLE t (a INT NOT NULL COMMENT 'x', ...)``.

    Args:
        elements: the table's elements; those that are not columns must be in ``consumed``.
        consumed: ``id()`` of the elements and column constraints a feature has
            taken care of (defaults, keys). Any other is refused, never ignored.
    """
    from pyspark.sql.types import StructField, StructType

    fields = []
    for element in elements:
        if not isinstance(element, exp.ColumnDef):
            if id(element) not in consumed:
                raise SqlCompilationError(f"unsupported table element {element.sql(dialect='snowflake')}")
            continue
        kind = element.args.get("kind")
        if kind is None:
            raise SqlCompilationError(f"column '{element.name}' needs a type")
        nullable, comment = True, None
        for constraint in element.args.get("constraints") or []:
            if isinstance(constraint.kind, exp.NotNullColumnConstraint) and not constraint.kind.args.get("allow_null"):
                nullable = False
            elif isinstance(constraint.kind, exp.CommentColumnConstraint):
                comment = constraint.kind.name
            elif id(constraint) not in consumed and id(constraint.kind) not in consumed:
                raise SqlCompilationError(
                    f"unsupported column constraint {constraint.sql(dialect='snowflake')} on '{element.name}'"
                )
        metadata = {"comment": comment} if comment is not None else {}
        fields.append(StructField(element.name, spark_type(kind), nullable, metadata))
    return StructType(fields)


def conform(frame: DataFrame, schema: StructType, names: list[str] | None = None) -> DataFrame:
    """``frame``'s columns, taken by position, cast to ``schema``.

    ``names`` lists the target columns the frame's columns fill, in order;
    the others get NULL. A NULL in a NOT NULL column fails the statement, as
    it does in Snowflake.
    """
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
    source = dict(zip(resolved, positional, strict=True))
    # As SQL text, in one call: built with Column objects, each column cost the
    # statement a dozen round trips to the JVM.
    columns = []
    for field in schema.fields:
        value = f"CAST({quoted(source[field.name]) if field.name in source else 'NULL'} AS {sql_type(field.dataType)})"
        if not field.nullable:
            message = string_literal(f"NULL result in a non-nullable column '{field.name}'")
            value = f"CASE WHEN ({value}) IS NULL THEN raise_error({message}) ELSE {value} END"
        columns.append(f"{value} AS {quoted(field.name)}")
    return frame.toDF(*positional).selectExpr(*columns)


def sql_type(data_type: DataType) -> str:
    """A Spark type as Spark SQL spells it in a CAST, struct field names quoted."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    if isinstance(data_type, StructType):
        return "STRUCT<" + ", ".join(f"{quoted(f.name)}: {sql_type(f.dataType)}" for f in data_type.fields) + ">"
    if isinstance(data_type, ArrayType):
        return f"ARRAY<{sql_type(data_type.elementType)}>"
    if isinstance(data_type, MapType):
        return f"MAP<{sql_type(data_type.keyType)}, {sql_type(data_type.valueType)}>"
    return data_type.simpleString()
