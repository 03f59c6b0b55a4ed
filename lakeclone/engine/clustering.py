"""Clustering keys, OPTIMIZE, and automatic reclustering.

A table's clustering key and whether automatic clustering runs are catalog
state (by table id), as in Snowflake: ``CREATE TABLE ... CLUSTER BY (a, b)``,
``ALTER TABLE t CLUSTER BY (...)`` / ``DROP CLUSTERING KEY`` and ``ALTER TABLE
t SUSPEND | RESUME RECLUSTER``. A clone keeps its source's key but starts with
automatic clustering suspended.

``OPTIMIZE t`` rewrites the table's small files into fewer, larger ones,
range-partitioned and sorted by the clustering key when there is one. It is
one Delta commit, operation ``OPTIMIZE``, whose add and remove actions carry
``dataChange: false``: the rows (and their row ids) are the same before and
after. Automatic clustering is the same compaction, run right after a DML
statement commits to a clustered table whose automatic clustering is on, once
the table has gathered more than :data:`AUTO_MIN_SMALL_FILES` small files.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from lakeclone.delta.log import DataFile, DeltaLog, Snapshot
from lakeclone.delta.writer import write_data_files
from lakeclone.engine import results
from lakeclone.engine.tables import spark_schema
from lakeclone.errors import ConcurrentWriteError, ExecutionError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.executor import Execution

LOG = logging.getLogger(__name__)

# OPTIMIZE rewrites files smaller than this, into files of about this size.
TARGET_FILE_SIZE = 128 * 1024 * 1024
# Automatic clustering counts files smaller than this...
AUTO_SMALL_FILE = 16 * 1024 * 1024
# ...and compacts them once there are more than this many.
AUTO_MIN_SMALL_FILES = 8

OPTIMIZE_SCHEMA = (
    "path STRING, metrics STRUCT<numFilesAdded: BIGINT, numFilesRemoved: BIGINT, "
    "numOutputRows: BIGINT, totalConsideredFiles: BIGINT, totalFilesSkipped: BIGINT>"
)


# Keys --------------------------------------------------------------------------------


def key_of(expression: exp.Expression) -> list[str] | None:
    """The ``CLUSTER BY (...)`` key of a CREATE TABLE, as lsql expressions; None without one."""
    properties = expression.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.ClusterProperty):
            return [e.sql(dialect="snowflake") for e in prop.expressions]
    return None


def check_key(keys: list[str], columns: list[str]) -> list[str]:
    """Validate a clustering key against a table's columns.

    Raises:
        SqlCompilationError: the key is empty, repeats itself or names an unknown column.
    """
    if not keys:
        raise SqlCompilationError("A clustering key needs at least one column or expression.")
    if len({k.upper() for k in keys}) != len(keys):
        raise SqlCompilationError("A clustering key must not repeat a column or expression.")
    upper = {c.upper() for c in columns}
    for key in keys:
        for column in sqlglot.parse_one(key, read="snowflake").find_all(exp.Column):
            if column.name.upper() not in upper:
                raise SqlCompilationError(f"invalid identifier '{column.name}'")
    return keys


def cluster_by(catalog: Catalog, table_id: str) -> tuple[str, str]:
    """SHOW TABLES' ``cluster_by`` (``LINEAR(A, B)``, or empty) and ``automatic_clustering`` (ON/OFF)."""
    clustering = catalog.clustering(table_id)
    if clustering is None:
        return "", "OFF"
    return f"LINEAR({', '.join(clustering.keys)})", "ON" if clustering.automatic else "OFF"


def clustering_columns(catalog: Catalog, table_id: str) -> list[str]:
    """DESCRIBE DETAIL's ``clusteringColumns``."""
    clustering = catalog.clustering(table_id)
    return list(clustering.keys) if clustering else []


def _table_columns(entry: TableEntry) -> list[str]:
    return spark_schema(DeltaLog(entry.location).snapshot()).fieldNames()


# ALTER TABLE ------------------------------------------------------------------------


def _entry_or_none(execution: Execution) -> TableEntry | None:
    expression = execution.expression
    name = execution.tables.name(expression.this)
    entry = execution.catalog.table(name.database, name.schema, name.name)
    if entry is None and not expression.args.get("exists"):
        return execution.tables.entry(expression.this)  # raises ObjectNotFoundError
    return entry


def alter_clustering(execution: Execution) -> DataFrame:
    """``ALTER TABLE t CLUSTER BY (a, b)`` / ``ALTER TABLE t DROP CLUSTERING KEY``."""
    catalog = execution.catalog
    keys = [e.sql(dialect="snowflake") for e in execution.expression.expressions]
    with catalog.transaction():
        entry = _entry_or_none(execution)
        if entry is not None:
            if keys:
                check_key(keys, _table_columns(entry))
                current = catalog.clustering(entry.id)
                catalog.set_clustering(entry.id, keys, automatic=current.automatic if current else True)
            else:
                catalog.drop_clustering(entry.id)
    return results.status(execution.spark, "Statement executed successfully.")


def alter_recluster(execution: Execution) -> DataFrame:
    """``ALTER TABLE t SUSPEND | RESUME RECLUSTER``: turn automatic clustering off or on."""
    catalog = execution.catalog
    automatic = not execution.expression.args.get("suspend")
    with catalog.transaction():
        entry = _entry_or_none(execution)
        if entry is not None:
            clustering = catalog.clustering(entry.id)
            if clustering is None:
                raise SqlCompilationError(f"Table '{entry.name}' has no clustering key.")
            catalog.set_clustering(entry.id, clustering.keys, automatic=automatic)
    return results.status(execution.spark, "Statement executed successfully.")


# OPTIMIZE ----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Compaction:
    added: int
    removed: int
    rows: int
    considered: int


def optimize(execution: Execution) -> DataFrame:
    """``OPTIMIZE t``: compact the table's small files; Delta's one-row result."""
    entry = execution.tables.entry(execution.expression.this)
    snapshot = DeltaLog(entry.location).snapshot()
    done = compact(execution, entry, snapshot, threshold=TARGET_FILE_SIZE, auto=False)
    considered = len(snapshot.files)
    added, removed, rows = (done.added, done.removed, done.rows) if done else (0, 0, 0)
    return results.rows(
        execution.spark,
        OPTIMIZE_SCHEMA,
        [(DeltaLog(entry.location).uri, (added, removed, rows, considered, considered - removed))],
    )


def compact(
    execution: Execution,
    entry: TableEntry,
    snapshot: Snapshot,
    *,
    threshold: int,
    auto: bool,
) -> Compaction | None:
    """Rewrite the files of ``snapshot`` smaller than ``threshold`` as one OPTIMIZE commit.

    Nothing is committed when fewer than two files qualify. The new files hold
    exactly the old files' rows, row ids included, sorted by the clustering
    key when the table has one.

    Raises:
        ConcurrentWriteError: another statement removed one of the files meanwhile.
    """
    from pyspark.sql import functions as F

    small = [f for f in snapshot.files if f.size < threshold]
    if len(small) < 2:
        return None
    clustering = execution.catalog.clustering(entry.id)
    keys = list(clustering.keys) if clustering else []
    count = max(1, math.ceil(sum(f.size for f in small) / TARGET_FILE_SIZE))
    frame = execution.tables.frame(dataclasses.replace(snapshot, files=tuple(small)), row_id=True)
    if keys:
        columns = [F.expr(_spark_key(k)) for k in keys]
        frame = frame.repartitionByRange(count, *columns).sortWithinPartitions(*columns)
    else:
        frame = frame.coalesce(count)
    adds = write_data_files(frame, entry.location, now=execution.now())
    rows = sum(f.num_records for f in adds)
    if rows != sum(f.num_records for f in small):
        raise ExecutionError(f"OPTIMIZE of {entry.qualified} wrote {rows} rows instead of {sum(f.num_records for f in small)}.")
    _commit(execution, entry, snapshot, adds, small, keys, auto=auto)
    return Compaction(len(adds), len(small), rows, len(snapshot.files))


def _spark_key(key: str) -> str:
    return sqlglot.parse_one(key, read="snowflake").sql(dialect="spark")


def _commit(
    execution: Execution,
    entry: TableEntry,
    snapshot: Snapshot,
    adds: list[DataFile],
    removes: list[DataFile],
    keys: list[str],
    *,
    auto: bool,
) -> int:
    sizes = sorted(f.size for f in adds) or [0]
    info = execution.commit_info(
        "OPTIMIZE",
        parameters={
            "predicate": "[]",
            "zOrderBy": "[]",
            "clusterBy": json.dumps(keys),
            "auto": str(auto).lower(),
        },
        metrics={
            "numAddedFiles": len(adds),
            "numRemovedFiles": len(removes),
            "numAddedBytes": sum(f.size for f in adds),
            "numRemovedBytes": sum(f.size for f in removes),
            "numOutputRows": sum(f.num_records for f in adds),
            "minFileSize": sizes[0],
            "maxFileSize": sizes[-1],
        },
    )
    return DeltaLog(entry.location).commit(snapshot, adds=adds, removes=removes, info=info, data_change=False)


# Automatic clustering --------------------------------------------------------------------


def dml_target(expression: exp.Expression) -> exp.Table | None:
    """The table an INSERT, UPDATE, DELETE or MERGE writes."""
    target = expression.this
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None


def after_dml(execution: Execution) -> Compaction | None:
    """Recluster the table a DML statement just wrote, if it is due.

    Due means: the table has a clustering key, automatic clustering is on
    (not suspended), and it has more than :data:`AUTO_MIN_SMALL_FILES` files
    under :data:`AUTO_SMALL_FILE`. The compaction is its own commit after the
    statement's, and it never fails the statement, which has already
    committed: losing a race with another writer (or any other failure) only
    postpones it to the next DML statement.
    """
    target = dml_target(execution.expression)
    if target is None:
        return None
    name = execution.tables.name(target)
    catalog = execution.catalog
    entry = catalog.table(name.database, name.schema, name.name)
    if entry is None:
        return None
    clustering = catalog.clustering(entry.id)
    if clustering is None or not clustering.automatic:
        return None
    snapshot = DeltaLog(entry.location).snapshot()
    if sum(1 for f in snapshot.files if f.size < AUTO_SMALL_FILE) <= AUTO_MIN_SMALL_FILES:
        return None
    try:
        return compact(execution, entry, snapshot, threshold=AUTO_SMALL_FILE, auto=True)
    except ConcurrentWriteError:
        return None
    except Exception as error:  # noqa: BLE001 - the statement itself has committed
        # One line, no traceback: a Spark failure's trace would be a Java one.
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        LOG.warning("automatic clustering of %s failed (%s); it will be retried", entry.qualified, first_line)
        return None


def store_key(catalog: Catalog, entry: TableEntry, keys: list[str] | None) -> None:
    """Record a new table's ``CLUSTER BY`` key (automatic clustering on), checked against its columns."""
    if keys is not None:
        catalog.set_clustering(entry.id, check_key(keys, _table_columns(entry)), automatic=True)
