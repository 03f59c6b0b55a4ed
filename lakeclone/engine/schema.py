"""Table schemas: column definitions to Spark types, and rows cast to a table's columns."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.delta.statements import quoted, string_literal
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import DataType, StructField, StructType

# Snowflake's integer types are all NUMBER(38, 0); a 64-bit integer is the
# closest Spark type that does not turn every count into a decimal.
_INTEGERS = {
    exp.DataType.Type.TINYINT,
    exp.DataType.Type.SMALLINT,
    exp.DataType.Type.INT,
    exp.DataType.Type.BIGINT,
}

# Snowflake's length of a VARCHAR declared without one, and of a BINARY.
TEXT_LENGTH = 16_777_216
BINARY_LENGTH = 8_388_608

DECLARED_TYPE = "lakeclone.type"
"""Column metadata: the semi-structured Snowflake type a column was declared as, ARRAY or OBJECT.

Snowflake's ARRAY holds VARIANT values in order and its OBJECT holds them by
string keys. Delta stores an ARRAY as an array of VARIANTs (Spark's array
functions and subscripts read it) and an OBJECT as a VARIANT (paths such as
``o:key`` read it); every write checks that each value is an array (an
object), as Snowflake does.
"""

_TIMES_OF_DAY = {exp.DataType.Type.TIME, exp.DataType.Type.TIMETZ}

_SEMI_STRUCTURED = {exp.DataType.Type.ARRAY: "ARRAY", exp.DataType.Type.OBJECT: "OBJECT"}


def spark_type(kind: exp.DataType) -> DataType:
    """The Spark type of a column type written in lsql (see :func:`column_field` for ARRAY and OBJECT)."""
    from pyspark.sql.types import ArrayType, LongType, VariantType, _parse_datatype_string

    if kind.this in _INTEGERS:
        return LongType()
    if kind.this in _SEMI_STRUCTURED and not kind.expressions:
        return ArrayType(VariantType()) if kind.this == exp.DataType.Type.ARRAY else VariantType()
    if kind.this in _TIMES_OF_DAY:
        # sqlglot writes TIME as Spark's TIMESTAMP: a column of it would silently hold dates too.
        raise SqlCompilationError(
            f"Unsupported data type '{kind.sql(dialect='snowflake')}': Delta tables have no time-of-day type; "
            "store times as VARCHAR ('HH24:MI:SS') or TIMESTAMP_NTZ."
        )
    text = kind.sql(dialect="spark")
    try:
        return _parse_datatype_string(text)
    except Exception:
        raise SqlCompilationError(f"Unsupported data type '{kind.sql(dialect='snowflake')}'.") from None


def column_field(name: str, kind: exp.DataType, nullable: bool = True, metadata: dict[str, Any] | None = None) -> StructField:
    """A column of type ``kind``, a semi-structured ARRAY or OBJECT marked as such in its metadata."""
    from pyspark.sql.types import StructField

    metadata = dict(metadata or {})
    if kind.this in _SEMI_STRUCTURED and not kind.expressions:
        metadata[DECLARED_TYPE] = _SEMI_STRUCTURED[kind.this]
    return StructField(name, spark_type(kind), nullable, metadata)


def declared_semi_structured(field: StructField) -> str | None:
    """``ARRAY`` or ``OBJECT`` for a column declared as one; None for any other column."""
    from pyspark.sql.types import ArrayType, VariantType

    declared = field.metadata.get(DECLARED_TYPE)
    if declared == "ARRAY":
        return "ARRAY" if field.dataType == ArrayType(VariantType()) else None
    return "OBJECT" if declared == "OBJECT" and field.dataType == VariantType() else None


def snowflake_type(field: StructField) -> tuple[str, int | None, int | None, int | None]:
    """A column's type as Snowflake names it: (its name, length, precision, scale), as INFORMATION_SCHEMA.COLUMNS has them."""
    from pyspark.sql import types as T

    kind = field.dataType
    declared = declared_semi_structured(field)
    if declared is not None:
        return declared, None, None, None
    if isinstance(kind, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "NUMBER", None, 38, 0
    if isinstance(kind, T.DecimalType):
        return "NUMBER", None, kind.precision, kind.scale
    if isinstance(kind, (T.FloatType, T.DoubleType)):
        return "FLOAT", None, None, None
    if isinstance(kind, (T.StringType, T.CharType, T.VarcharType)):
        declared = str(field.metadata.get("__CHAR_VARCHAR_TYPE_STRING", ""))
        length = int(declared[declared.index("(") + 1 : -1]) if "(" in declared else TEXT_LENGTH
        return "TEXT", length, None, None
    if isinstance(kind, T.BinaryType):
        return "BINARY", BINARY_LENGTH, None, None
    named: dict[type[DataType], str] = {
        T.BooleanType: "BOOLEAN",
        T.DateType: "DATE",
        T.TimestampType: "TIMESTAMP_LTZ",
        T.TimestampNTZType: "TIMESTAMP_NTZ",
        T.VariantType: "VARIANT",
        T.ArrayType: "ARRAY",
        T.MapType: "MAP",
        T.StructType: "OBJECT",
    }
    return named.get(type(kind), kind.simpleString().upper()), None, None, None


def type_text(field: StructField) -> str:
    """A column's type as Snowflake's DESCRIBE writes it: ``NUMBER(38,0)``, ``VARCHAR(16777216)``, ``ARRAY(FLOAT)``."""
    from pyspark.sql import types as T

    name, length, precision, scale = snowflake_type(field)
    kind = field.dataType
    if name == "NUMBER":
        return f"NUMBER({precision},{scale})"
    if name == "TEXT":
        return f"VARCHAR({length})"
    if name == "BINARY":
        return f"BINARY({length})"
    if name.startswith("TIMESTAMP"):
        return f"{name}(9)"
    if declared_semi_structured(field) is not None:
        return name
    if isinstance(kind, T.ArrayType):
        return f"ARRAY({type_text(T.StructField('element', kind.elementType))})"
    if isinstance(kind, T.MapType):
        return f"MAP({type_text(T.StructField('key', kind.keyType))}, {type_text(T.StructField('value', kind.valueType))})"
    if isinstance(kind, T.StructType):
        return "OBJECT(" + ", ".join(f"{quoted_if_needed(f.name)} {type_text(f)}" for f in kind.fields) + ")"
    return name


def column_named(columns: Iterable[str], name: exp.Expression | str) -> str | None:
    """The one of ``columns`` that ``name`` names, as a query reads a name; None if none does.

    A quoted identifier names a column exactly as written; an unquoted one
    (or a plain string), in any case.
    """
    identifier = name.this if isinstance(name, exp.Column) else name
    if isinstance(identifier, str):
        wanted, quoted = identifier, False
    else:
        wanted, quoted = identifier.name, bool(identifier.args.get("quoted"))
    return next((c for c in columns if c == wanted or (not quoted and c.upper() == wanted.upper())), None)


# A name Snowflake reads without quotes (and upper-cases).
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def quoted_if_needed(name: str) -> str:
    """A name as a statement spells it: bare when it reads back as itself, else in double quotes."""
    if PLAIN_NAME.fullmatch(name) and name == name.upper():
        return name
    return '"' + name.replace('"', '""') + '"'


def struct_from_columns(elements: list[exp.Expression], consumed: Collection[int] = ()) -> StructType:
    """The Spark schema of ``CREATE TABLE t (a INT NOT NULL COMMENT 'x', ...)``.

    Args:
        elements: the table's elements; those that are not columns must be in ``consumed``.
        consumed: ``id()`` of the elements and column constraints a feature has
            taken care of (defaults, keys). Any other is refused, never ignored.
    """
    from pyspark.sql.types import StructType

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
        fields.append(column_field(element.name, kind, nullable, {"comment": comment} if comment is not None else {}))
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
        value = assigned(quoted(source[field.name]) if field.name in source else "NULL", field)
        if not field.nullable:
            message = string_literal(f"NULL result in a non-nullable column '{field.name}'")
            value = f"CASE WHEN ({value}) IS NULL THEN raise_error({message}) ELSE {value} END"
        columns.append(f"{value} AS {quoted(field.name)}")
    return frame.toDF(*positional).selectExpr(*columns)


def assigned(value: str, field: StructField) -> str:
    """Spark SQL for ``value`` (SQL text) cast to ``field``'s type, as Snowflake assigns a value to a column.

    A value for a column declared ARRAY (OBJECT) must be an array (an
    object), as in Snowflake: "Failed to cast variant value 1 to ARRAY".
    """
    cast = f"CAST(({value}) AS {sql_type(field.dataType)})"
    declared = declared_semi_structured(field)
    if declared == "ARRAY":
        failed = f"raise_error(concat('Failed to cast variant value ', to_json({value}), ' to ARRAY'))"
        return f"CASE WHEN ({value}) IS NULL THEN NULL ELSE coalesce(try_{cast}, {failed}) END"
    if declared == "OBJECT":
        failed = f"raise_error(concat('Failed to cast variant value ', to_json({cast}), ' to OBJECT'))"
        return f"CASE WHEN {cast} IS NULL OR schema_of_variant({cast}) LIKE 'OBJECT<%' THEN {cast} ELSE {failed} END"
    return cast


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
