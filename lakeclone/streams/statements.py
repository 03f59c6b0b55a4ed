"""CREATE, DROP, SHOW and DESCRIBE STREAM, on tables and on views."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone import views
from lakeclone.catalog.entries import ADMIN_ROLE, ObjectKind, SourceKind, StreamEntry, StreamMode
from lakeclone.dialect import table_reference
from lakeclone.dialect.expressions import CreateStream
from lakeclone.engine import registry, results
from lakeclone.engine.objects import make_room, require_free_name, require_object, require_schema
from lakeclone.engine.privileges import Privilege, Requirement, create_in_schema, reads_of
from lakeclone.errors import ObjectExistsError, SqlCompilationError
from lakeclone.streams import tracking, view_plan
from lakeclone.streams.staleness import staleness
from lakeclone.timetravel import PointKind, point_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import TableEntry, ViewEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

# Snowflake's TYPE of a stream on Delta-backed standard tables.
STREAM_TYPE = "DELTA"


def _create_stream_needs(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """CREATE STREAM in the stream's schema, and SELECT on what it tracks (and on what that reads)."""
    yield from create_in_schema(tables, expression.this, Privilege.CREATE_STREAM)
    yield from reads_of(tables, [expression.args["source"]])


@registry.statement(CreateStream, bind=_create_stream_needs, query_type="CREATE_STREAM")
def create_stream(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] STREAM [IF NOT EXISTS] s ON {TABLE t | VIEW v} [AT|BEFORE(...)] [options]``.

    A stream on a view has an offset on each table the view reads (through
    nested views and subqueries); the view must be one a stream can follow
    (see :mod:`lakeclone.streams.view_plan`).
    """
    expression = execution.expression
    name = execution.tables.name(expression.this)
    schema = require_schema(execution, name.database, name.schema)
    catalog = execution.catalog
    require_free_name(execution, name, ObjectKind.STREAM)
    existing = catalog.streams.stream(name.database, name.schema, name.name)
    if existing is not None and not expression.args.get("replace"):
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
        raise ObjectExistsError(name.name)
    source = expression.args["source"]
    view: ViewEntry | None = None
    if expression.text("kind").upper() == SourceKind.VIEW.value:
        view = views.require_view(execution, source)
        bases = view_plan.expand(execution.tables, view).tables
        source_kind, source_id, on = SourceKind.VIEW, view.id, f"view {view.name}"
    else:
        entry = execution.tables.entry(source)
        bases = (entry,)
        source_kind, source_id, on = SourceKind.TABLE, entry.id, f"table {entry.name}"
    mode = StreamMode.APPEND_ONLY if expression.args.get("append_only") else StreamMode.DEFAULT
    offsets = _offsets(execution, bases, source, on=on, view=view is not None)
    comment = expression.args.get("comment")
    with execution.work.records():
        # Again under the write lock: another process may have taken the name since.
        require_free_name(execution, name, ObjectKind.STREAM)
        held = make_room(execution, ObjectKind.STREAM, name)
        if held is not None:
            return held
        if view is not None:
            # A stream on a view turns the view's change tracking on, as the first stream on a table does the table's.
            catalog.parameters.set_parameter(view.id, tracking.CHANGE_TRACKING, "true")
        catalog.streams.create_stream(
            schema,
            name.name,
            source_kind=source_kind,
            source_id=source_id,
            mode=mode,
            offsets=offsets,
            initial_rows=bool(expression.args.get("show_initial_rows")),
            comment=comment.name if comment is not None else "",
            now=execution.now(),
        )
    return results.status(execution.spark, f"Stream {name.name} successfully created.")


def _offsets(execution: Execution, bases: Sequence[TableEntry], source: exp.Table, *, on: str, view: bool) -> dict[str, int]:
    """The versions a new stream's changes start after, by base table: now, a time-travel point, or another stream's.

    The first stream on a table (or on a view reading it) turns the table's
    change tracking on; a point before tracking started is refused before
    anything changes. A view's tables share no version numbers, so a point on
    a view is a moment (TIMESTAMP, OFFSET, STATEMENT), not a VERSION.
    """
    when = source.args.get("when")
    tables = execution.tables
    catalog = execution.catalog
    if isinstance(when, exp.HistoricalData) and ObjectKind.named(when.args.get("kind")) is ObjectKind.STREAM:
        other = catalog.streams.stream(*_stream_name(execution, when.expression))
        if other is None or any(t.id not in other.offsets for t in bases):
            raise SqlCompilationError(f"Stream '{when.expression.name}' does not exist or is not on {on}.")
        back = 1 if when.name.upper() == "BEFORE" else 0
        versions = {t.id: other.offsets[t.id] - back for t in bases}
    elif when is not None or source.args.get("version") is not None:
        point = point_of(source)
        if view and point is not None and point.kind is PointKind.VERSION:
            raise SqlCompilationError("VERSION is not a point in time for a view; use TIMESTAMP, OFFSET or STATEMENT.")
        versions = {t.id: tables.version(t, point) for t in bases}
    else:
        for table in bases:
            tracking.start(execution, table)
        return {t.id: tables.current_version(t) for t in bases}
    for table in bases:
        interval = tracking.current(catalog, table.id)
        if interval is None or versions[table.id] < interval.since_version:
            raise tracking.not_tracked(table.name)
    return versions


def _stream_name(execution: Execution, value: exp.Expression) -> tuple[str, str, str]:
    if not (isinstance(value, exp.Literal) and value.is_string):
        raise SqlCompilationError("STREAM => takes a stream's name as a string.")
    name = execution.tables.name(table_reference(value.name))
    return name.database, name.schema, name.name


_COLUMNS = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, owner STRING, comment STRING, "
    "table_name STRING, source_type STRING, base_tables STRING, type STRING, stale STRING, mode STRING, "
    "stale_after TIMESTAMP, invalid_reason STRING, offset_version BIGINT, offsets STRING"
)


def _row(execution: Execution, stream: StreamEntry) -> tuple[Any, ...]:
    catalog = execution.catalog
    state = staleness(catalog, stream, execution.now())
    bases = [catalog.objects.table_by_id(table_id) for table_id in stream.offsets]
    names = [t.qualified if t is not None else table_id for t, table_id in zip(bases, stream.offsets, strict=True)]
    source: TableEntry | ViewEntry | None
    if stream.source_kind is SourceKind.VIEW:
        source = catalog.views.view_by_id(stream.source_id)
    else:
        source = catalog.objects.table_by_id(stream.source_id)
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


def describe_stream(execution: Execution) -> DataFrame:
    """``DESCRIBE STREAM s``: SHOW STREAMS' row for one stream."""
    stream = require_object(execution, ObjectKind.STREAM, execution.expression.this, StreamEntry)
    return results.rows(execution.spark, _COLUMNS, [_row(execution, stream)])


STREAM = registry.SchemaObject(
    ObjectKind.STREAM,
    "STREAMS",
    columns=_COLUMNS,
    row=_row,
    shares_table_names=True,
)
"""Streams, as DROP and the tables' namespace know them; CREATE STREAM is a statement of its own."""
