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
from lakeclone.delta.changes import BASE_ROW_ID, ROW_COMMIT_VERSION, ROW_ID, file_changes, files_frame

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

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
    return frame.where(_column(ROW_ID) >= _column(BASE_ROW_ID))


def initial_rows(log: TableLog, version: int) -> DataFrame:
    """The rows of ``version``, each as an INSERT."""
    return _records(log.frame(version), log.schema(version).fieldNames(), INSERT, is_update=False)


def _column(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(name)


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _records(frame: DataFrame, columns: list[str], action: str, *, is_update: bool) -> DataFrame:
    from pyspark.sql import functions as F

    return frame.select(
        *[F.col(_quoted(c)) for c in columns],
        F.lit(action).alias(ACTION),
        F.lit(is_update).alias(IS_UPDATE),
        F.col(ROW_ID).cast("string").alias(ROW_ID_COLUMN),
    )


def _net(old: DataFrame, new: DataFrame, columns: list[str]) -> DataFrame:
    """Old and new rows joined on their row ids: one pass, each pair giving a DELETE, an INSERT, both or nothing."""
    from pyspark.sql import functions as F

    def side(frame: DataFrame) -> DataFrame:
        return frame.select(
            F.col(ROW_ID).alias("rid"),
            F.col(ROW_COMMIT_VERSION).alias("rcv"),
            F.struct(*[F.col(_quoted(c)) for c in columns]).alias("row"),
        )

    joined = side(old).alias("o").join(side(new).alias("n"), "rid", "full_outer")
    old_version, new_version = F.col("o.rcv"), F.col("n.rcv")
    changed = old_version.isNull() | new_version.isNull() | (old_version != new_version)

    def record(row: str, version: Column, other: Column, action: str) -> Column:
        return F.when(
            version.isNotNull() & changed,
            F.struct(F.col(row).alias("row"), F.lit(action).alias("action"), other.isNotNull().alias("update")),
        )

    deleted = record("o.row", old_version, new_version, DELETE)
    inserted = record("n.row", new_version, old_version, INSERT)
    records = joined.select(F.col("rid"), F.explode(F.array(deleted, inserted)).alias("r")).where(F.col("r").isNotNull())
    return records.select(
        *[F.col("r.row").getField(c).alias(c) for c in columns],
        F.col("r.action").alias(ACTION),
        F.col("r.update").alias(IS_UPDATE),
        F.col("rid").cast("string").alias(ROW_ID_COLUMN),
    )


def _empty(log: TableLog, version: int, columns: list[str]) -> DataFrame:
    from pyspark.sql import functions as F

    frame = log.frame(version).limit(0)
    return frame.select(
        *[F.col(_quoted(c)) for c in columns],
        F.lit(INSERT).alias(ACTION),
        F.lit(False).alias(IS_UPDATE),
        F.lit("").alias(ROW_ID_COLUMN),
    )
