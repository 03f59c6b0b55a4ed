"""Binding what reads changes into a query: a stream's name, the CHANGES clause, and ``TABLE_CHANGES``.

Each becomes a frame of changes (see :mod:`lakeclone.streams.reader`) bound
into the statement as a temporary view. A stream read is remembered on the
statement's :class:`~lakeclone.engine.tables.Tables`, so that a DML statement
moves the stream's offsets when it commits (:mod:`lakeclone.streams.consume`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone import timetravel
from lakeclone.catalog.entries import SourceKind, StreamMode
from lakeclone.catalog.names import QualifiedName
from lakeclone.dialect import table_reference
from lakeclone.engine.compiler import protected
from lakeclone.engine.tables import StreamRead
from lakeclone.errors import SqlCompilationError, StaleStreamError
from lakeclone.streams import consume, reader, tracking, view_reader
from lakeclone.streams.staleness import staleness
from lakeclone.timetravel import Point, PointKind

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import StreamEntry, TableEntry
    from lakeclone.engine.tables import Tables


def bind_stream(tables: Tables, reference: exp.Table, name: QualifiedName) -> exp.Expression | None:
    """A stream named in a query: its pending changes, bound; None when no stream has the name."""
    stream = tables.catalog.streams.stream(name.database, name.schema, name.name)
    if stream is None:
        return None
    if reference.args.get("when") or reference.args.get("version"):
        raise SqlCompilationError(f"Time travel is not supported on stream {stream.name}; use the CHANGES clause on its table.")
    frame, read = stream_changes(tables, stream)
    tables.stream_reads[stream.id] = read
    alias = reference.args.get("alias") or exp.TableAlias(this=exp.to_identifier(reference.name))
    return tables.bind_frame(frame, alias)


def stream_changes(tables: Tables, stream: StreamEntry) -> tuple[DataFrame, StreamRead]:
    """A stream's pending changes as of the statement, and where its offsets would move if they were consumed.

    Raises:
        StaleStreamError: the stream is stale.
    """
    catalog = tables.catalog
    consume.resolve_abandoned(catalog, tables.delta, tables.now, stream.id)
    stream = catalog.streams.stream_by_id(stream.id) or stream
    transaction = tables.session.transaction
    if transaction is not None:
        # Repeatable read: every query of the stream in the transaction starts where the first did.
        stream = transaction.streams.setdefault(stream.id, stream)
    state = staleness(catalog, stream, tables.now)
    if state.reason is not None:
        raise StaleStreamError(f"Stream {stream.qualified} is stale: {state.reason}. Recreate it with CREATE OR REPLACE STREAM.")
    if stream.source_kind is SourceKind.VIEW:
        return view_reader.stream_changes(tables, stream)
    ((table_id, start),) = stream.offsets.items()
    entry = catalog.objects.table_by_id(table_id)
    assert entry is not None  # staleness() checked that the table is live
    log = tables.log(entry)
    if stream.initial_rows:
        frame = reader.initial_rows(log, start)
        return frame, StreamRead(stream.id, stream.name, stream.offsets, stream.offsets, initial_rows=False)
    end = tables.stream_end(entry)
    tracking.require_tracked(catalog, entry, start, end)
    frame = reader.changes(log, start, end, stream.mode)
    return frame, StreamRead(stream.id, stream.name, stream.offsets, {table_id: end}, initial_rows=False)


# The CHANGES clause -------------------------------------------------------------


def bind_changes(tables: Tables, reference: exp.Table, entry: TableEntry) -> exp.Expression:
    """``t CHANGES(INFORMATION => DEFAULT|APPEND_ONLY) AT|BEFORE(...) [END(...)]``: the stream's rows over that interval."""
    changes = reference.args["changes"]
    information = changes.text("information").upper() or StreamMode.DEFAULT.value
    if information not in StreamMode.__members__:
        raise SqlCompilationError(f"invalid value [{information}] for parameter 'INFORMATION'")
    start_point = changes.args.get("at_before")
    if start_point is None:
        raise SqlCompilationError("CHANGES needs an AT or BEFORE clause giving where the changes start.")
    start = tables.version(entry, _point(start_point))
    end_point = changes.args.get("end")
    end = tables.version(entry, _point(end_point)) if end_point is not None else tables.current_version(entry)
    if end < start:
        raise SqlCompilationError("The END of a CHANGES clause is before its start.")
    tracking.require_tracked(tables.catalog, entry, start, end, even_none=True)
    frame = reader.changes(tables.log(entry), start, end, StreamMode(information))
    alias = reference.args.get("alias") or exp.TableAlias(this=exp.to_identifier(reference.name))
    return tables.bind_frame(frame, alias)


def _point(node: exp.HistoricalData) -> Point:
    kind = str(node.args["kind"]).upper()
    if kind not in PointKind.__members__:
        raise SqlCompilationError(f"invalid time travel point {kind}")
    return Point(PointKind(kind), node.expression, node.name.upper() == "BEFORE")


# TABLE_CHANGES ------------------------------------------------------------------


def bind_table_changes(tables: Tables, call: exp.Anonymous) -> exp.Expression:
    """Delta's ``table_changes('t', start[, end])``: its change data feed, commit times by the Lake's clock.

    ``start`` and ``end`` are versions (both included) or timestamps: the first
    version committed at or after ``start``, the last at or before ``end``.
    """
    from pyspark.sql import functions as F

    arguments = call.expressions
    if len(arguments) not in (2, 3) or not (isinstance(arguments[0], exp.Literal) and arguments[0].is_string):
        raise SqlCompilationError("TABLE_CHANGES takes a table name, a start and an optional end: table_changes('t', 1, 5).")
    reference = table_reference(arguments[0].name)
    entry = tables.entry(reference)
    history = tables.history(entry)
    start = _version_argument(tables, entry, arguments[1], first=True)
    end = _version_argument(tables, entry, arguments[2], first=False) if len(arguments) == 3 else history[-1].version
    tracking.require_tracked(tables.catalog, entry, start - 1, end)
    feed = (
        tables.spark.read.format("delta")
        .option("readChangeFeed", "true")
        .option("startingVersion", start)
        .option("endingVersion", end)
        .load(entry.location)
    )
    times = tables.spark.createDataFrame([(c.version, c.timestamp) for c in history], "lc_version BIGINT, lc_time TIMESTAMP")
    columns = [F.col(f"`{c}`") for c in feed.columns if c != "_commit_timestamp"]
    frame = feed.join(F.broadcast(times), feed["_commit_version"] == times["lc_version"]).select(
        *columns, F.col("lc_time").alias("_commit_timestamp")
    )
    # Its rows are the table's, before and after each change: the table's policies mask and filter them.
    return protected(tables, tables.name(reference), tables.bind_frame(frame, None))


def table_changes_reads(call: exp.Anonymous) -> list[exp.Table]:
    """The table a ``table_changes('t', ...)`` call reads; none when the call is malformed (binding says why)."""
    arguments = call.expressions
    if arguments and isinstance(arguments[0], exp.Literal) and arguments[0].is_string:
        return [table_reference(arguments[0].name)]
    return []


def _version_argument(tables: Tables, entry: TableEntry, value: exp.Expression, *, first: bool) -> int:
    history = tables.history(entry)
    if isinstance(value, exp.Literal) and not value.is_string:
        version = timetravel.literal_int(value, "VERSION")
        return timetravel.check_version(history, version, name=entry.name, horizon=tables.horizon(entry))
    moment = tables.evaluate_timestamp(value)
    versions = [c.version for c in history if (c.timestamp >= moment if first else c.timestamp <= moment)]
    if not versions:
        raise timetravel.not_available(entry.name)
    return min(versions) if first else max(versions)
