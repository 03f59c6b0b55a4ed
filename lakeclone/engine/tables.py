"""Finding tables by name, reading them at a version, and exposing them to Spark SQL as views."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.names import QualifiedName, table_name
from lakeclone.delta.log import DeltaLog, Snapshot
from lakeclone.delta.writer import ROW_ID, row_id_type
from lakeclone.engine import timetravel
from lakeclone.errors import DataNotAvailableError, ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.context import SessionContext

FILE_COLUMN = "_lakeclone_file"


def spark_schema(snapshot: Snapshot) -> StructType:
    from pyspark.sql.types import StructType

    return StructType.fromJson(json.loads(snapshot.schema_json))


class Tables:
    """Table lookups and reads for one session."""

    def __init__(
        self,
        catalog: Catalog,
        session: SessionContext,
        spark: SparkSession,
        *,
        now: dt.datetime,
        views: set[str],
    ) -> None:
        self.catalog = catalog
        self.session = session
        self.spark = spark
        self.now = now
        self._views = views
        self._scratch: list[str] = []

    def name(self, table: exp.Table) -> QualifiedName:
        return table_name(table, database=self.session.database, schema=self.session.schema)

    def entry(self, table: exp.Table) -> TableEntry:
        """The live table a reference names, or ObjectNotFoundError."""
        name = self.name(table)
        entry = self.catalog.table(name.database, name.schema, name.name)
        if entry is None:
            raise ObjectNotFoundError(str(name))
        return entry

    def retention_days(self, entry: TableEntry) -> int:
        return int(self.catalog.parameter(entry, "DATA_RETENTION_TIME_IN_DAYS")[0])

    def snapshot(self, entry: TableEntry, point: timetravel.Point | None = None) -> Snapshot:
        """The table now, or at a time-travel point."""
        log = DeltaLog(entry.location)
        if point is None:
            return log.snapshot()
        version = self.version_at(entry, log, point)
        snapshot = log.snapshot(version)
        if any(not os.path.exists(f.local_path) for f in snapshot.files):
            raise DataNotAvailableError()
        return snapshot

    def version_at(self, entry: TableEntry, log: DeltaLog, point: timetravel.Point) -> int:
        history = log.history()
        horizon = self.now - dt.timedelta(days=self.retention_days(entry))
        name = entry.name
        if point.kind == timetravel.VERSION:
            version = timetravel.literal_int(point.value, "VERSION")
            return timetravel.check_version(
                history, version - 1 if point.before else version, name=name, horizon=horizon
            )
        moment = self.moment_of(point)
        return timetravel.version_at(history, moment, before=point.before, name=name, horizon=horizon)

    def moment_of(self, point: timetravel.Point) -> dt.datetime:
        """The moment a TIMESTAMP, OFFSET or STATEMENT point stands for."""
        if point.kind == timetravel.OFFSET:
            seconds = timetravel.literal_int(point.value, "OFFSET")
            return self.now + dt.timedelta(seconds=seconds)
        if point.kind == timetravel.STATEMENT:
            query_id = point.value.name
            query = self.catalog.query(query_id)
            return timetravel.statement_moment(
                (query.started_at, query.finished_at) if query else None, query_id, before=point.before
            )
        if point.kind == timetravel.TIMESTAMP:
            return self.evaluate_timestamp(point.value)
        raise SqlCompilationError(f"invalid time travel point {point.kind}")

    def evaluate_timestamp(self, value: exp.Expression) -> dt.datetime:
        """Evaluate a timestamp expression with Spark; a naive result is UTC."""
        sql = exp.Cast(this=value.copy(), to=exp.DataType.build("TIMESTAMP")).sql(dialect="spark")
        moment = self.spark.sql(f"SELECT {sql} AS ts").collect()[0][0]
        if moment is None:
            raise SqlCompilationError("TIMESTAMP must not be NULL")
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.timezone.utc)
        return moment

    def frame(self, snapshot: Snapshot, *, row_id: bool = False, file: bool = False) -> DataFrame:
        """The rows of a snapshot; optionally with their row id and the file holding them."""
        from pyspark.sql import functions as F
        from pyspark.sql.types import StringType, StructField, StructType

        schema = spark_schema(snapshot)
        stored = StructType([*schema.fields, StructField(ROW_ID, row_id_type(), True)])
        columns = [F.col(f"`{f.name}`") for f in schema.fields]
        if row_id:
            columns.append(F.col(ROW_ID))
        if not snapshot.files:
            empty = StructType([*stored.fields, StructField(FILE_COLUMN, StringType(), True)])
            frame = self.spark.createDataFrame([], empty)
        else:
            frame = self.spark.read.schema(stored).parquet(*[f.local_path for f in snapshot.files])
            if file:
                # Only when asked: the _metadata struct makes Spark build it for every row.
                frame = frame.withColumn(FILE_COLUMN, F.col("_metadata.file_path"))
        if file:
            columns.append(F.col(FILE_COLUMN))
        return frame.select(*columns)

    def scratch_view(self, frame: DataFrame) -> str:
        """Register a view that lives only as long as the statement; see :meth:`drop_scratch_views`."""
        name = f"lc_scratch_{uuid.uuid4().hex}"
        frame.createOrReplaceTempView(name)
        self._scratch.append(name)
        return name

    def drop_scratch_views(self) -> None:
        for name in self._scratch:
            self.spark.catalog.dropTempView(name)
        self._scratch.clear()

    def forget_views(self, entry: TableEntry) -> None:
        """Drop a table's cached views: VACUUM may have removed files old ones read."""
        for name in [v for v in self._views if v.startswith(f"lc_{entry.id}_")]:
            self.spark.catalog.dropTempView(name)
            self._views.discard(name)

    def view(self, entry: TableEntry, snapshot: Snapshot, *, row_id: bool = False, file: bool = False) -> str:
        """Register a snapshot as a Spark temp view and return its name.

        A table id and version always name the same files, so the view can be
        reused for as long as the session lives.
        """
        suffix = ("_r" if row_id else "") + ("_f" if file else "")
        name = f"lc_{entry.id}_v{snapshot.version}{suffix}"
        if name not in self._views:
            self.frame(snapshot, row_id=row_id, file=file).createOrReplaceTempView(name)
            self._views.add(name)
        return name
