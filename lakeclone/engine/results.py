"""The small frames DDL and DML statements return, as Snowflake's worksheets show them."""

from __future__ import annotations

import datetime as dt
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

if TYPE_CHECKING:
    import pyarrow as pa
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
    # One row of literals parses faster than an Arrow batch of it is made (see rows()).
    values = ", ".join(value.sql(dialect="spark") for _, value in columns)
    names = ", ".join(exp.to_identifier(name, quoted=True).sql(dialect="spark") for name, _ in columns)
    text = f"SELECT * FROM VALUES ({values}) AS result({names})"
    return _recent_frame(spark, (text, b""), lambda: spark.sql(text)._jdf)


def rows(spark: SparkSession, schema: str, data: Sequence[Sequence[Any]]) -> DataFrame:
    """A frame of rows built on the driver: SHOW and DESCRIBE results.

    The rows reach Spark as one Arrow record batch, which Spark keeps as a
    local relation: collected on the driver without a Spark job, as a VALUES
    query is, but with nothing for Spark to parse (a SHOW TABLES of 50 tables
    was ~15 ms of parsing and analysing literals). A naive datetime is the
    Python process's local time, as ``createDataFrame`` reads it. A value
    Arrow cannot hold in its column's type makes it a frame made with
    ``createDataFrame``, which runs a Spark job.
    """
    import pyarrow as pa

    # Spark reads a batch's strings and binaries with the offsets this setting says (32-bit by default).
    columns = _columns(schema, large=spark.conf.get(_LARGE_VAR_TYPES, "false") == "true")
    try:
        batch = _record_batch(columns, data)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return spark.createDataFrame([tuple(r) for r in data], schema)

    def plan() -> Any:
        assert spark._jvm is not None
        to_frame, scala, java = _jvm_classes(spark._jvm)
        batches = scala.asScala(java.singletonList(batch).iterator())
        # Spark's own path for a pyarrow table (createDataFrame), without its configuration
        # reads and temporary file: below spark.sql.execution.arrow.localRelationThreshold
        # (48 MB unless a session lowers it) the batch is a LocalRelation.
        return to_frame.toDataFrame(batches, columns.json, spark._jsparkSession)

    return _recent_frame(spark, (columns.json, batch), plan)


@functools.lru_cache(maxsize=4)
def _jvm_classes(jvm: Any) -> tuple[Any, Any, Any]:
    """PySpark's SQL helpers, Scala's collection converters and Java's Collections in ``jvm``.

    Looked up once: Py4J asks the JVM about each part of a dotted name (a
    round trip apiece, a dozen for these, ~2 ms of a SHOW's ~20).
    """
    return jvm.PythonSQLUtils, jvm.scala.jdk.javaapi.CollectionConverters, jvm.java.util.Collections


@dataclass(frozen=True)
class _Columns:
    """A DDL schema as Spark's JSON and as Arrow fields, with which of them hold timestamps of a time zone."""

    json: str
    arrow: pa.Schema
    zoned: frozenset[int]


_LARGE_VAR_TYPES = "spark.sql.execution.arrow.useLargeVarTypes"


@functools.lru_cache(maxsize=128)
def _columns(schema: str, *, large: bool) -> _Columns:
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import DataType, StructType, TimestampType

    struct = DataType.fromDDL(schema)
    assert isinstance(struct, StructType)
    arrow = to_arrow_schema(struct, timezone="UTC", prefers_large_types=large)
    zoned = frozenset(k for k, field in enumerate(struct.fields) if isinstance(field.dataType, TimestampType))
    return _Columns(struct.json(), arrow, zoned)


def _record_batch(columns: _Columns, data: Sequence[Sequence[Any]]) -> bytes:
    """``data`` as one serialized Arrow record batch of ``columns``."""
    import pyarrow as pa

    arrays = []
    for k, field in enumerate(columns.arrow):
        values = [row[k] for row in data]
        if k in columns.zoned:
            values = [_aware(value) for value in values]
        arrays.append(pa.array(values, type=field.type))
    batch = pa.RecordBatch.from_arrays(arrays, schema=columns.arrow)
    return bytes(batch.serialize().to_pybytes())


def _aware(value: Any) -> Any:
    """A naive datetime as the Python process's local time (Arrow would read it as UTC)."""
    return value.astimezone() if isinstance(value, dt.datetime) and value.tzinfo is None else value


# Spark's frames of the latest local results, by session and content (a VALUES query's text, or
# a batch's columns and bytes). A SHOW repeated over objects that have not changed (a widget
# refreshing, a user looking again) and a status ("Statement executed successfully.") are the
# same result again, and a frame Spark has analysed and planned once collects in half the time
# (~8 of SHOW TABLES' 18 ms over 50 tables). Frames are immutable: each caller gets its own
# Python frame over the shared plan.
_RECENT_FRAMES: OrderedDict[tuple[SparkSession, str, bytes], Any] = OrderedDict()
_RECENT_FRAMES_KEPT = 32
_RECENT_FRAMES_LOCK = threading.Lock()


def _recent_frame(spark: SparkSession, content: tuple[str, bytes], plan: Callable[[], Any]) -> DataFrame:
    """The frame of ``content``, made by ``plan`` once while it is among the latest ones asked for."""
    from pyspark.sql import DataFrame

    key = (spark, *content)
    with _RECENT_FRAMES_LOCK:
        made = _RECENT_FRAMES.get(key)
        if made is not None:
            _RECENT_FRAMES.move_to_end(key)
    if made is None:
        made = plan()
        with _RECENT_FRAMES_LOCK:
            _RECENT_FRAMES[key] = made
            while len(_RECENT_FRAMES) > _RECENT_FRAMES_KEPT:
                _RECENT_FRAMES.popitem(last=False)
    return DataFrame(made, spark)
