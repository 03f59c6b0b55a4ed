"""Deletion vectors, per table: ``ENABLE_DELETION_VECTORS = TRUE`` at CREATE TABLE or by ALTER TABLE … SET.

With deletion vectors a DELETE, UPDATE or MERGE marks the rows it removes in a
small file beside a data file instead of rewriting the data file, which pays
on large files and costs on small ones: on a table of a few small files a
one-row UPDATE or DELETE runs 12 Spark jobs with them and 7 without
(``tests/test_statement_jobs.py`` holds it to Delta's defaults). They also add a reader feature that
readers without it (delta-rs) refuse. So a table is created without them, and
has them from the commit that turns them on. Turning them off again stops new
ones being written; the table keeps the feature, since the vectors already
written stay in its history and its clones.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.catalog.entries import ObjectKind
from lakeclone.delta import statements
from lakeclone.engine import registry

if TYPE_CHECKING:
    from lakeclone.engine.executor import Execution

ENABLE_DELETION_VECTORS = "ENABLE_DELETION_VECTORS"
DELTA_PROPERTY = "delta.enableDeletionVectors"


def create_properties(value: str) -> dict[str, str]:
    """The Delta property ``CREATE TABLE … ENABLE_DELETION_VECTORS = <value>`` creates a table with."""
    return {DELTA_PROPERTY: "true"} if value == "true" else {}


def on_parameter(execution: Execution, kind: ObjectKind, object_id: str, value: str | None) -> None:
    """``ALTER TABLE t SET|UNSET ENABLE_DELETION_VECTORS``: one metadata commit, only when the property changes."""
    if kind is not ObjectKind.TABLE:
        return
    entry = execution.catalog.objects.table_by_id(object_id)
    if entry is None:
        return
    wanted = "true" if value == "true" else "false"
    configuration = execution.tables.log(entry).configuration()
    if configuration.get(DELTA_PROPERTY, "false") == wanted:
        return
    with execution.work.delta(target=entry.location):
        statements.set_properties(execution.spark, entry.location, {DELTA_PROPERTY: wanted})


registry.PARAMETER_HOOKS[ENABLE_DELETION_VECTORS] = on_parameter
registry.CREATE_PROPERTIES[ENABLE_DELETION_VECTORS] = create_properties
