"""Finding tables by name and pinning the version each reference of a statement reads."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone import timetravel
from lakeclone.catalog.entries import HiddenOutcome, TableLock
from lakeclone.catalog.names import QualifiedName, table_name
from lakeclone.catalog.parameters import RETENTION
from lakeclone.errors import (
    DataNotAvailableError,
    ObjectNotFoundError,
    SqlCompilationError,
    StatementNotFoundError,
    TableFilesMissingError,
)
from lakeclone.timetravel import Point, PointKind, StatementMark

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrame, SparkSession

    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.delta.commits import Commit
    from lakeclone.delta.log import Delta, TableLog
    from lakeclone.engine.context import SessionContext
    from lakeclone.storage import Storage


@dataclass(frozen=True)
class StreamRead:
    """A stream a statement read, and where its offsets stand once the statement consumes it.

    Attributes:
        read_from: the offsets the stream's changes started after.
        read_to: the versions they ran up to: the offsets after consumption.
        initial_rows: whether the stream still owes its initial rows after consumption.
    """

    stream_id: str
    name: str
    read_from: Mapping[str, int]
    read_to: Mapping[str, int]
    initial_rows: bool


class Tables:
    """Table lookups and time travel for one statement.

    Every reference to the same table without a time-travel point reads the
    same version: the one current when the statement first looked.

    Attributes:
        session: the statement's session, which session functions (CURRENT_DATABASE()) answer from.
        storage: the file system of the warehouse, tables and stages.
        location: the warehouse's URI.
        scope: where unqualified names resolve: the session's database and schema,
            or, inside a view's definition, the view's own.
        relations: the relations (views, by qualified name) whose definitions are
            being bound around this one, outermost first.
        stream_reads: the streams the statement read, by stream id.
        protected: the relations the statement reads through their policies (a mask, a row filter).
    """

    def __init__(
        self,
        catalog: Catalog,
        session: SessionContext,
        delta: Delta,
        *,
        now: dt.datetime,
        warehouse: Path,
        storage: Storage,
        location: str,
        scope: SessionContext | None = None,
        relations: tuple[str, ...] = (),
    ) -> None:
        self.catalog = catalog
        self.warehouse = warehouse
        self.storage = storage
        self.location = location
        self.session = session
        self.scope = scope or session
        self.delta = delta
        self.now = now
        self.relations = relations
        self._current: dict[str, int] = {}
        self._views: list[str] = []
        self.stream_reads: dict[str, StreamRead] = {}
        self.protected: list[QualifiedName] = []

    @property
    def spark(self) -> SparkSession:
        return self.delta.spark

    def nested(self, scope: SessionContext, relation: str) -> Tables:
        """Lookups for binding ``relation``'s definition, whose unqualified names resolve in ``scope``.

        The statement's session, clock and pinned versions are shared, so a
        table read both through a view and directly reads one version; so are
        the streams read and the frames bound, which the statement consumes
        and drops whether it named them directly or through a view.
        """
        inner = Tables(
            self.catalog,
            self.session,
            self.delta,
            now=self.now,
            warehouse=self.warehouse,
            storage=self.storage,
            location=self.location,
            scope=scope,
            relations=(*self.relations, relation),
        )
        inner._current = self._current
        inner._views = self._views
        inner.stream_reads = self.stream_reads
        inner.protected = self.protected
        return inner

    def name(self, table: exp.Table) -> QualifiedName:
        return table_name(table, database=self.scope.database, schema=self.scope.schema)

    def entry(self, table: exp.Table) -> TableEntry:
        """The live table a reference names, or ObjectNotFoundError."""
        name = self.name(table)
        entry = self.catalog.objects.table(name.database, name.schema, name.name)
        if entry is None:
            raise ObjectNotFoundError(str(name))
        return entry

    def log(self, entry: TableEntry) -> TableLog:
        return self.delta.table(entry.location, entry.qualified)

    def history(self, entry: TableEntry) -> list[Commit]:
        return self.log(entry).history()

    def retention_days(self, entry: TableEntry) -> int:
        return int(self.catalog.parameters.parameter(entry, RETENTION)[0])

    def horizon(self, entry: TableEntry) -> dt.datetime:
        """The oldest moment ``entry``'s retention lets time travel reach."""
        return self.now - self.catalog.parameters.retention(entry)

    def current_version(self, entry: TableEntry) -> int:
        """The version this statement reads when no point is given: the latest committed one."""
        if entry.id not in self._current:
            self._current[entry.id] = self._committed_version(entry)
        return self._current[entry.id]

    def _committed_version(self, entry: TableEntry) -> int:
        """The table's latest version, unless another session's open transaction wrote it: then the one before.

        A transaction takes its lock before its first commit, so a lock epoch
        unchanged around the read of the log means no transaction wrote
        anything that read could see.
        """
        while True:
            epoch, lock = self.catalog.transactions.transaction_lock(entry.id)
            if lock is not None and not self._mine(lock):
                assert lock.base_version is not None
                return lock.base_version
            version = self.delta.latest_version(entry.location)
            if version < 0:
                raise TableFilesMissingError(entry.qualified, entry.location)
            if lock is not None or self.catalog.transactions.lock_epoch(entry.id) == epoch:
                return version

    def _mine(self, lock: TableLock) -> bool:
        """Whether ``lock`` is this session's open transaction's."""
        transaction = self.session.transaction
        return transaction is not None and lock.transaction_id == transaction.id

    def stream_end(self, entry: TableEntry) -> int:
        """The version a stream's changes on ``entry`` run to: now, or, inside a transaction, when it began."""
        transaction = self.session.transaction
        if transaction is None:
            return self.current_version(entry)
        if entry.id not in transaction.stream_points:
            transaction.stream_points[entry.id] = self.current_version(entry)
        return transaction.stream_points[entry.id]

    def version(self, entry: TableEntry, point: Point | None = None) -> int:
        """The version a reference reads: now, or at a time-travel point.

        Raises:
            TimeTravelError: the point is outside the table's retention or before it existed.
            DataNotAvailableError: a VACUUM with a shorter retention removed the version's files.
        """
        if point is None:
            return self.current_version(entry)
        history = self.history(entry)
        horizon = self.horizon(entry)
        name = entry.name
        if point.kind is PointKind.VERSION:
            number = timetravel.literal_int(point.value, "VERSION")
            version = timetravel.check_version(history, number - 1 if point.before else number, name=name, horizon=horizon)
            self._require_committed(entry, version)
        elif point.kind is PointKind.STATEMENT:
            mark = self.statement_mark(point.value)
            version = timetravel.version_at_statement(history, mark, before=point.before, name=name, horizon=horizon)
        else:
            moment = self.moment_of(point)
            version = timetravel.version_at(history, moment, before=point.before, name=name, horizon=horizon)
        if point.kind is not PointKind.VERSION:
            version = self.committed(entry, version)
        self.check_available(entry, history, version)
        return version

    def committed(self, entry: TableEntry, version: int) -> int:
        """The committed state a moment's version stands for: a version no session may read reads as its base."""
        for hidden in self.catalog.transactions.hidden_versions(entry.id):
            if version in hidden:
                return hidden.base_version
        latest = self.current_version(entry)
        return min(version, latest)

    def _require_committed(self, entry: TableEntry, version: int) -> None:
        """An explicit VERSION must be one some session could read."""
        for hidden in self.catalog.transactions.hidden_versions(entry.id):
            if version in hidden:
                how = "rolled back" if hidden.outcome is HiddenOutcome.ROLLED_BACK else "went on to a later version"
                raise SqlCompilationError(
                    f"Version {version} of table {entry.name} was never committed: the transaction that wrote it {how}; "
                    f"version {hidden.base_version} holds what was committed."
                )
        _, lock = self.catalog.transactions.transaction_lock(entry.id)
        if lock is not None and not self._mine(lock) and lock.base_version is not None and version > lock.base_version:
            raise SqlCompilationError(
                f"Version {version} of table {entry.name} is not committed yet: another session's transaction is writing it."
            )

    def check_available(self, entry: TableEntry, history: list[Commit], version: int) -> None:
        """Raise DataNotAvailableError, naming the VACUUM, when one removed files ``version`` reads."""
        vacuumed = self.catalog.objects.vacuumed_before(entry)
        if vacuumed is None or timetravel.readable(history, version, vacuumed):
            return
        culprit = next(
            (v for v in self.catalog.objects.vacuums(entry) if not timetravel.readable(history, version, v.horizon)), None
        )
        if culprit is None:  # VACUUMed before lakeclone recorded each one
            raise DataNotAvailableError(f"A VACUUM of table {entry.name} removed files version {version} reads.")
        raise DataNotAvailableError(
            f"The VACUUM of table {entry.name} at {culprit.vacuumed_at:%Y-%m-%d %H:%M:%S} UTC (query {culprit.query_id}) "
            f"removed files version {version} reads: it kept those of versions current since "
            f"{culprit.horizon:%Y-%m-%d %H:%M:%S} UTC."
        )

    def statement_mark(self, value: exp.Expression) -> StatementMark:
        query_id = value.name
        query = self.catalog.queries.query(query_id)
        if query is None:
            raise StatementNotFoundError(query_id)
        return StatementMark(query.id, query.started_tick, query.finished_tick, query.started_at, query.finished_at)

    def moment_of(self, point: Point) -> dt.datetime:
        """The moment a TIMESTAMP, OFFSET or STATEMENT point stands for."""
        if point.kind is PointKind.OFFSET:
            seconds = timetravel.literal_int(point.value, "OFFSET")
            try:
                return self.now + dt.timedelta(seconds=seconds)
            except OverflowError:
                raise SqlCompilationError(f"OFFSET is out of range: {seconds}") from None
        if point.kind is PointKind.STATEMENT:
            mark = self.statement_mark(point.value)
            if point.before or mark.finished_at is None:
                return mark.started_at
            return mark.finished_at
        if point.kind is PointKind.TIMESTAMP:
            return self.evaluate_timestamp(point.value)
        raise SqlCompilationError(f"invalid time travel point {point.kind.value}")

    def evaluate_timestamp(self, value: exp.Expression) -> dt.datetime:
        """Evaluate a timestamp expression with Spark; a naive result is UTC.

        Raises:
            SqlCompilationError: it reads a column or a relation (it must be a constant), or is no timestamp.
        """
        from lakeclone.engine.compiler import to_spark

        if value.find(exp.Column, exp.Table, exp.Query, exp.TableFromRows) is not None:
            raise SqlCompilationError(f"TIMESTAMP must be a constant expression: {value.sql(dialect='snowflake')}")
        sql = to_spark(exp.Cast(this=value.copy(), to=exp.DataType.build("TIMESTAMP")))
        try:
            moment: dt.datetime | None = self.spark.sql(f"SELECT {sql} AS ts").collect()[0][0]
        except (ValueError, OverflowError):
            # PySpark cannot hold years outside 1..9999 in a datetime.
            raise SqlCompilationError(f"TIMESTAMP is out of range: {value.sql(dialect='snowflake')}") from None
        if moment is None:
            raise SqlCompilationError("TIMESTAMP must not be NULL")
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=dt.timezone.utc)
        return moment

    def bind_frame(self, frame: DataFrame, alias: exp.Expression | None) -> exp.Table:
        """A reference to rows only a DataFrame can give (a stream's changes), valid until :meth:`close`.

        The frame becomes a temporary view of the session; Spark resolves it
        when it analyses the statement, so the statement's result still reads
        it after the view is dropped.
        """
        name = f"lc_bound_{uuid.uuid4().hex}"
        frame.createOrReplaceTempView(name)
        self._views.append(name)
        return exp.Table(this=exp.to_identifier(name, quoted=True), alias=alias)

    def close(self) -> None:
        """Drop the temporary views the statement's frames were bound as."""
        while self._views:
            self.spark.catalog.dropTempView(self._views.pop())

    def reference(self, entry: TableEntry, version: int, alias: exp.Expression | None = None) -> exp.Table:
        """A table reference Spark resolves to ``entry`` at ``version``: ``delta.`<location>` VERSION AS OF n``."""
        return exp.Table(
            this=exp.to_identifier(entry.location, quoted=True),
            db=exp.to_identifier("delta"),
            version=exp.Version(this="VERSION", kind="AS OF", expression=exp.Literal.number(version)),
            alias=alias,
        )
