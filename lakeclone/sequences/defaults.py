"""Column defaults: ``DEFAULT <constant>`` and ``DEFAULT seq.NEXTVAL``, filled on INSERT and MERGE.

A default lives in the catalog by table id. ``NEXTVAL`` refers to its sequence
by id: renaming or cloning the schema around it does not change which
sequence a table draws from, but a schema or database clone that clones the
sequence too points its tables' defaults at the clone, as Snowflake does.

An INSERT (or a MERGE's ``WHEN NOT MATCHED THEN INSERT``) that leaves out a
column with a NEXTVAL default first fixes the rows that need a value (a local
checkpoint), counts them, reserves one contiguous block of that many values
and numbers the rows; only rows that are inserted draw a value. The extra pass
is paid only when such a default is actually needed.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlglot
from sqlglot import exp

from lakeclone.catalog.entries import ColumnDefault
from lakeclone.delta.statements import Merge, MergeClause, quoted
from lakeclone.engine import registry
from lakeclone.engine.compiler import to_spark
from lakeclone.engine.functions import check_functions
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField, StructType

    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.registry import CloneEvent

NEXTVAL = "NEXTVAL"


@dataclass
class Defaults:
    """The defaults a CREATE TABLE declares, stored once the table exists."""

    defaults: list[ColumnDefault] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)

    def store(self, catalog: Catalog, entry: TableEntry) -> None:
        for default in self.defaults:
            catalog.set_column_default(entry.id, default)


def read_defaults(execution: Execution, name: QualifiedName, create: exp.Create, elements: list[exp.Expression]) -> Defaults:
    """The ``DEFAULT`` constraints of CREATE TABLE's columns."""
    found = Defaults()
    for column in elements:
        if not isinstance(column, exp.ColumnDef):
            continue
        for constraint in column.args.get("constraints") or []:
            if isinstance(constraint.kind, exp.DefaultColumnConstraint):
                found.defaults.append(default_of(execution, column.name, constraint.kind.this))
                found.consumed.add(id(constraint))
    return found


def default_of(execution: Execution, column: str, node: exp.Expression) -> ColumnDefault:
    """The catalog form of ``DEFAULT <node>``: ``s.NEXTVAL`` by sequence id, else a constant."""
    if isinstance(node, exp.Column) and node.name.upper() == NEXTVAL and node.table:
        parts = {k: node.args[k].copy() for k in ("db", "catalog") if node.args.get(k) is not None}
        reference = exp.Table(this=node.args["table"].copy(), **parts)
        name = execution.tables.name(reference)
        sequence = execution.catalog.sequence(name.database, name.schema, name.name)
        if sequence is None:
            raise ObjectNotFoundError(str(name))
        return ColumnDefault(column, sequence_id=sequence.id)
    check_functions(node)
    if node.find(exp.Column, exp.Select, exp.Subquery):
        raise SqlCompilationError(
            f"Invalid column default expression [{node.sql(dialect='snowflake')}]: "
            "only constants and a sequence's NEXTVAL are allowed"
        )
    return ColumnDefault(column, expression=node.sql(dialect="snowflake"))


def describe_defaults(catalog: Catalog, table_id: str) -> dict[str, dict[str, str | None]]:
    """DESCRIBE TABLE's ``default`` column: ``DB.S.SEQ.NEXTVAL`` or the constant's text."""
    described: dict[str, dict[str, str | None]] = {}
    for default in catalog.column_defaults(table_id):
        if default.sequence_id is not None:
            sequence = catalog.sequence_by_id(default.sequence_id)
            text = f"{sequence.qualified}.{NEXTVAL}" if sequence else None
        else:
            text = default.expression
        described[default.column.upper()] = {"default": text}
    return described


def defaults_by_column(catalog: Catalog, table_id: str) -> dict[str, ColumnDefault]:
    return {d.column.upper(): d for d in catalog.column_defaults(table_id)}


def constant_sql(default: ColumnDefault) -> str:
    """A constant default as Spark SQL."""
    assert default.expression is not None
    return to_spark(sqlglot.parse_one(default.expression, read="snowflake"))


def reserve(execution: Execution, entry: TableEntry, default: ColumnDefault, count: int) -> tuple[int, int]:
    """``count`` consecutive values of a default's sequence: (first, increment).

    Reserved for good at once, as Snowflake's are: a statement that fails
    leaves a gap, never a value another statement could take too.
    """
    assert default.sequence_id is not None
    catalog = execution.catalog
    if not catalog.sequence_is_live(default.sequence_id):
        raise SqlCompilationError(
            f"Sequence used as a default value in table '{entry.name}' column '{default.column}' "
            "was not found or could not be accessed."
        )
    with execution.work.durable():
        return catalog.reserve_sequence_values(default.sequence_id, count)


# INSERT -----------------------------------------------------------------------------------


def insert_defaults(
    execution: Execution,
    entry: TableEntry,
    schema: StructType,
    frame: DataFrame,
    names: list[str] | None,
) -> tuple[DataFrame, list[str] | None]:
    """Add the omitted defaulted columns of an INSERT with a column list to its source frame.

    Returns the frame and the extended column list; without a column list, or
    with no omitted defaulted column, both come back unchanged.
    """
    from pyspark.sql import functions as F

    if names is None:
        return frame, names
    defaults = defaults_by_column(execution.catalog, entry.id)
    given = {n.upper() for n in names}
    omitted = [
        (column.name, defaults[column.name.upper()])
        for column in schema.fields
        if column.name.upper() in defaults and column.name.upper() not in given
    ]
    if not omitted:
        return frame, names
    # Positional names: the source's own may repeat or be awkward (`SELECT 1, 1`).
    columns = [f"_lc_value_{i}" for i in range(len(frame.columns))]
    frame = frame.toDF(*columns)
    added: list[str] = []
    for index, (column, default) in enumerate(omitted):
        if default.expression is not None:
            alias = f"_lc_default_{index}"
            frame = frame.withColumn(alias, F.expr(constant_sql(default)))
            added.append(column)
            columns.append(alias)
    sequenced = {f"_lc_default_{i}": d for i, (_, d) in enumerate(omitted) if d.sequence_id is not None}
    if sequenced:
        frame = number_rows(execution, entry, frame, sequenced)
        for index, (column, default) in enumerate(omitted):
            if default.sequence_id is not None:
                added.append(column)
                columns.append(f"_lc_default_{index}")
    return frame.select(*[F.col(f"`{c}`") for c in columns]), [*names, *added]


def number_rows(
    execution: Execution,
    entry: TableEntry,
    frame: DataFrame,
    columns: Mapping[str, ColumnDefault],
    *,
    needed: Mapping[str, str] | None = None,
) -> DataFrame:
    """``frame`` with each of ``columns`` (new column name -> NEXTVAL default) filled from its sequence.

    ``needed`` optionally maps a new column to a boolean column of ``frame``:
    only rows where it is true draw a value (the others get NULL). The rows are
    fixed first so that counting and numbering see the very same rows.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    frame = frame.localCheckpoint(eager=True)
    order = "_lc_order"
    frame = frame.withColumn(order, F.monotonically_increasing_id())
    for column, default in columns.items():
        flag = (needed or {}).get(column)
        if flag is None:
            count = frame.count()
            window = Window.orderBy(order)
        else:
            count = frame.where(F.col(flag)).count()
            window = Window.partitionBy(F.col(flag)).orderBy(order)
        first, increment = reserve(execution, entry, default, count) if count else (0, 0)
        value = F.lit(first) + (F.row_number().over(window) - 1) * F.lit(increment)
        if flag is not None:
            value = F.when(F.col(flag), value)
        frame = frame.withColumn(column, value.cast("bigint"))
    return frame.drop(order)


# MERGE ------------------------------------------------------------------------------------


def merge_defaults(execution: Execution, entry: TableEntry, schema: StructType, target: str, merge: Merge) -> Merge:
    """Complete a MERGE's INSERT clauses with the defaults of the columns they leave out.

    A constant default goes into the clause. For a NEXTVAL default, the
    source gains a column of values drawn for exactly the source rows that
    match no target row (at the version the statement reads) and whose first
    applicable INSERT clause leaves the column out.
    """
    defaults = defaults_by_column(execution.catalog, entry.id)
    inserts = [c for c in merge.clauses if c.action == "INSERT"]
    if not defaults or not inserts:
        return merge
    sequenced: dict[str, tuple[StructField, ColumnDefault]] = {}
    completed: list[MergeClause] = []
    for clause in merge.clauses:
        if clause.action != "INSERT":
            completed.append(clause)
            continue
        values = dict(clause.values)
        for column in schema.fields:
            default = defaults.get(column.name.upper())
            if column.name in values or default is None:
                continue
            if default.expression is not None:
                values[column.name] = f"CAST(({constant_sql(default)}) AS {column.dataType.simpleString()})"
            else:
                sequenced.setdefault(column.name, (column, default))
                index = list(sequenced).index(column.name)
                values[column.name] = f"{quoted(merge.source_alias)}.`_lc_next_{index}`"
        completed.append(dataclasses.replace(clause, values=values))
    if not sequenced:
        return dataclasses.replace(merge, clauses=tuple(completed))
    source = _numbered_source(execution, entry, target, merge, inserts, sequenced)
    return dataclasses.replace(merge, source=source, clauses=tuple(completed))


def _numbered_source(
    execution: Execution,
    entry: TableEntry,
    target: str,
    merge: Merge,
    inserts: list[MergeClause],
    sequenced: dict[str, tuple[StructField, ColumnDefault]],
) -> str:
    """The MERGE's source with a ``_lc_next_<i>`` column of sequence values per sequenced column; a view name."""
    source_alias = quoted(merge.source_alias)
    # Which source rows match no target row: a semi and an anti join, because
    # Spark's analyzer fails on a correlated NOT EXISTS in a select list.
    join = f"FROM {merge.source} AS {source_alias} LEFT {{kind}} JOIN {target} AS {quoted(merge.alias)} ON {merge.on}"
    split = (
        f"SELECT {source_alias}.*, FALSE AS `_lc_unmatched` {join.format(kind='SEMI')} "
        f"UNION ALL SELECT {source_alias}.*, TRUE AS `_lc_unmatched` {join.format(kind='ANTI')}"
    )
    flags = []
    for index, name in enumerate(sequenced):
        branches = " ".join(
            f"WHEN {clause.condition or 'TRUE'} THEN {'FALSE' if name in clause.values else 'TRUE'}" for clause in inserts
        )
        flags.append(f"(`_lc_unmatched` AND COALESCE(CASE {branches} END, FALSE)) AS `_lc_need_{index}`")
    flagged = execution.spark.sql(f"SELECT {source_alias}.*, {', '.join(flags)} FROM ({split}) AS {source_alias}")
    columns = {f"_lc_next_{i}": default for i, (_, default) in enumerate(sequenced.values())}
    needed = {f"_lc_next_{i}": f"_lc_need_{i}" for i in range(len(sequenced))}
    numbered = number_rows(execution, entry, flagged, columns, needed=needed)
    view = f"lc_merge_source_{uuid.uuid4().hex}"
    numbered.createOrReplaceTempView(view)
    execution.work.compensate(f"drop view {view}", lambda: execution.spark.catalog.dropTempView(view))
    return quoted(view)


# Clones -----------------------------------------------------------------------------------


def clone_sequences_and_defaults(event: CloneEvent) -> None:
    """Clone the sequences of each cloned schema, then give each cloned table its source's defaults.

    A default drawing from a sequence cloned by the same statement draws from
    the clone; any other keeps its sequence. Each cloned sequence continues
    from its source's next value as it is now (sequences have no history).
    """
    catalog = event.catalog
    cloned: dict[str, str] = {}
    for source, target in event.schemas:
        for sequence in catalog.sequences(source):
            if not event.existed(sequence.created_at):
                continue
            clone = catalog.create_sequence(
                target,
                sequence.name,
                start=sequence.next_value,
                increment=sequence.increment,
                now=event.now,
                comment=sequence.comment,
                source_id=sequence.id,
            )
            cloned[sequence.id] = clone.id
    event.remapped["sequence"] = cloned
    for source_id, clone_id in event.tables:
        for default in catalog.column_defaults(source_id):
            sequence_id = default.sequence_id
            remapped = (
                default if sequence_id is None else dataclasses.replace(default, sequence_id=cloned.get(sequence_id, sequence_id))
            )
            catalog.set_column_default(clone_id, remapped)


registry.TABLE_DEFINITIONS.append(read_defaults)
registry.COLUMN_ATTRIBUTES.append(describe_defaults)
registry.CLONE_HOOKS.append(clone_sequences_and_defaults)
registry.SLOTS.insert_defaults = insert_defaults
registry.SLOTS.merge_defaults = merge_defaults
