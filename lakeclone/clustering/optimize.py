"""OPTIMIZE and automatic clustering, done by Delta's own OPTIMIZE.

``OPTIMIZE t`` compacts the table's small files; on a table with a
clustering key it is Delta's ``OPTIMIZE ... ZORDER BY`` the key's columns,
which rewrites the files range-partitioned by them, so that each new file
holds its own slice of the key's range (rows within a file are not sorted).
Either way it is one Delta commit whose actions are all ``dataChange: false``:
the rows, and their row ids, are the same before and after.

Automatic clustering is the same OPTIMIZE, run right after a DML statement
commits to a clustered table whose automatic clustering is on, once the table
has gathered more than :data:`AUTO_MIN_SMALL_FILES` small files. DESCRIBE
HISTORY shows such a commit with ``auto = true`` and the key as ``clusterBy``.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from lakeclone.clustering.keys import key_columns
from lakeclone.delta import statements
from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry
from lakeclone.engine.schema import column_named
from lakeclone.errors import ConcurrentWriteError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.store import TableEntry
    from lakeclone.engine.executor import Execution

LOG = logging.getLogger(__name__)

# Automatic clustering counts files smaller than this...
AUTO_SMALL_FILE = 16 * 1024 * 1024
# ...and reclusters once there are more than this many.
AUTO_MIN_SMALL_FILES = 8


@registry.statement(lx.Optimize, bind=needs.modify, query_type="OPTIMIZE")
def optimize(execution: Execution) -> DataFrame:
    """``OPTIMIZE t [ZORDER BY (c, ...)]``: Delta's one-row result (path, metrics)."""
    entry = execution.tables.entry(execution.expression.this)
    named = execution.expression.args.get("zorder")
    if not named:
        return optimize_table(execution, entry, auto=False)
    fields = execution.tables.log(entry).schema().fieldNames()
    zorder: list[str] = []
    for column in named:
        found = column_named(fields, column)
        if found is None:
            raise SqlCompilationError(f"invalid identifier '{column.name}'")
        if found in zorder:
            raise SqlCompilationError(f"ZORDER BY names column {found} twice.")
        zorder.append(found)
    return optimize_table(execution, entry, auto=False, zorder=zorder)


def optimize_table(execution: Execution, entry: TableEntry, *, auto: bool, zorder: list[str] | None = None) -> DataFrame:
    """Delta's OPTIMIZE of the table as one ``dataChange=false`` commit, Z-ordered by ``zorder`` or else its clustering key.

    ``auto`` says, in DESCRIBE HISTORY, that no statement asked for it
    (automatic clustering, a channel table's background compaction).
    """
    clustering = execution.catalog.definitions.clustering(entry.id)
    keys = list(clustering.keys) if clustering else []
    # The target: its commit waits for other sessions' transactions on the table, like any statement's.
    with execution.work.delta(parameters={"clusterBy": json.dumps(keys), "auto": str(auto).lower()}, target=entry.location):
        return statements.optimize(execution.spark, entry.location, zorder if zorder else key_columns(keys))


def after_dml(execution: Execution, entry: TableEntry) -> None:
    """Recluster the table a DML statement just wrote, if it is due.

    Due means: the table has a clustering key, automatic clustering is on
    (not suspended), and it has more than :data:`AUTO_MIN_SMALL_FILES` files
    under :data:`AUTO_SMALL_FILE`. The OPTIMIZE is its own commit after the
    statement's, and it never fails the statement, which has already
    committed: losing a race with another writer (or any other failure) only
    postpones it to the next DML statement.
    """
    clustering = execution.catalog.definitions.clustering(entry.id)
    if clustering is None or not clustering.automatic:
        return
    files = execution.tables.log(entry).files()
    if sum(1 for f in files if f.size < AUTO_SMALL_FILE) <= AUTO_MIN_SMALL_FILES:
        return
    from lakeclone.spark_errors import spark_errors

    try:
        with spark_errors():
            optimize_table(execution, entry, auto=True)
    except ConcurrentWriteError:
        return
    except Exception as error:
        # One line, no traceback: a Spark failure's trace would be a Java one.
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        LOG.warning("automatic clustering of %s failed (%s); it will be retried", entry.qualified, first_line)


registry.AFTER_DML.append(after_dml)
