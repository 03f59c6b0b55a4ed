"""Running statements: parse, dispatch on the statement's expression class, translate errors."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.normalize_identifiers import normalize_identifiers

from lakeclone.catalog.store import DEFAULT_DATABASE, DEFAULT_SCHEMA, Catalog, TableEntry
from lakeclone.clones import vacuum
from lakeclone.clones.lineage import Lineage, lineage
from lakeclone.delta.log import CommitInfo
from lakeclone.dialect import Lsql, ParsedStatement, parse
from lakeclone.dialect import expressions as lx
from lakeclone.engine import clustering, ddl, dml, maintenance, query, show
from lakeclone.engine.context import SessionContext
from lakeclone.engine.tables import Tables
from lakeclone.errors import SqlCompilationError, UnsupportedStatementError
from lakeclone.session import checked, spark_errors

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.clones.vacuum import VacuumPlan
    from lakeclone.lake import Lake

CATALOG_FILE = "catalog.sqlite"
MANAGED_TABLES = "tables"

# Session settings lakeclone's files depend on: INT96 timestamps (Spark's
# default) are not readable by every Delta reader.
SESSION_CONFIG = {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"}


class Execution:
    """One statement being run: what handlers get to work with."""

    def __init__(self, executor: Executor, statement: ParsedStatement, query_id: str, started_at: dt.datetime) -> None:
        self.lake = executor.lake
        self.spark = executor.lake.spark
        self.catalog = executor.catalog
        self.session = executor.context
        self.expression = statement.expression
        self.sql = statement.sql
        self.query_id = query_id
        self.started_at = started_at
        self.tables = Tables(
            executor.catalog, executor.context, executor.lake.spark, now=started_at, views=executor.views
        )

    def now(self) -> dt.datetime:
        return self.lake.now()

    def commit_info(
        self,
        operation: str,
        *,
        parameters: Mapping[str, object] | None = None,
        metrics: Mapping[str, int] | None = None,
    ) -> CommitInfo:
        return CommitInfo(
            operation=operation,
            timestamp=self.now(),
            query_id=self.query_id,
            parameters={k: str(v) for k, v in (parameters or {}).items()},
            metrics=dict(metrics or {}),
        )

    def managed_location(self, table_id: str) -> str:
        return str(self.lake.warehouse / MANAGED_TABLES / table_id)


Handler = Callable[[Execution], "DataFrame"]

# Statements after which automatic clustering may recluster the table they wrote.
DML = (exp.Insert, exp.Update, exp.Delete, exp.Merge)

STATEMENTS: dict[type[exp.Expression], Handler] = {
    exp.Select: query.select,
    exp.Union: query.select,
    exp.Intersect: query.select,
    exp.Except: query.select,
    exp.Insert: dml.insert,
    exp.Update: dml.update,
    exp.Delete: dml.delete,
    exp.Merge: dml.merge,
    exp.Create: ddl.create,
    exp.Drop: ddl.drop,
    exp.Undrop: ddl.undrop,
    exp.Use: ddl.use,
    exp.Alter: ddl.alter,
    lx.SetParameters: ddl.set_parameters,
    lx.UnsetParameters: ddl.unset_parameters,
    exp.Show: show.show,
    lx.ShowParameters: show.parameters,
    exp.Describe: show.describe_table,
    lx.DescribeHistory: show.history,
    lx.DescribeDetail: show.detail,
    lx.Vacuum: maintenance.vacuum,
    lx.Optimize: clustering.optimize,
    lx.AlterRecluster: clustering.alter_recluster,
    lx.AlterClustering: clustering.alter_clustering,
}


class Executor:
    """Runs statements for one Lake and keeps its session state."""

    def __init__(self, lake: Lake) -> None:
        self.lake = lake
        lake.warehouse.mkdir(parents=True, exist_ok=True)
        self.catalog = Catalog(lake.warehouse / CATALOG_FILE)
        self.catalog.ensure_default(lake.now())
        self.context = SessionContext(DEFAULT_DATABASE, DEFAULT_SCHEMA)
        self.last_query_id: str | None = None
        self.views: set[str] = set()
        for key, value in SESSION_CONFIG.items():
            lake.spark.conf.set(key, value)

    def lineage(self, name: str) -> Lineage:
        return lineage(self.catalog, self._table(name))

    def vacuum_plan(self, name: str, *, retain_hours: float | None) -> VacuumPlan:
        entry = self._table(name)
        now = self.lake.now()
        retention = self.catalog.retention(entry)
        window = dt.timedelta(hours=retain_hours) if retain_hours is not None else retention
        with spark_errors():
            return vacuum.plan(self.catalog, entry, horizon=now - window, now=now)

    def _table(self, name: str) -> TableEntry:
        """A live table named in Python (``"db.s.t"``), resolved like a name in SQL."""
        try:
            reference = normalize_identifiers(exp.to_table(name, dialect=Lsql), dialect=Lsql)
        except sqlglot.errors.ParseError:
            raise SqlCompilationError(f"invalid table name '{name}'") from None
        tables = Tables(self.catalog, self.context, self.lake.spark, now=self.lake.now(), views=self.views)
        return tables.entry(reference)

    def run(self, text: str) -> DataFrame:
        statements = parse(text)
        if not statements:
            raise SqlCompilationError("Empty SQL statement.")
        result = None
        for statement in statements:
            result = self._run(statement)
        assert result is not None
        return result

    def _run(self, statement: ParsedStatement) -> DataFrame:
        handler = STATEMENTS.get(type(statement.expression))
        if handler is None:
            raise UnsupportedStatementError(statement.sql)
        query_id = str(uuid.uuid4())
        started_at = self.lake.now()
        self.catalog.record_query(query_id, statement.sql, started_at)
        self.last_query_id = query_id
        execution = Execution(self, statement, query_id, started_at)
        try:
            with spark_errors():
                result = handler(execution)
                if isinstance(statement.expression, DML):
                    # Automatic clustering: a separate OPTIMIZE commit once the table is due.
                    clustering.after_dml(execution)
        finally:
            execution.tables.drop_scratch_views()
        self.catalog.finish_query(query_id, self.lake.now())
        return checked(result)
