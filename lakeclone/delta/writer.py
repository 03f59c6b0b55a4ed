"""Writing data files with Spark: the executors write Parquet, the driver reads only footers.

Spark writes into a staging folder inside the table; the finished files are
then renamed into the table folder, and their Delta stats (row counts, min,
max, null counts) are read from the Parquet footers. A crash at any point
leaves files no commit references, which VACUUM removes; the table itself
stays at its previous version.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import uuid
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq

from lakeclone.delta.log import DataFile, stat_value
from lakeclone.delta.paths import relative

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

ROW_ID = "_lakeclone_row_id"
"""The hidden column holding each row's id.

Like Delta's own materialized row-tracking column, it is stored in the data
files but is not part of the table's schema, so other Delta readers and
``SELECT *`` never see it. It is a pair of 64-bit integers (see
:func:`row_id_type`): two integers cost far less to write than a string.
"""


def row_id_type() -> StructType:
    """The row id's type: the write that made the row, and the row within that write."""
    from pyspark.sql.types import LongType, StructField, StructType

    return StructType([StructField("write", LongType(), False), StructField("row", LongType(), False)])

STAGING = "_lakeclone_staging"


def write_data_files(frame: DataFrame, location: str, *, now: dt.datetime) -> list[DataFile]:
    """Write ``frame`` as Parquet files of the table in ``location``.

    Each file's modification time is set to ``now`` (the Lake's clock): VACUUM
    judges the age of files no commit references by it.

    Returns:
        The written files, ready to be committed as add actions. An empty frame
        writes no file.
    """
    staging = os.path.join(location, STAGING, uuid.uuid4().hex)
    frame.write.mode("errorifexists").parquet(staging)
    files = []
    try:
        for name in sorted(os.listdir(staging)):
            if not name.endswith(".parquet"):
                continue
            staged = os.path.join(staging, name)
            # Spark writes an empty file for a frame with no rows; a table has no use for it.
            if pq.read_metadata(staged).num_rows == 0:
                continue
            target = os.path.join(location, name)
            os.rename(staged, target)
            os.utime(target, (now.timestamp(), now.timestamp()))
            files.append(data_file(target, location))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return files


def data_file(path: str, location: str) -> DataFile:
    """The add action of a Parquet file in a table's folder, with stats from its footer."""
    metadata = pq.read_metadata(path)
    stat = os.stat(path)
    return DataFile(
        path=relative(path, location),
        local_path=path,
        size=stat.st_size,
        num_records=metadata.num_rows,
        stats=json.dumps(footer_stats(metadata), separators=(",", ":")),
        modification_time=int(stat.st_mtime * 1000),
    )


def footer_stats(metadata: pq.FileMetaData) -> dict[str, Any]:
    """Delta's per-file stats, from a Parquet footer's row-group statistics."""
    mins: dict[str, Any] = {}
    maxs: dict[str, Any] = {}
    nulls: dict[str, int] = {}
    for index in range(metadata.num_columns):
        # Row groups list leaf columns; Delta's stats cover top-level primitive ones,
        # which also leaves out the row id's fields.
        column = metadata.schema.column(index).path
        if "." in column or column == ROW_ID:
            continue
        low = high = None
        null_count = 0
        complete = True
        for group in range(metadata.num_row_groups):
            chunk = metadata.row_group(group).column(index)
            stats = chunk.statistics
            if stats is None or not stats.has_null_count:
                complete = False
                continue
            null_count += stats.null_count
            if stats.has_min_max:
                low = stats.min if low is None else min(low, stats.min)
                high = stats.max if high is None else max(high, stats.max)
            elif stats.null_count != chunk.num_values:
                # Values without bounds: no min/max can be claimed for the file.
                complete = False
        if complete:
            nulls[column] = null_count
        if complete and low is not None:
            low_json, high_json = stat_value(low), stat_value(high)
            if low_json is not None and high_json is not None:
                mins[column], maxs[column] = low_json, high_json
    return {"numRecords": metadata.num_rows, "minValues": mins, "maxValues": maxs, "nullCount": nulls}
