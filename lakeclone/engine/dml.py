"""DML: INSERT, UPDATE, DELETE and MERGE, each exactly one Delta commit.

UPDATE, DELETE and MERGE are copy-on-write: one Spark scan finds the files
holding affected rows (only per-file counts reach the driver), and only those
files are rewritten. Rewritten rows keep their row id.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.delta.log import DataFile, DeltaLog, Snapshot
from lakeclone.delta.paths import spark_file_key
from lakeclone.delta.writer import ROW_ID, write_data_files
from lakeclone.engine import results, sequences
from lakeclone.engine.compiler import bind_tables, spark_sql, to_spark
from lakeclone.engine.schema import conform, new_row_id
from lakeclone.engine.tables import FILE_COLUMN, spark_schema
from lakeclone.errors import ExecutionError, SqlCompilationError, UnsupportedStatementError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField, StructType

    from lakeclone.catalog.store import TableEntry
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

MATCHED = "_lakeclone_matched"


@dataclass(frozen=True)
class Target:
    """The table a DML statement writes, at the version it read."""

    entry: TableEntry
    snapshot: Snapshot
    schema: StructType
    alias: str
    tables: Tables = dataclasses.field(repr=False, compare=False)

    @cached_property
    def view(self) -> str:
        """The snapshot as a view with row ids and files; built only by statements that scan it."""
        return self.tables.view(self.entry, self.snapshot, row_id=True, file=True)

    def files(self, keys: Sequence[str]) -> list[DataFile]:
        by_key = {f.local_path: f for f in self.snapshot.files}
        return [by_key[spark_file_key(k)] for k in keys]

    def field(self, name: str) -> StructField:
        for column in self.schema.fields:
            if column.name.upper() == name.upper():
                return column
        raise SqlCompilationError(f"invalid identifier '{name}'")


def _target(execution: Execution, table: exp.Table) -> Target:
    if table.args.get("when") or table.args.get("version"):
        raise SqlCompilationError("Time travel is not allowed on the target of a DML statement.")
    tables = execution.tables
    entry = tables.entry(table)
    snapshot = tables.snapshot(entry)
    return Target(entry, snapshot, spark_schema(snapshot), table.alias_or_name, tables)


def _sql(node: exp.Expression, execution: Execution) -> str:
    return to_spark(bind_tables(node, execution.tables))


def _rewrite_view(execution: Execution, target: Target, files: Sequence[DataFile]) -> str:
    """A view over just the files a statement rewrites."""
    subset = dataclasses.replace(target.snapshot, files=tuple(files))
    return execution.tables.scratch_view(execution.tables.frame(subset, row_id=True))


def _checked_sql(value: str, field: StructField) -> str:
    cast = f"CAST(({value}) AS {field.dataType.simpleString()})"
    if field.nullable:
        return cast
    message = exp.Literal.string(f"NULL result in a non-nullable column '{field.name}'").sql(dialect="spark")
    return f"CASE WHEN {cast} IS NULL THEN raise_error({message}) ELSE {cast} END"


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _commit(
    execution: Execution,
    target: Target,
    operation: str,
    *,
    adds: Sequence[DataFile],
    removes: Sequence[DataFile],
    parameters: dict[str, object],
    metrics: dict[str, int],
) -> int:
    metrics = {
        "numAddedFiles": len(adds),
        "numRemovedFiles": len(removes),
        "numAddedBytes": sum(f.size for f in adds),
        "numRemovedBytes": sum(f.size for f in removes),
        "numOutputRows": sum(f.num_records for f in adds),
        **metrics,
    }
    return DeltaLog(target.entry.location).commit(
        target.snapshot,
        adds=adds,
        removes=removes,
        info=execution.commit_info(operation, parameters=parameters, metrics=metrics),
    )


def _affected(execution: Execution, target: Target, condition_sql: str) -> tuple[list[DataFile], int]:
    """The files holding rows that satisfy ``condition_sql``, and how many rows do."""
    counts = execution.spark.sql(
        f"SELECT {FILE_COLUMN} AS f, count(*) AS n FROM {target.view} AS {_quoted(target.alias)} "
        f"WHERE {condition_sql} GROUP BY {FILE_COLUMN}"
    ).collect()
    return target.files([row.f for row in counts]), sum(row.n for row in counts)


def _condition(node: exp.Expression | None, execution: Execution) -> str:
    """A WHERE condition as Spark SQL, left bare so that Spark pushes it down to the Parquet scan.

    A NULL result counts as false wherever it is used: in WHERE and in CASE
    WHEN that is SQL's own rule; a negation has to say so (see DELETE).
    """
    where = node.this if isinstance(node, exp.Where) else node
    return "TRUE" if where is None else f"({_sql(where, execution)})"


# INSERT ----------------------------------------------------------------------------


def insert(execution: Execution) -> DataFrame:
    expression = execution.expression
    table, names = expression.this, None
    if isinstance(table, exp.Schema):
        names = [c.name for c in table.expressions]
        table = table.this
    target = _target(execution, table)
    source = execution.spark.sql(spark_sql(expression.expression, execution.tables))
    source, names = sequences.with_insert_defaults(execution, target.entry, target.schema, source, names)
    frame = conform(source, target.schema, names).withColumn(ROW_ID, new_row_id())
    adds = write_data_files(frame, target.entry.location, now=execution.now())
    overwrite = bool(expression.args.get("overwrite"))
    removes = list(target.snapshot.files) if overwrite else []
    inserted = sum(f.num_records for f in adds)
    _commit(
        execution,
        target,
        "WRITE",
        adds=adds,
        removes=removes,
        parameters={"mode": "Overwrite" if overwrite else "Append"},
        metrics={"numInsertedRows": inserted},
    )
    return results.counts(execution.spark, [("number of rows inserted", inserted)])


# DELETE ----------------------------------------------------------------------------


def delete(execution: Execution) -> DataFrame:
    expression = execution.expression
    if expression.args.get("using"):
        raise UnsupportedStatementError(execution.sql)
    target = _target(execution, expression.this)
    condition = _condition(expression.args.get("where"), execution)
    files, deleted = _affected(execution, target, condition)
    adds: list[DataFile] = []
    if files:
        view = _rewrite_view(execution, target, files)
        kept = execution.spark.sql(
            f"SELECT * FROM {view} AS {_quoted(target.alias)} WHERE NOT COALESCE({condition}, FALSE)"
        )
        adds = write_data_files(kept, target.entry.location, now=execution.now())
    _commit(
        execution,
        target,
        "DELETE",
        adds=adds,
        removes=files,
        parameters={"predicate": expression.args["where"].this.sql(dialect="snowflake") if expression.args.get("where") else "true"},
        metrics={"numDeletedRows": deleted, "numCopiedRows": sum(f.num_records for f in adds)},
    )
    return results.counts(execution.spark, [("number of rows deleted", deleted)])


# UPDATE ----------------------------------------------------------------------------


def update(execution: Execution) -> DataFrame:
    expression = execution.expression
    if expression.args.get("from"):
        raise UnsupportedStatementError(execution.sql)
    target = _target(execution, expression.this)
    condition = _condition(expression.args.get("where"), execution)
    assignments = _assignments(expression.expressions, target, execution)
    files, updated = _affected(execution, target, condition)
    adds: list[DataFile] = []
    if files:
        view = _rewrite_view(execution, target, files)
        columns = []
        for field in target.schema.fields:
            current = f"{_quoted(target.alias)}.{_quoted(field.name)}"
            if field.name in assignments:
                value = _checked_sql(assignments[field.name], field)
                current = f"CASE WHEN {condition} THEN {value} ELSE {current} END"
            columns.append(f"{current} AS {_quoted(field.name)}")
        rewritten = execution.spark.sql(
            f"SELECT {', '.join(columns)}, {ROW_ID} FROM {view} AS {_quoted(target.alias)}"
        )
        adds = write_data_files(rewritten, target.entry.location, now=execution.now())
    total = sum(f.num_records for f in files)
    _commit(
        execution,
        target,
        "UPDATE",
        adds=adds,
        removes=files,
        parameters={"predicate": expression.args["where"].this.sql(dialect="snowflake") if expression.args.get("where") else "true"},
        metrics={"numUpdatedRows": updated, "numCopiedRows": total - updated},
    )
    return results.counts(
        execution.spark,
        [("number of rows updated", updated), ("number of multi-joined rows updated", 0)],
    )


def _assignments(pairs: Sequence[exp.Expression], target: Target, execution: Execution) -> dict[str, str]:
    """``SET a = expr, ...`` as target column name -> Spark SQL of the value."""
    assignments: dict[str, str] = {}
    for pair in pairs:
        if not isinstance(pair, exp.EQ) or not isinstance(pair.this, exp.Column):
            raise SqlCompilationError(f"invalid assignment {pair.sql(dialect='snowflake')}")
        field = target.field(pair.this.name)
        assignments[field.name] = _sql(pair.expression, execution)
    return assignments


# MERGE ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Clause:
    number: int
    condition: str
    action: str  # UPDATE, DELETE or INSERT
    values: dict[str, str]  # target column -> Spark SQL


def merge(execution: Execution) -> DataFrame:
    expression = execution.expression
    target = _target(execution, expression.this)
    source = expression.args["using"]
    source_alias = source.alias_or_name
    # The source becomes a derived table; its alias is applied by the queries below.
    if isinstance(source, exp.Table):
        unaliased = source.copy()
        unaliased.set("alias", None)
        source_sql = f"({_sql(exp.select('*').from_(unaliased), execution)})"
    else:
        source_sql = f"({_sql(source.this, execution)})"
    on = f"COALESCE(({_sql(expression.args['on'], execution)}), FALSE)"
    matched, not_matched = _merge_clauses(expression, target, execution)
    spark = execution.spark
    talias, salias = _quoted(target.alias), _quoted(source_alias)

    files: list[DataFile] = []
    updated = deleted = 0
    if matched:
        action = "CASE " + " ".join(f"WHEN {c.condition} THEN {c.number}" for c in matched) + " ELSE 0 END"
        updates = ", ".join(str(c.number) for c in matched if c.action == "UPDATE") or "-1"
        deletes = ", ".join(str(c.number) for c in matched if c.action == "DELETE") or "-1"
        per_file = spark.sql(
            f"""
            WITH pairs AS (
                SELECT {talias}.{FILE_COLUMN} AS f, {talias}.{ROW_ID} AS r, {action} AS a
                FROM {target.view} AS {talias} JOIN {source_sql} AS {salias} ON {on}
            ), target_rows AS (
                SELECT f, r, count(*) AS n, max(a) AS a FROM pairs GROUP BY f, r
            )
            SELECT f, max(n) AS most,
                   sum(CASE WHEN a IN ({updates}) THEN 1 ELSE 0 END) AS updated,
                   sum(CASE WHEN a IN ({deletes}) THEN 1 ELSE 0 END) AS deleted
            FROM target_rows WHERE a > 0 GROUP BY f
            """
        ).collect()
        if any(row.most > 1 for row in per_file):
            raise ExecutionError("Duplicate row detected during DML action")
        files = target.files([row.f for row in per_file])
        updated = sum(row.updated for row in per_file)
        deleted = sum(row.deleted for row in per_file)

    frames: list[DataFrame] = []
    if files:
        view = _rewrite_view(execution, target, files)
        row_action = (
            "CASE "
            + " ".join(f"WHEN {salias}.{MATCHED} AND {c.condition} THEN {c.number}" for c in matched)
            + " ELSE 0 END"
        )
        columns = []
        for field in target.schema.fields:
            current = f"{talias}.{_quoted(field.name)}"
            branches = [
                f"WHEN {salias}.{MATCHED} AND {c.condition} THEN {_checked_sql(c.values[field.name], field)}"
                for c in matched
                if field.name in c.values
            ]
            columns.append(
                f"CASE {' '.join(branches)} ELSE {current} END AS {_quoted(field.name)}" if branches else f"{current} AS {_quoted(field.name)}"
            )
        deletes = ", ".join(str(c.number) for c in matched if c.action == "DELETE") or "-1"
        frames.append(
            spark.sql(
                f"SELECT {', '.join(columns)}, {talias}.{ROW_ID} AS {ROW_ID} "
                f"FROM {view} AS {talias} "
                f"LEFT JOIN (SELECT *, TRUE AS {MATCHED} FROM {source_sql}) AS {salias} ON {on} "
                f"WHERE ({row_action}) NOT IN ({deletes})"
            )
        )
    if not_matched:
        omitted = sequences.MergeDefaults(execution, target.entry)
        columns = []
        for field in target.schema.fields:
            branches = [
                f"WHEN {c.condition} THEN {omitted.value(c, field, _checked_sql)}"
                for c in not_matched
            ]
            columns.append(f"CASE {' '.join(branches)} END AS {_quoted(field.name)}")
        columns += omitted.flag_columns(not_matched)
        any_insert = " OR ".join(c.condition for c in not_matched)
        inserts = spark.sql(
            f"SELECT {', '.join(columns)} FROM {source_sql} AS {salias} "
            f"LEFT ANTI JOIN {target.view} AS {talias} ON {on} WHERE {any_insert}"
        )
        frames.append(omitted.fill(inserts).withColumn(ROW_ID, new_row_id()))

    adds: list[DataFile] = []
    if frames:
        combined = frames[0]
        for frame in frames[1:]:
            combined = combined.unionByName(frame)
        adds = write_data_files(combined, target.entry.location, now=execution.now())
    written = sum(f.num_records for f in adds)
    kept = sum(f.num_records for f in files) - deleted
    inserted = written - kept
    _commit(
        execution,
        target,
        "MERGE",
        adds=adds,
        removes=files,
        parameters={"predicate": expression.args["on"].sql(dialect="snowflake")},
        metrics={
            "numTargetRowsInserted": inserted,
            "numTargetRowsUpdated": updated,
            "numTargetRowsDeleted": deleted,
            "numTargetRowsCopied": kept - updated,
        },
    )
    return results.counts(
        spark,
        [
            ("number of rows inserted", inserted),
            ("number of rows updated", updated),
            ("number of rows deleted", deleted),
        ],
    )


def _merge_clauses(
    expression: exp.Merge, target: Target, execution: Execution
) -> tuple[list[_Clause], list[_Clause]]:
    whens = expression.args.get("whens")
    matched: list[_Clause] = []
    not_matched: list[_Clause] = []
    for number, when in enumerate(whens.expressions if whens else [], start=1):
        if when.args.get("source"):
            raise UnsupportedStatementError("WHEN NOT MATCHED BY SOURCE")
        condition_node = when.args.get("condition")
        condition = f"COALESCE(({_sql(condition_node, execution)}), FALSE)" if condition_node else "TRUE"
        then = when.args["then"]
        if when.args.get("matched"):
            if isinstance(then, exp.Update):
                values = _assignments(then.expressions, target, execution)
                matched.append(_Clause(number, condition, "UPDATE", values))
            elif isinstance(then, exp.Var) and then.name.upper() == "DELETE":
                matched.append(_Clause(number, condition, "DELETE", {}))
            else:
                raise SqlCompilationError(f"invalid WHEN MATCHED action {then.sql(dialect='snowflake')}")
        else:
            if not isinstance(then, exp.Insert):
                raise SqlCompilationError(f"invalid WHEN NOT MATCHED action {then.sql(dialect='snowflake')}")
            not_matched.append(_Clause(number, condition, "INSERT", _insert_values(then, target, execution)))
    return matched, not_matched


def _insert_values(insert: exp.Insert, target: Target, execution: Execution) -> dict[str, str]:
    values_node = insert.expression
    values = values_node.expressions if isinstance(values_node, exp.Tuple) else [values_node]
    columns_node = insert.this
    if columns_node is None:
        names = target.schema.fieldNames()
    else:
        names = [target.field(c.name).name for c in (columns_node.expressions if isinstance(columns_node, exp.Tuple) else [columns_node])]
    if len(names) != len(values):
        raise SqlCompilationError(
            f"Insert value list does not match column list expecting {len(names)} but got {len(values)}"
        )
    return {name: _sql(value, execution) for name, value in zip(names, values)}
