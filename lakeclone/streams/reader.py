"""A stream's rows: the change between two versions of a table, with Snowflake's metadata columns.

Every way of reading changes (a stream, the CHANGES clause) builds its frame
here, from the files the interval's commits touched (see
:mod:`lakeclone.delta.changes`):

- the net change (``DEFAULT``): a row present at both ends with the same
  commit version did not change; with a newer one it was updated, a DELETE of
  the old values and an INSERT of the new, both ``METADATA$ISUPDATE``; a row
  only at the start was deleted, one only at the end inserted. A row inserted
  and updated inside the interval is one INSERT, one inserted and deleted is
  nothing, one updated several times is one pair.
- ``APPEND_ONLY``: every row the interval's commits inserted, as inserted,
  whatever happened to it since; no join.
- the initial rows (``SHOW_INITIAL_ROWS``): the rows of one version, as inserts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.catalog.entries import StreamMode
from lakeclone.delta.changes import BASE_ROW_ID, ROW_COMMIT_VERSION, ROW_ID, file_changes, files_frame, narrowed
from lakeclone.delta.statements import quoted

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.delta.changes import FileChanges
    from lakeclone.delta.log import TableLog

ACTION = "METADATA$ACTION"
IS_UPDATE = "METADATA$ISUPDATE"
ROW_ID_COLUMN = "METADATA$ROW_ID"
METADATA_COLUMNS = (ACTION, IS_UPDATE, ROW_ID_COLUMN)
INSERT, DELETE = "INSERT", "DELETE"


def changes(log: TableLog, start: int, end: int, mode: StreamMode) -> DataFrame:
    """The rows that changed after version ``start`` up to ``end``, with the three metadata columns."""
    columns = log.schema(end).fieldNames()
    if start >= end:
        return _empty(log, end, columns)
    found = file_changes(log, start, end)
    if mode is StreamMode.APPEND_ONLY:
        fresh = appended_rows(log, found)
        if fresh is None:
            return _empty(log, end, columns)
        return _records(fresh, columns, INSERT, is_update=False)
    found = narrowed(log, found)
    if not found.removed and not found.added:
        return _empty(log, end, columns)
    if not found.removed:
        return _records(files_frame(log, found.added, version=end), columns, INSERT, is_update=False)
    if not found.added:
        return _records(files_frame(log, found.removed, version=end), columns, DELETE, is_update=False)
    return _net(files_frame(log, found.removed, version=end), files_frame(log, found.added, version=end), columns)


def appended_rows(log: TableLog, found: FileChanges) -> DataFrame | None:
    """The rows the interval's commits inserted, as inserted, with ``_metadata``; None when they inserted none."""
    if not found.appended:
        return None
    frame = files_frame(log, found.appended, version=found.end)
    # A file holds fresh rows (ids from its base row id up) and, when an
    # UPDATE or MERGE wrote it, rows that kept older ids.
    return frame.where(f"{ROW_ID} >= {BASE_ROW_ID}")


def initial_rows(log: TableLog, version: int) -> DataFrame:
    """The rows of ``version``, each as an INSERT."""
    return _records(log.frame(version), log.schema(version).fieldNames(), INSERT, is_update=False)


# The frames below are built from SQL expression text, a handful of calls into
# the JVM, where Column objects would take one call per function and column.


def _records(frame: DataFrame, columns: list[str], action: str, *, is_update: bool) -> DataFrame:
    return frame.selectExpr(
        *[quoted(c) for c in columns],
        f"'{action}' AS {quoted(ACTION)}",
        f"{str(is_update).upper()} AS {quoted(IS_UPDATE)}",
        f"CAST({ROW_ID} AS STRING) AS {quoted(ROW_ID_COLUMN)}",
    )


def _net(old: DataFrame, new: DataFrame, columns: list[str]) -> DataFrame:
    """Old and new rows joined on their row ids: one pass, each pair giving a DELETE, an INSERT, both or nothing."""
    row = f"STRUCT({', '.join(quoted(c) for c in columns)})"

    def side(frame: DataFrame, prefix: str) -> DataFrame:
        return frame.selectExpr(f"{ROW_ID} AS rid", f"{ROW_COMMIT_VERSION} AS {prefix}_rcv", f"{row} AS {prefix}_row")

    changed = "(o_rcv IS NULL OR n_rcv IS NULL OR o_rcv <> n_rcv)"
    deleted = (
        f"CASE WHEN o_rcv IS NOT NULL AND {changed} "
        f"THEN STRUCT(o_row AS row, '{DELETE}' AS action, n_rcv IS NOT NULL AS is_update) END"
    )
    inserted = (
        f"CASE WHEN n_rcv IS NOT NULL AND {changed} "
        f"THEN STRUCT(n_row AS row, '{INSERT}' AS action, o_rcv IS NOT NULL AS is_update) END"
    )
    joined = side(old, "o").join(side(new, "n"), "rid", "full_outer")
    records = joined.selectExpr("rid", f"EXPLODE(ARRAY({deleted}, {inserted})) AS r").where("r IS NOT NULL")
    return records.selectExpr(
        *[f"r.row.{quoted(c)} AS {quoted(c)}" for c in columns],
        f"r.action AS {quoted(ACTION)}",
        f"r.is_update AS {quoted(IS_UPDATE)}",
        f"CAST(rid AS STRING) AS {quoted(ROW_ID_COLUMN)}",
    )


def _empty(log: TableLog, version: int, columns: list[str]) -> DataFrame:
    frame = log.frame(version).limit(0)
    return frame.selectExpr(
        *[quoted(c) for c in columns],
        f"'{INSERT}' AS {quoted(ACTION)}",
        f"FALSE AS {quoted(IS_UPDATE)}",
        f"'' AS {quoted(ROW_ID_COLUMN)}",
    )
