"""A stream on a view: the net change of the view's rows between the offsets on its tables and their current versions.

The view is evaluated twice with each row's lineage (see
:mod:`lakeclone.streams.lineage`): with every base table at its offset, and
at its current version. Only rows built from at least one base row the
interval changed (the ids a table's own stream would return, see
:mod:`lakeclone.streams.reader`) are kept on either side; the rest are the
same on both. The two sides are then netted by composite id, as a table's
stream nets by row id: a row only at the end is an INSERT, one only at the
start a DELETE, one at both with other values a DELETE and INSERT pair with
``METADATA$ISUPDATE``, one at both with the same values nothing (a base row
updated in a column the view does not show changes no row of the view).
``METADATA$ROW_ID`` is a hash of the composite id, so a view row keeps its
id across updates.

- ``APPEND_ONLY``: each base table is its rows at the offset plus the rows
  the interval inserted, as inserted; the view's rows built from at least one
  inserted row are the INSERTs. As for a table, later updates and deletes are
  ignored, and nothing is netted against the old side.
- ``SHOW_INITIAL_ROWS``: the view's rows at the offsets, as INSERTs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from lakeclone.catalog.entries import StreamMode
from lakeclone.delta.changes import ROW_ID as METADATA_ROW_ID
from lakeclone.delta.changes import file_changes
from lakeclone.delta.statements import quoted
from lakeclone.engine.compiler import to_spark
from lakeclone.engine.tables import StreamRead
from lakeclone.errors import StaleStreamError
from lakeclone.streams import reader, tracking, view_plan
from lakeclone.streams.lineage import RID, ROW_ID, TOUCHED, Source, with_lineage
from lakeclone.streams.reader import ACTION, DELETE, INSERT, IS_UPDATE, ROW_ID_COLUMN

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame
    from sqlglot import exp

    from lakeclone.catalog.entries import StreamEntry, TableEntry
    from lakeclone.engine.tables import Tables
    from lakeclone.streams.view_plan import ViewPlan


def stream_changes(tables: Tables, stream: StreamEntry) -> tuple[DataFrame, StreamRead]:
    """A (not stale) view stream's pending changes, and where its offsets move if they are consumed.

    Raises:
        StaleStreamError: the view now reads other tables than those the stream has offsets on.
    """
    view = tables.catalog.views.view_by_id(stream.source_id)
    assert view is not None  # staleness() checked that the view is live
    plan = view_plan.expand(tables, view)
    if {t.id for t in plan.tables} != set(stream.offsets):
        raise StaleStreamError(
            f"Stream {stream.qualified} is stale: its view {view.qualified} now reads other tables than when the "
            "stream was created. Recreate it with CREATE OR REPLACE STREAM."
        )
    starts = dict(stream.offsets)
    if stream.initial_rows:
        frame = initial_rows(tables, plan, starts)
        return frame, StreamRead(stream.id, stream.name, starts, starts, initial_rows=False)
    ends = {t.id: tables.stream_end(t) for t in plan.tables}
    for table in plan.tables:
        tracking.require_tracked(tables.catalog, table, starts[table.id], ends[table.id])
    frame = changes(tables, plan, starts, ends, stream.mode)
    return frame, StreamRead(stream.id, stream.name, starts, ends, initial_rows=False)


def changes(tables: Tables, plan: ViewPlan, starts: Mapping[str, int], ends: Mapping[str, int], mode: StreamMode) -> DataFrame:
    """The change of ``plan``'s view from versions ``starts`` to ``ends`` (by table id), with the metadata columns."""
    from pyspark.sql import functions as F

    if all(starts[t.id] >= ends[t.id] for t in plan.tables):
        nothing = evaluate(tables, plan, [_rows(tables, t, ends[t.id], touched=False) for t in plan.tables])
        return _records(nothing.where(F.col(TOUCHED)), plan, INSERT)
    if mode is StreamMode.APPEND_ONLY:
        sources = [_with_appended(tables, t, starts[t.id], ends[t.id]) for t in plan.tables]
        return _records(evaluate(tables, plan, sources).where(F.col(TOUCHED)), plan, INSERT)
    touched = [_touched(tables, t, starts[t.id], ends[t.id]) for t in plan.tables]
    old = evaluate(tables, plan, [_marked(tables, t, starts[t.id], ids) for t, ids in zip(plan.tables, touched, strict=True)])
    new = evaluate(tables, plan, [_marked(tables, t, ends[t.id], ids) for t, ids in zip(plan.tables, touched, strict=True)])
    return _net(old.where(F.col(TOUCHED)), new.where(F.col(TOUCHED)), plan)


def initial_rows(tables: Tables, plan: ViewPlan, versions: Mapping[str, int]) -> DataFrame:
    """The view's rows with every base table at its version in ``versions``, each as an INSERT."""
    return _records(evaluate(tables, plan, [_rows(tables, t, versions[t.id], touched=True) for t in plan.tables]), plan, INSERT)


def evaluate(tables: Tables, plan: ViewPlan, sources: list[DataFrame]) -> DataFrame:
    """The view's rows over ``sources`` (one frame per base table, as :class:`~lakeclone.streams.lineage.Source` says).

    The frame has the view's columns, then ``__LC_RID`` and ``__LC_TOUCHED``.
    """
    spark = tables.spark
    bound = [
        Source(tables.bind_frame(frame, None), tuple(c for c in frame.columns if c not in (ROW_ID, TOUCHED))) for frame in sources
    ]

    def columns_of(query: exp.Query) -> list[str]:
        return list(spark.sql(to_spark(query)).columns)

    query = with_lineage(plan.query, bound, columns_of, plan.view)
    frame = spark.sql(to_spark(query))
    # By position: the view's recorded names win over whatever Spark named the query's columns.
    return frame.toDF(*plan.columns, RID, TOUCHED)


# Base table rows ---------------------------------------------------------------------------------


def _rows(tables: Tables, table: TableEntry, version: int, *, touched: bool) -> DataFrame:
    """``table`` at ``version`` with its row ids, every row marked ``touched`` (or none)."""
    from pyspark.sql import functions as F

    frame = tables.log(table).frame(version)
    return frame.select(
        *[F.col(quoted(c)) for c in frame.columns],
        F.col(METADATA_ROW_ID).alias(ROW_ID),
        F.lit(touched).alias(TOUCHED),
    )


def _touched(tables: Tables, table: TableEntry, start: int, end: int) -> DataFrame:
    """The row ids of ``table`` the interval changed: those its own standard stream returns."""
    from pyspark.sql import functions as F

    changed = reader.changes(tables.log(table), start, end, StreamMode.DEFAULT)
    return changed.select(F.col(quoted(ROW_ID_COLUMN)).cast("long").alias("lc_touched_id")).distinct()


def _marked(tables: Tables, table: TableEntry, version: int, touched: DataFrame) -> DataFrame:
    """``table`` at ``version`` with its row ids, a row marked when its id is in ``touched``."""
    from pyspark.sql import functions as F

    frame = tables.log(table).frame(version)
    rows = frame.select(*[F.col(quoted(c)) for c in frame.columns], F.col(METADATA_ROW_ID).alias(ROW_ID))
    marks = touched.select(F.col("lc_touched_id"), F.lit(True).alias("lc_touched"))
    joined = rows.join(marks, rows[ROW_ID] == marks["lc_touched_id"], "left")
    return joined.select(
        *[rows[quoted(c)] for c in frame.columns],
        rows[ROW_ID],
        F.coalesce(F.col("lc_touched"), F.lit(False)).alias(TOUCHED),
    )


def _with_appended(tables: Tables, table: TableEntry, start: int, end: int) -> DataFrame:
    """``table``'s rows at ``start``, unmarked, and those the commits up to ``end`` inserted, as inserted, marked."""
    from pyspark.sql import functions as F

    old = _rows(tables, table, start, touched=False)
    if start >= end:
        return old
    log = tables.log(table)
    fresh = reader.appended_rows(log, file_changes(log, start, end))
    if fresh is None:
        return old
    columns = log.schema(end).fieldNames()
    appended = fresh.select(
        *[F.col(quoted(c)) for c in columns], F.col(METADATA_ROW_ID).alias(ROW_ID), F.lit(True).alias(TOUCHED)
    )
    return old.unionByName(appended, allowMissingColumns=True)


# Records ------------------------------------------------------------------------------------------


def _records(frame: DataFrame, plan: ViewPlan, action: str) -> DataFrame:
    from pyspark.sql import functions as F

    return frame.select(
        *[F.col(quoted(c)) for c in plan.columns],
        F.lit(action).alias(ACTION),
        F.lit(False).alias(IS_UPDATE),
        F.sha1(F.col(RID)).alias(ROW_ID_COLUMN),
    )


def _net(old: DataFrame, new: DataFrame, plan: ViewPlan) -> DataFrame:
    """Old and new view rows joined on their composite ids: each pair gives a DELETE, an INSERT, both or nothing."""
    from pyspark.sql import functions as F

    def side(frame: DataFrame) -> DataFrame:
        return frame.select(
            F.col(RID).alias("rid"),
            F.struct(*[F.col(quoted(c)) for c in plan.columns]).alias("row"),
            F.lit(True).alias("here"),
        )

    joined = side(old).alias("o").join(side(new).alias("n"), "rid", "full_outer")
    in_old, in_new = F.col("o.here").isNotNull(), F.col("n.here").isNotNull()
    both = in_old & in_new
    changed = ~(both & F.col("o.row").eqNullSafe(F.col("n.row")))

    def record(row: str, present: Column, action: str) -> Column:
        return F.when(present & changed, F.struct(F.col(row).alias("row"), F.lit(action).alias("action"), both.alias("update")))

    deleted = record("o.row", in_old, DELETE)
    inserted = record("n.row", in_new, INSERT)
    records = joined.select(F.col("rid"), F.explode(F.array(deleted, inserted)).alias("r")).where(F.col("r").isNotNull())
    return records.select(
        *[F.col("r.row").getField(c).alias(c) for c in plan.columns],
        F.col("r.action").alias(ACTION),
        F.col("r.update").alias(IS_UPDATE),
        F.sha1(F.col("rid")).alias(ROW_ID_COLUMN),
    )
