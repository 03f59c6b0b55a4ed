"""Running statements: parse, bind (resolve names, say what the statement needs), check privileges, run as one unit of work."""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
import threading
import uuid
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from sqlglot import exp

from lakeclone.catalog.sessions import SessionLease
from lakeclone.catalog.store import DEFAULT_DATABASE, DEFAULT_SCHEMA, Catalog, QueryOrigin, TableEntry
from lakeclone.delta.log import Delta
from lakeclone.dialect import ParsedStatement, parse, table_reference
from lakeclone.engine import ddl, dml, history, query, registry, session_parameters, show  # noqa: F401 - each registers its statements
from lakeclone.engine.ahead import StateAhead
from lakeclone.engine.context import SessionContext
from lakeclone.engine.tables import Tables
from lakeclone.engine.work import UnitOfWork, recover_pending_folders
from lakeclone.errors import (
    ConcurrentWriteError,
    InsufficientPrivilegesError,
    LakecloneError,
    SqlCompilationError,
    StatementPosition,
    UnsupportedStatementError,
    internal_errors,
)
from lakeclone.progress import tag, watching
from lakeclone.session import session_settings
from lakeclone.spark_errors import checked, located, spark_errors, with_settings
from lakeclone.storage import Storage, join

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from lakeclone.lake import Lake

MANAGED_TABLES = "tables"
EXTERNAL_CLONES = "external"
log = logging.getLogger(__name__)

# How many times a statement runs when its commits lose races only to blind
# appends (see UnitOfWork.delta): each run reads what the appends added.
ATTEMPTS = 10

Read = TypeVar("Read")


class Execution:
    """One statement being run: what handlers get to work with."""

    def __init__(self, executor: Executor, statement: ParsedStatement, query_id: str, started_at: dt.datetime) -> None:
        self.executor = executor
        self.lake = executor.lake
        self.spark: SparkSession = executor.lake.spark
        self.catalog = executor.catalog
        self.delta = executor.delta
        self.storage = executor.storage
        self.session = executor.context
        self.expression = statement.expression
        self.sql = statement.sql
        self.query_id = query_id
        self.started_at = started_at
        self.tables = executor.tables(now=started_at)
        self.work = UnitOfWork(self)

    def now(self) -> dt.datetime:
        return self.lake.now()

    def managed_location(self, table_id: str) -> str:
        return join(self.lake.location, MANAGED_TABLES, table_id)

    def external_clone_location(self, table_id: str) -> str:
        return join(self.lake.location, EXTERNAL_CLONES, table_id)


class Executor:
    """Runs statements for one Lake and keeps its session state."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        self.catalog = Catalog(lake.catalog_path)
        self.catalog.objects.ensure_default(lake.now())
        self.delta = Delta(lake.spark)
        self.storage = Storage(lake.spark)
        self.context = SessionContext(DEFAULT_DATABASE, DEFAULT_SCHEMA)
        if lake.user is not None:
            self.context.user = lake.user.upper()
        if lake.role is not None:
            self.context.role = lake.role.upper()
        self.last_query_id: str | None = None
        # The session's time zone until ALTER SESSION SET TIMEZONE names another.
        self.default_time_zone: str = str(lake.spark.conf.get(session_parameters.SPARK_TIME_ZONE))
        self.state_ahead = StateAhead(self.delta) if lake.compute_ahead else None
        self.session = SessionLease(self.catalog, lake.now)
        self.context.session_id = self.session.id
        self._apart: Catalog | None = None
        self._apart_lock = threading.Lock()
        with internal_errors(), spark_errors():
            recover_pending_folders(self.catalog, self.storage, lake.now())
            for recover in registry.RECOVERIES:
                recover(self)
            for start in registry.SESSION_STARTS:
                start(self)
            # Leases left by sessions that died, once what those sessions left is recovered.
            with self.catalog.recovering():
                for session_id in self.catalog.sessions.dead(lake.now()):
                    self.catalog.sessions.end(session_id)

    def tables(self, *, now: dt.datetime | None = None) -> Tables:
        """Lookups as a statement starting ``now`` (by default, now) would make them."""
        return Tables(
            self.catalog,
            self.context,
            self.delta,
            now=now or self.lake.now(),
            warehouse=self.lake.warehouse,
            storage=self.storage,
            location=self.lake.location,
        )

    def read_apart(self, read: Callable[[Catalog], Read]) -> Read:
        """``read`` on a catalog connection apart from the statements', opened on first use, one reader at a time.

        Another thread reads there without waiting for a statement in progress
        on the session's own connection, and without seeing its uncommitted writes.
        """
        with self._apart_lock:
            if self._apart is None:
                self._apart = Catalog(self.lake.catalog_path)
            return read(self._apart)

    def close(self) -> None:
        """End the session: other sessions see it gone; close the connection for reads apart."""
        self.session.release(self.catalog)
        with self._apart_lock:
            if self._apart is not None:
                self._apart.close()
                self._apart = None

    def resolve(self, name: str, *, privilege: str = "SELECT") -> TableEntry:
        """A live table named in Python (``"db.s.t"``), resolved like a name in SQL.

        The session's role must hold ``privilege`` on it, as for a statement reading it.
        """
        entry = self.tables().entry(table_reference(name))
        if registry.SLOTS.authorizer is not None:
            with internal_errors():
                try:
                    registry.SLOTS.authorizer.table(self, entry, privilege)
                except InsufficientPrivilegesError as error:
                    error.ran_as(self.context.user, self.context.role)
                    raise
        return entry

    def run(self, text: str) -> DataFrame:
        try:
            statements = parse(text)
        except LakecloneError as error:
            self._record_failure(text, None, error)
            raise
        if not statements:
            raise SqlCompilationError("Empty SQL statement.")
        result = None
        for number, statement in enumerate(statements, start=1):
            position = StatementPosition(number, len(statements), statement.sql) if len(statements) > 1 else None
            try:
                result = self._run(statement)
            except LakecloneError as error:
                error.statement = position
                raise
        assert result is not None
        # The last statement's rows are read later; a failure then names it too.
        return result if position is None else located(result, position)

    def _run(self, statement: ParsedStatement) -> DataFrame:
        """Check and run one statement, parsed or stated (:meth:`run_statement`); a privilege error names who ran it.

        Each name the statement uses holds, when it runs, the object its role was checked against (see
        :meth:`~lakeclone.catalog.db.CatalogConnection.names_held`).
        """
        try:
            with self.catalog.names_held():
                return self._check_and_execute(statement)
        except InsufficientPrivilegesError as error:
            error.ran_as(self.context.user, self.context.role)
            raise

    def _check_and_execute(self, statement: ParsedStatement) -> DataFrame:
        # One clock reading: the privilege check resolves names as the statement does when it runs.
        started_at = self.lake.now()
        try:
            kind = registry.STATEMENTS.get(type(statement.expression))
            if kind is None:
                raise UnsupportedStatementError(statement.sql)
            with internal_errors(), spark_errors():
                # Before any hook: a denied statement must not even commit the open transaction.
                if registry.SLOTS.authorizer is not None:
                    registry.SLOTS.authorizer.statement(self, kind.bind(self.tables(now=started_at), statement.expression))
                committed = [prepare(self, statement.expression) for prepare in registry.BEFORE_STATEMENT]
        except LakecloneError as error:
            self._record_failure(statement.sql, statement.expression, error)
            raise
        return self._execute(statement, kind.run, self.lake.now() if any(committed) else started_at)

    def _origin(self, expression: exp.Expression | None) -> QueryOrigin:
        """Who runs a statement and where, as the query history shows it."""
        context = self.context
        return QueryOrigin(
            self.session.id,
            context.user,
            context.role,
            context.database,
            context.schema,
            history.query_type(expression),
            self.query_tag,
        )

    def _record_failure(self, text: str, expression: exp.Expression | None, error: BaseException) -> None:
        """Record a statement that failed before it ran (it did not parse, or its role may not run it)."""
        now = self.lake.now()
        query_id = str(uuid.uuid4())
        with _unrecorded(query_id):
            self.catalog.queries.record_query(query_id, text, now, self._origin(expression))
            self.catalog.queries.fail_query(query_id, now, *history.failure(error))

    def run_statement(self, expression: exp.Expression, label: str) -> DataFrame:
        """Run a registered statement no SQL text states (a channel's flush), as :meth:`run` runs a parsed one.

        ``label`` is what the query history records as its text.
        """
        return self._run(ParsedStatement(expression, label))

    def _execute(self, statement: ParsedStatement, handler: registry.Handler, started_at: dt.datetime) -> DataFrame:
        query_id = str(uuid.uuid4())
        self.catalog.queries.record_query(query_id, statement.sql, started_at, self._origin(statement.expression))
        self.last_query_id = query_id
        settings = session_parameters.spark_settings(self)
        for attempt in range(1, ATTEMPTS + 1):
            execution = Execution(self, statement, query_id, started_at)
            try:
                with (
                    internal_errors(),
                    spark_errors(),
                    watching(self.lake.spark, self.lake.progress),
                    session_settings(self.lake.spark, settings),
                    self.catalog.statement_running(),
                ):
                    result = handler(execution)
                    execution.work.finish()
                break
            except ConcurrentWriteError as error:
                execution.work.rollback()
                if not error.retryable or attempt == ATTEMPTS:
                    self._record_end(query_id, error)
                    raise
                log.info("%s lost a race to concurrent writers; running it again (attempt %d)", query_id, attempt + 1)
            except BaseException as error:
                execution.work.rollback()
                self._record_end(query_id, error)
                raise
            finally:
                execution.tables.close()
        execution.work.done()
        if self.state_ahead is not None:
            self.state_ahead.after_statement(execution.work.written)
        return with_settings(tag(checked(result), self.lake.progress), settings)

    def _record_end(self, query_id: str, error: BaseException) -> None:
        """Record how a statement failed."""
        with _unrecorded(query_id):
            self.catalog.queries.fail_query(query_id, self.lake.now(), *history.failure(error))

    @property
    def query_tag(self) -> str:
        """The session's QUERY_TAG, recorded with each statement and on each commit."""
        return session_parameters.value(self, session_parameters.QUERY_TAG)


@contextlib.contextmanager
def _unrecorded(query_id: str) -> Iterator[None]:
    """Log a failed statement's record that the catalog could not take: the statement's own error is what reaches the caller."""
    try:
        yield
    except LakecloneError:
        log.warning("could not record how statement %s failed in the query history", query_id, exc_info=True)
