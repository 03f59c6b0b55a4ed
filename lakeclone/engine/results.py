"""The small frames DDL and DML statements return, as Snowflake's worksheets show them."""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import threading
from collections import OrderedDict
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
    return _local_frame(spark, f"SELECT * FROM VALUES ({values}) AS result({names})")


# Up to this many rows a result is a VALUES query. Spark parses and analyses
# such a query in ~70 ms for a dozen rows of ten columns, where a frame from
# createDataFrame takes ~180 ms (its Spark job); at about 70 rows they meet.
LOCAL_ROWS = 64


def rows(spark: SparkSession, schema: str, data: Sequence[Sequence[Any]]) -> DataFrame:
    """A frame of rows built on the driver: SHOW and DESCRIBE results.

    Like :func:`status`, it is a VALUES query (a local relation Spark
    collects on the driver, without a Spark job), each value a literal of its
    column's type in ``schema``. More than :data:`LOCAL_ROWS` rows, or a value
    no SQL literal spells, make it a frame made with ``createDataFrame``.
    """
    fields = _fields(schema)
    try:
        literals = [[_literal(value, kind) for value, (_, kind) in zip(row, fields, strict=True)] for row in data]
    except _NoLiteral:
        literals = None
    if literals is None or len(literals) > LOCAL_ROWS:
        return spark.createDataFrame([tuple(r) for r in data], schema)
    names = [name for name, _ in _quoted_fields(schema)]
    if not literals:  # no rows: one of NULLs, filtered out, gives the columns their types
        values = "(" + ", ".join(f"CAST(NULL AS {kind})" for _, kind in fields) + ")"
        return _local_frame(spark, f"SELECT * FROM VALUES {values} AS result({', '.join(names)}) WHERE FALSE")
    # A column of one value in every row is a literal of the projection, written once: a SHOW
    # lists many rows alike in most columns, and Spark parses each literal of a VALUES.
    constant = [len(literals) > 1 and len({row[k] for row in literals}) == 1 for k in range(len(fields))]
    constant[0] = constant[0] and not all(constant)  # a VALUES row needs a column
    varying = [k for k, same in enumerate(constant) if not same]
    values = ", ".join("(" + ", ".join(row[k] for k in varying) + ")" for row in literals)
    projection = ", ".join(f"{literals[0][k]} AS {name}" if constant[k] else name for k, name in enumerate(names))
    # Typed literals rather than a cast of each column over the VALUES: Spark analyses that projection in ~20 ms.
    return _local_frame(spark, f"SELECT {projection} FROM VALUES {values} AS result({', '.join(names[k] for k in varying)})")


# Spark's frames of the latest VALUES queries, by session and text. A SHOW repeated over
# objects that have not changed (a widget refreshing, a user looking again) and a status
# ("Statement executed successfully.") are the same query again, and Spark's parse and
# analysis of it is most of what it costs (~15 ms of SHOW TABLES over 50 tables). Frames
# are immutable: each caller gets its own Python frame over the shared plan.
_RECENT_FRAMES: OrderedDict[tuple[SparkSession, str], Any] = OrderedDict()
_RECENT_FRAMES_KEPT = 32
_RECENT_FRAMES_LOCK = threading.Lock()


def _local_frame(spark: SparkSession, text: str) -> DataFrame:
    """The frame of a VALUES query ``text``, analysed once while it is among the latest ones asked for."""
    from pyspark.sql import DataFrame

    key = (spark, text)
    with _RECENT_FRAMES_LOCK:
        plan = _RECENT_FRAMES.get(key)
        if plan is not None:
            _RECENT_FRAMES.move_to_end(key)
    if plan is None:
        plan = spark.sql(text)._jdf
        with _RECENT_FRAMES_LOCK:
            _RECENT_FRAMES[key] = plan
            while len(_RECENT_FRAMES) > _RECENT_FRAMES_KEPT:
                _RECENT_FRAMES.popitem(last=False)
    return DataFrame(plan, spark)


@functools.lru_cache(maxsize=128)
def _fields(schema: str) -> tuple[tuple[str, str], ...]:
    """Each column's name and Spark type (``map<string,string>``) in a DDL schema."""
    from pyspark.sql.types import DataType, StructType

    struct = DataType.fromDDL(schema)
    assert isinstance(struct, StructType)
    return tuple((field.name, field.dataType.simpleString()) for field in struct.fields)


# Spark's string literals: a backslash escapes a quote and itself; a control character is
# written in octal, as Spark reads it back (a SHOW lists many strings: sqlglot's
# generator took 30 ms for SHOW TABLES' 50 rows).
_STRING_ESCAPES = {ord("'"): "\\'", ord("\\"): "\\\\"} | {c: f"\\{c:03o}" for c in (*range(32), 127)}


@functools.lru_cache(maxsize=128)
def _quoted_fields(schema: str) -> tuple[tuple[str, str], ...]:
    """Each column's name, quoted for Spark SQL, and Spark type in a DDL schema."""
    return tuple((exp.to_identifier(name, quoted=True).sql(dialect="spark"), kind) for name, kind in _fields(schema))


class _NoLiteral(Exception):
    """A value of a type no SQL literal here spells."""


def _literal(value: Any, kind: str) -> str:
    """``value`` as a Spark SQL literal of ``kind``: cast to it unless it spells that type itself."""
    text = _value(value)
    return text if _own_kind(value) == kind else f"CAST({text} AS {kind})"


def _own_kind(value: Any) -> str | None:
    """The Spark type (as ``simpleString`` names it) of the literal :func:`_value` writes for ``value``."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "bigint" if abs(value) < 2**63 else None
    kinds = {str: "string", float: "double", dt.datetime: "timestamp", dt.date: "date", bytes: "binary"}
    return next((kind for python_type, kind in kinds.items() if isinstance(value, python_type)), None)


def _value(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        number = int.__repr__(value)  # an IntEnum's number, not its name
        return f"CAST({number} AS DECIMAL(38, 0))" if abs(value) >= 2**63 else f"{number}L"
    if isinstance(value, float) and math.isfinite(value):
        return f"CAST('{value!r}' AS DOUBLE)"
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return f"{value:f}BD"
    if isinstance(value, str):
        return "'" + str.__str__(value).translate(_STRING_ESCAPES) + "'"  # a str enum's value, not its name
    if isinstance(value, dt.datetime):
        # As createDataFrame reads it: a naive value is the Python process's local time.
        return f"TIMESTAMP '{value.astimezone(dt.timezone.utc).isoformat()}'"
    if isinstance(value, dt.date):
        return f"DATE '{value.isoformat()}'"
    if isinstance(value, (bytes, bytearray)):
        return f"X'{bytes(value).hex()}'"
    if isinstance(value, dict):
        return "map(" + ", ".join(f"{_value(k)}, {_value(v)}" for k, v in value.items()) + ")"
    if isinstance(value, (list, tuple)):
        return "array(" + ", ".join(_value(v) for v in value) + ")"
    raise _NoLiteral(type(value).__name__)
