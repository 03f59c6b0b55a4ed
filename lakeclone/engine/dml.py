"""DML: INSERT, UPDATE, DELETE and MERGE, each exactly one Delta commit made by delta-spark.

The user's expressions are bound to pinned table versions and compiled to
Spark SQL; Delta's own UPDATE, DELETE and MERGE do the work, with deletion
vectors where Delta uses them and row ids kept by Delta's row tracking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.delta import statements
from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry, results
from lakeclone.engine.compiler import check_table_clauses, spark_sql, to_spark
from lakeclone.engine.schema import assigned, column_named, conform
from lakeclone.engine.work import Rewrite
from lakeclone.errors import ExecutionError, SqlCompilationError, UnsupportedStatementError
from lakeclone.spark_errors import DUPLICATE_MERGE_MATCH, spark_errors
from lakeclone.timetravel import point_of

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField, StructType

    from lakeclone.catalog.store import TableEntry
    from lakeclone.delta.commits import Commit
    from lakeclone.engine.executor import Execution


ONE_SOURCE_TABLE = "UPDATE … FROM and DELETE … USING read one table or subquery in lakeclone; join several in a subquery."


@dataclass(frozen=True)
class Target:
    """The table a DML statement writes, at the version it read."""

    entry: TableEntry
    version: int
    schema: StructType
    alias: str

    @property
    def rewrite(self) -> Rewrite:
        return Rewrite(self.entry, self.version)

    def field(self, name: exp.Expression | str) -> StructField:
        """The target's column ``name`` names, as a query reads it (see :func:`column_named`)."""
        found = column_named(self.schema.fieldNames(), name)
        if found is None:
            raise SqlCompilationError(f"invalid identifier '{name if isinstance(name, str) else name.name}'")
        return self.schema[found]


def _target(execution: Execution, table: exp.Table) -> Target:
    if table.args.get("when") or table.args.get("version"):
        raise SqlCompilationError("Time travel is not allowed on the target of a DML statement.")
    check_table_clauses(table)
    tables = execution.tables
    entry = tables.entry(table)
    version = tables.current_version(entry)
    schema = tables.log(entry).schema(version)
    return Target(entry, version, schema, table.alias_or_name)


def _sql(node: exp.Expression, execution: Execution) -> str:
    return spark_sql(node, execution.tables)


def _condition(node: exp.Expression | None, execution: Execution) -> str | None:
    where = node.this if isinstance(node, exp.Where) else node
    return None if where is None else _sql(where, execution)


def _narrowed(execution: Execution, target: Target, where: exp.Expression | None) -> exp.Expression | None:
    """An UPDATE's or DELETE's condition (or a MERGE's ON), narrowed to the target rows a feature lets the role touch."""
    condition = where.this if isinstance(where, exp.Where) else where
    for narrow in registry.TARGET_FILTERS:
        extra = narrow(execution.tables, target.entry, target.version, target.alias)
        if extra is not None:
            condition = extra if condition is None else exp.and_(exp.paren(condition.copy()), exp.paren(extra))
    return condition


def _predicate(node: exp.Expression | None) -> dict[str, str]:
    """DESCRIBE HISTORY's ``predicate``: the condition as the user wrote it, not Delta's analysed form."""
    where = node.this if isinstance(node, exp.Where) else node
    return {"predicate": "true" if where is None else where.sql(dialect="snowflake")}


def _after(execution: Execution, target: Target) -> None:
    for hook in registry.AFTER_DML:
        hook(execution, target.entry)


def _commit_metric(execution: Execution, target: Target, name: str) -> int:
    """A metric of the commit this statement just made to the target.

    Read from the commits after the version the statement read, up to the one
    Delta made (or has read since): the table's history is not read again.
    """
    log = execution.tables.log(target.entry)

    def ours(until: int | None) -> list[Commit]:
        return [c for c in log.commits_after(target.version, until=until) if c.query_id == execution.query_id]

    # None: a snapshot older than the commit (not one Delta kept for the path), so Delta is asked for the latest.
    found = ours(execution.work.written[target.entry.location]) or ours(None)
    return int(found[-1].metrics.get(name, 0)) if found else 0


# INSERT ----------------------------------------------------------------------------


@registry.statement(exp.Insert, bind=needs.dml, query_type="INSERT")
def insert(execution: Execution) -> DataFrame:
    expression = execution.expression
    table, names = expression.this, None
    if isinstance(table, exp.Schema):
        names = [c.name for c in table.expressions]
        table = table.this
    if expression.expression is None:
        raise SqlCompilationError("INSERT needs VALUES or a query.")
    target = _target(execution, table)
    source = execution.spark.sql(spark_sql(expression.expression, execution.tables))
    if registry.SLOTS.insert_defaults is not None:
        source, names = registry.SLOTS.insert_defaults(execution, target.entry, target.schema, source, names)
    frame = conform(source, target.schema, names)
    overwrite = bool(expression.args.get("overwrite"))
    with execution.work.delta(target=target.entry.location):
        statements.write(frame, target.entry.location, overwrite=overwrite)
    inserted = _commit_metric(execution, target, "numOutputRows")
    _after(execution, target)
    return results.counts(execution.spark, [("number of rows inserted", inserted)])


# RESTORE ---------------------------------------------------------------------------

# The Delta table properties a table's change tracking turns on.
TRACKING_PROPERTIES = ("delta.enableRowTracking", "delta.enableChangeDataFeed")

# Delta's result of a RESTORE, column for column.
RESTORE_COLUMNS = (
    "table_size_after_restore",
    "num_of_files_after_restore",
    "num_removed_files",
    "num_restored_files",
    "removed_files_size",
    "restored_files_size",
)


@registry.statement(lx.Restore, bind=needs.modify, query_type="RESTORE")
def restore(execution: Execution) -> DataFrame:
    """Delta's ``RESTORE TABLE t TO {VERSION | TIMESTAMP} AS OF …``: one commit bringing back that version's rows.

    The point is found as time travel finds it (the Lake's clock, the
    table's retention, versions a rolled-back transaction hid); the versions
    after it stay in the history, for time travel and for streams, which see
    the rows restored and removed as changes.
    """
    table = execution.expression.this
    tables = execution.tables
    entry = tables.entry(table)
    version = tables.version(entry, point_of(table))
    log = tables.log(entry)
    now, then = log.configuration(tables.current_version(entry)), log.configuration(version)
    if any(now.get(key) == "true" and then.get(key) != "true" for key in TRACKING_PROPERTIES):
        # Delta's RESTORE brings the version's table properties back too: change tracking would stop unseen.
        raise SqlCompilationError(
            f"Cannot restore table {entry.name} to version {version}: change tracking was turned on after it, and "
            f"the restore would turn it off. Clone that version instead: CREATE TABLE <name> CLONE {entry.name} "
            f"AT(VERSION => {version})."
        )
    with execution.work.delta(target=entry.location, parameters={"restoredVersion": version}):
        metrics = statements.restore(execution.spark, entry.location, version)
    return results.rows(
        execution.spark, ", ".join(f"{name} BIGINT" for name in RESTORE_COLUMNS), [[metrics[n] for n in RESTORE_COLUMNS]]
    )


# DELETE ----------------------------------------------------------------------------


@registry.statement(exp.Delete, bind=needs.dml, query_type="DELETE")
def delete(execution: Execution) -> DataFrame:
    """``DELETE FROM t [USING s] [WHERE …]``; with USING, Delta's MERGE deletes the rows that join."""
    expression = execution.expression
    target = _target(execution, expression.this)
    where = expression.args.get("where")
    using = expression.args.get("using") or []
    if using:
        if len(using) > 1:
            raise SqlCompilationError(ONE_SOURCE_TABLE)
        clause = statements.MergeClause(True, None, "DELETE", {})
        deleted = _merge_from(execution, target, using[0], _narrowed(execution, target, where), clause).deleted
    else:
        condition = _condition(_narrowed(execution, target, where), execution)
        with execution.work.delta(parameters=_predicate(where), rewrite=target.rewrite):
            deleted = statements.delete(execution.spark, target.entry.location, target.alias, condition)
    _after(execution, target)
    return results.counts(execution.spark, [("number of rows deleted", deleted)])


# UPDATE ----------------------------------------------------------------------------


@registry.statement(exp.Update, bind=needs.dml, query_type="UPDATE")
def update(execution: Execution) -> DataFrame:
    """``UPDATE t SET … [FROM s] [WHERE …]``; with FROM, Delta's MERGE updates the rows that join.

    A target row that joins more than one source row is an error, as in
    Snowflake with ``ERROR_ON_NONDETERMINISTIC_UPDATE = TRUE``: which source
    row would win is undefined.
    """
    expression = execution.expression
    target = _target(execution, expression.this)
    assignments = _assignments(expression.expressions, target, execution)
    where = expression.args.get("where")
    source = expression.args.get("from_")
    if source is not None:
        clause = statements.MergeClause(True, None, "UPDATE", assignments)
        updated = _merge_from(execution, target, source.this, _narrowed(execution, target, where), clause).updated
    else:
        condition = _condition(_narrowed(execution, target, where), execution)
        with execution.work.delta(parameters=_predicate(where), rewrite=target.rewrite):
            updated = statements.update(execution.spark, target.entry.location, target.alias, assignments, condition)
    _after(execution, target)
    return results.counts(
        execution.spark,
        [("number of rows updated", updated), ("number of multi-joined rows updated", 0)],
    )


def _assignments(pairs: Sequence[exp.Expression], target: Target, execution: Execution) -> dict[str, str]:
    """``SET a = expr, ...`` as target column name -> Spark SQL of the value, cast to the column's type."""
    assignments: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, exp.EQ) or not isinstance(pair.this, exp.Column):
            raise SqlCompilationError(f"invalid assignment {pair.sql(dialect='snowflake')}")
        field = target.field(pair.this)
        assignments[field.name] = assigned(_sql(pair.expression, execution), field)
    return assignments


# MERGE ------------------------------------------------------------------------------


@registry.statement(exp.Merge, bind=needs.dml, query_type="MERGE")
def merge(execution: Execution) -> DataFrame:
    expression = execution.expression
    assert isinstance(expression, exp.Merge)
    target = _target(execution, expression.this)
    source_sql, source_alias = _source(expression.args["using"], execution)
    # Target rows a feature hides from the role (row access) match no source row, as if absent.
    on = _narrowed(execution, target, expression.args["on"])
    assert on is not None  # a MERGE always has its ON
    statement = statements.Merge(
        target.entry.location,
        target.alias,
        source_sql,
        source_alias,
        _sql(on, execution),
        tuple(_merge_clauses(expression, target, execution)),
    )
    if registry.SLOTS.merge_defaults is not None:
        reference = execution.tables.reference(target.entry, target.version)
        statement = registry.SLOTS.merge_defaults(execution, target.entry, target.schema, to_spark(reference), statement)
    with execution.work.delta(parameters=_predicate(expression.args["on"]), rewrite=target.rewrite):
        counts = _merge_by_snowflakes_rule(execution, statement)
    _after(execution, target)
    return results.counts(
        execution.spark,
        [
            ("number of rows inserted", counts.inserted),
            ("number of rows updated", counts.updated),
            ("number of rows deleted", counts.deleted),
        ],
    )


def _merge_by_snowflakes_rule(execution: Execution, statement: statements.Merge) -> statements.MergeCounts:
    """Run a MERGE; when Delta refuses a target row that several source rows join, run it once more without the idle ones.

    Delta refuses before it commits, so the first try changes nothing. The
    second leaves out source rows that join a target row but meet no WHEN
    MATCHED condition (:meth:`~lakeclone.delta.statements.Merge.without_idle_matches`),
    as Snowflake does: a stream's update pair, whose DELETE half no clause takes,
    then merges. Where two rows really would change one target row, the error stands.
    """
    try:
        with spark_errors():
            return statements.merge(execution.spark, statement)
    except ExecutionError as error:
        narrowed = statement.without_idle_matches()
        if DUPLICATE_MERGE_MATCH not in str(error) or narrowed is None:
            raise
    return statements.merge(execution.spark, narrowed)


def _source(source: exp.Expression, execution: Execution) -> tuple[str, str]:
    """A MERGE source as Spark SQL of a subquery, and the name the statement calls it by."""
    if isinstance(source, exp.Table):
        if source.args.get("joins"):
            raise SqlCompilationError(ONE_SOURCE_TABLE)
        unaliased = source.copy()
        unaliased.set("alias", None)
        return f"({_sql(exp.select('*').from_(unaliased), execution)})", source.alias_or_name
    if isinstance(source, exp.Subquery):
        return f"({_sql(source.this, execution)})", source.alias_or_name
    raise SqlCompilationError(f"invalid DML source {source.sql(dialect='snowflake')}")


def _merge_from(
    execution: Execution,
    target: Target,
    source: exp.Expression,
    where: exp.Expression | None,
    clause: statements.MergeClause,
) -> statements.MergeCounts:
    """UPDATE … FROM and DELETE … USING as the MERGE they mean: the WHERE joins target and source."""
    source_sql, source_alias = _source(source, execution)
    condition = _condition(where, execution) or "true"
    statement = statements.Merge(target.entry.location, target.alias, source_sql, source_alias, condition, (clause,))
    with execution.work.delta(parameters=_predicate(where), rewrite=target.rewrite):
        return statements.merge(execution.spark, statement)


def _merge_clauses(expression: exp.Merge, target: Target, execution: Execution) -> list[statements.MergeClause]:
    whens = expression.args.get("whens")
    clauses = []
    for when in whens.expressions if whens else []:
        if when.args.get("source"):
            raise UnsupportedStatementError("WHEN NOT MATCHED BY SOURCE")
        condition_node = when.args.get("condition")
        condition = _sql(condition_node, execution) if condition_node else None
        then = when.args["then"]
        if when.args.get("matched"):
            if isinstance(then, exp.Update):
                values = _assignments(then.expressions, target, execution)
                clauses.append(statements.MergeClause(True, condition, "UPDATE", values))
            elif isinstance(then, exp.Var) and then.name.upper() == "DELETE":
                clauses.append(statements.MergeClause(True, condition, "DELETE", {}))
            else:
                raise SqlCompilationError(f"invalid WHEN MATCHED action {then.sql(dialect='snowflake')}")
        else:
            if not isinstance(then, exp.Insert):
                raise SqlCompilationError(f"invalid WHEN NOT MATCHED action {then.sql(dialect='snowflake')}")
            clauses.append(statements.MergeClause(False, condition, "INSERT", _insert_values(then, target, execution)))
    return clauses


def _insert_values(insert: exp.Insert, target: Target, execution: Execution) -> dict[str, str]:
    values_node = insert.expression
    values = values_node.expressions if isinstance(values_node, exp.Tuple) else [values_node]
    columns_node = insert.this
    if columns_node is None:
        names = target.schema.fieldNames()
    else:
        columns = columns_node.expressions if isinstance(columns_node, exp.Tuple) else [columns_node]
        names = [target.field(c).name for c in columns]
    if len(names) != len(values):
        raise SqlCompilationError(f"Insert value list does not match column list expecting {len(names)} but got {len(values)}")
    return {name: assigned(_sql(value, execution), target.field(name)) for name, value in zip(names, values, strict=True)}
