"""Clustering keys: ``CLUSTER BY``, ``ALTER TABLE ... CLUSTER BY | DROP CLUSTERING KEY | SUSPEND | RESUME RECLUSTER``.

A table's clustering key (lsql expressions) and whether automatic clustering
runs are catalog state by table id, as in Snowflake. A clone keeps its
source's key but starts with automatic clustering suspended.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.dialect import expressions as lx
from lakeclone.engine import registry, results
from lakeclone.engine.privileges import Need, owned
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.registry import CloneEvent
    from lakeclone.engine.tables import Tables


def key_of(expression: exp.Expression) -> list[str] | None:
    """The ``CLUSTER BY (...)`` key of a CREATE TABLE, as lsql expressions; None without one."""
    properties = expression.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.ClusterProperty):
            return [e.sql(dialect="snowflake") for e in prop.expressions]
    return None


def key_columns(keys: tuple[str, ...] | list[str]) -> list[str]:
    """The columns a key's expressions use, in order of first use."""
    columns: list[str] = []
    for key in keys:
        for column in sqlglot.parse_one(key, read="snowflake").find_all(exp.Column):
            if column.name not in columns:
                columns.append(column.name)
    return columns


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
    for column in key_columns(keys):
        if column.upper() not in upper:
            raise SqlCompilationError(f"invalid identifier '{column}'")
    return keys


def table_attributes(catalog: Catalog, table_id: str) -> dict[str, Any]:
    """SHOW TABLES' ``cluster_by`` and ``automatic_clustering``, DESCRIBE DETAIL's ``clusteringColumns``."""
    clustering = catalog.definitions.clustering(table_id)
    if clustering is None:
        return {}
    return {
        "cluster_by": f"LINEAR({', '.join(clustering.keys)})",
        "automatic_clustering": "ON" if clustering.automatic else "OFF",
        "clusteringColumns": list(clustering.keys),
    }


@dataclass
class ClusteringKey:
    """A CREATE TABLE's ``CLUSTER BY`` key, stored once the table exists (automatic clustering on)."""

    keys: list[str] | None
    execution: Execution
    consumed: set[int] = field(default_factory=set)

    def store(self, catalog: Catalog, entry: TableEntry) -> None:
        if self.keys is not None:
            columns = self.execution.tables.log(entry).schema().fieldNames()
            catalog.definitions.set_clustering(entry.id, check_key(self.keys, columns), automatic=True)


def read_key(execution: Execution, name: QualifiedName, create: exp.Create, elements: list[exp.Expression]) -> ClusteringKey:
    return ClusteringKey(key_of(create), execution)


def _table_columns(execution: Execution, entry: TableEntry) -> list[str]:
    return execution.tables.log(entry).schema().fieldNames()


def _entry_or_none(execution: Execution) -> TableEntry | None:
    expression = execution.expression
    name = execution.tables.name(expression.this)
    entry = execution.catalog.objects.table(name.database, name.schema, name.name)
    if entry is None and not expression.args.get("exists"):
        return execution.tables.entry(expression.this)  # raises ObjectNotFoundError
    return entry


def _owned_table(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """A table's clustering is its owner's to change."""
    yield from owned(tables, expression.this, ObjectKind.TABLE)


@registry.statement(lx.AlterClustering, bind=_owned_table, query_type="ALTER")
def alter_clustering(execution: Execution) -> DataFrame:
    """``ALTER TABLE t CLUSTER BY (a, b)`` / ``ALTER TABLE t DROP CLUSTERING KEY``."""
    catalog = execution.catalog
    keys = [e.sql(dialect="snowflake") for e in execution.expression.expressions]
    with execution.work.records():
        entry = _entry_or_none(execution)
        if entry is not None:
            if keys:
                check_key(keys, _table_columns(execution, entry))
                current = catalog.definitions.clustering(entry.id)
                catalog.definitions.set_clustering(entry.id, keys, automatic=current.automatic if current else True)
            else:
                catalog.definitions.drop_clustering(entry.id)
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(lx.AlterRecluster, bind=_owned_table, query_type="ALTER")
def alter_recluster(execution: Execution) -> DataFrame:
    """``ALTER TABLE t SUSPEND | RESUME RECLUSTER``: turn automatic clustering off or on."""
    catalog = execution.catalog
    automatic = not execution.expression.args.get("suspend")
    with execution.work.records():
        entry = _entry_or_none(execution)
        if entry is not None:
            clustering = catalog.definitions.clustering(entry.id)
            if clustering is None:
                raise SqlCompilationError(f"Table '{entry.name}' has no clustering key.")
            catalog.definitions.set_clustering(entry.id, clustering.keys, automatic=automatic)
    return results.status(execution.spark, "Statement executed successfully.")


def clone_keys(event: CloneEvent) -> None:
    """A clone keeps its source's key, with automatic clustering suspended until RESUME RECLUSTER."""
    for source_id, clone_id in event.tables:
        clustering = event.catalog.definitions.clustering(source_id)
        if clustering is not None:
            event.catalog.definitions.set_clustering(clone_id, clustering.keys, automatic=False)


registry.TABLE_DEFINITIONS.append(read_key)
registry.TABLE_ATTRIBUTES.append(table_attributes)
registry.CLONE_HOOKS.append(clone_keys)
