"""CREATE, DROP, SHOW and DESCRIBE STREAM."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import ADMIN_ROLE, SourceKind, StreamMode
from lakeclone.dialect import table_reference
from lakeclone.dialect.expressions import CreateStream
from lakeclone.engine import registry, results
from lakeclone.engine.objects import require_free_name, require_schema
from lakeclone.engine.show import matches, scope_schemas
from lakeclone.errors import ObjectExistsError, ObjectNotFoundError, SqlCompilationError
from lakeclone.streams import tracking
from lakeclone.streams.staleness import staleness
from lakeclone.timetravel import point_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import StreamEntry, TableEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution

# The kind's name in statements (DROP STREAM, SHOW STREAMS …) and in the registry.
STREAM = "STREAM"

# Snowflake's TYPE of a stream on Delta-backed standard tables.
STREAM_TYPE = "DELTA"


@registry.statement(CreateStream)
def create_stream(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] STREAM [IF NOT EXISTS] s ON TABLE t [AT|BEFORE(...)] [options]``."""
    expression = execution.expression
    name = execution.tables.name(expression.this)
    schema = require_schema(execution, name.database, name.schema)
    catalog = execution.catalog
    require_free_name(execution, name, STREAM)
    existing = catalog.stream(name.database, name.schema, name.name)
    if existing is not None and not expression.args.get("replace"):
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
        raise ObjectExistsError(name.name)
    if expression.text("kind").upper() != SourceKind.TABLE.value:
        raise SqlCompilationError("Streams on views are not supported by lakeclone yet.")
    source = expression.args["source"]
    entry = execution.tables.entry(source)
    mode = StreamMode.APPEND_ONLY if expression.args.get("append_only") else StreamMode.DEFAULT
    offset = _offset(execution, entry, source)
    comment = expression.args.get("comment")
    with catalog.transaction():
        # Again under the write lock: another process may have taken the name since.
        require_free_name(execution, name, STREAM)
        current = catalog.stream(name.database, name.schema, name.name)
        if current is not None:
            if not expression.args.get("replace"):
                raise ObjectExistsError(name.name)
            catalog.drop_stream(current, execution.now())
        catalog.create_stream(
            schema,
            name.name,
            source_kind=SourceKind.TABLE,
            source_id=entry.id,
            mode=mode,
            offsets={entry.id: offset},
            initial_rows=bool(expression.args.get("show_initial_rows")),
            comment=comment.name if comment is not None else "",
            now=execution.now(),
        )
    return results.status(execution.spark, f"Stream {name.name} successfully created.")


def _offset(execution: Execution, entry: TableEntry, source: exp.Table) -> int:
    """The version a new stream's changes start after: now, a time-travel point, or another stream's offset.

    The first stream on a table turns change tracking on; a point before
    tracking started is refused before anything changes.
    """
    when = source.args.get("when")
    tables = execution.tables
    interval = tracking.current(execution.catalog, entry.id)
    if isinstance(when, exp.HistoricalData) and str(when.args.get("kind")).upper() == "STREAM":
        other = execution.catalog.stream(*_stream_name(execution, when.expression))
        if other is None or entry.id not in other.offsets:
            raise SqlCompilationError(f"Stream '{when.expression.name}' does not exist or is not on table {entry.name}.")
        version = other.offsets[entry.id]
        if when.name.upper() == "BEFORE":
            version -= 1
    elif when is not None or source.args.get("version") is not None:
        version = tables.version(entry, point_of(source))
    else:
        tracking.start(execution, entry)
        return tables.current_version(entry)
    if interval is None or version < interval.since_version:
        raise tracking.not_tracked(entry.name)
    return version


def _stream_name(execution: Execution, value: exp.Expression) -> tuple[str, str, str]:
    if not (isinstance(value, exp.Literal) and value.is_string):
        raise SqlCompilationError("STREAM => takes a stream's name as a string.")
    name = execution.tables.name(table_reference(value.name))
    return name.database, name.schema, name.name


def drop_stream(execution: Execution, target: exp.Table) -> tuple[str, str, object | None]:
    """``DROP STREAM [IF EXISTS] s`` inside DROP's catalog transaction."""
    name = execution.tables.name(target)
    stream = execution.catalog.stream(name.database, name.schema, name.name)
    if stream is not None:
        execution.catalog.drop_stream(stream, execution.now())
    return str(name), name.name, stream


_COLUMNS = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, owner STRING, comment STRING, "
    "table_name STRING, source_type STRING, base_tables STRING, type STRING, stale STRING, mode STRING, "
    "stale_after TIMESTAMP, invalid_reason STRING, offset_version BIGINT, offsets STRING"
)


def _row(execution: Execution, stream: StreamEntry) -> tuple[Any, ...]:
    catalog = execution.catalog
    state = staleness(catalog, stream, execution.now())
    bases = [catalog.table_by_id(table_id) for table_id in stream.offsets]
    names = [t.qualified if t is not None else table_id for t, table_id in zip(bases, stream.offsets, strict=True)]
    source = catalog.table_by_id(stream.source_id)
    offsets = ", ".join(f"{n}@{v}" for n, v in zip(names, stream.offsets.values(), strict=True))
    single = next(iter(stream.offsets.values())) if len(stream.offsets) == 1 else None
    return (
        stream.created_at,
        stream.name,
        stream.database,
        stream.schema,
        ADMIN_ROLE,
        stream.comment,
        source.qualified if source is not None else stream.source_id,
        stream.source_kind.value.capitalize(),
        ", ".join(names),
        STREAM_TYPE,
        "true" if state.stale else "false",
        stream.mode.value,
        state.stale_after,
        state.reason or "N/A",
        single,
        offsets,
    )


def show_streams(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW STREAMS [LIKE …] [IN SCHEMA s | DATABASE d]``."""
    data = [
        _row(execution, stream)
        for schema in scope_schemas(execution)
        for stream in execution.catalog.streams(schema)
        if matches(like, stream.name)
    ]
    return results.rows(execution.spark, _COLUMNS, data)


def describe_stream(execution: Execution) -> DataFrame:
    """``DESCRIBE STREAM s``: SHOW STREAMS' row for one stream."""
    name = execution.tables.name(execution.expression.this)
    stream = execution.catalog.stream(name.database, name.schema, name.name)
    if stream is None:
        raise ObjectNotFoundError(str(name))
    return results.rows(execution.spark, _COLUMNS, [_row(execution, stream)])


def stream_named(catalog: Catalog, name: QualifiedName) -> bool:
    """Whether a live stream holds ``name``, which no table or view may then take."""
    return catalog.stream(name.database, name.schema, name.name) is not None
