"""Sequences: CREATE/DROP/SHOW SEQUENCE, handing out values, and column defaults on insert.

A sequence lives in the catalog. Values are handed out in blocks under
SQLite's write lock (:meth:`Catalog.reserve_sequence_values`), so two sessions
never get the same value. A column ``DEFAULT s.NEXTVAL`` refers to its
sequence by id: renaming or cloning the schema around it does not change which
sequence a table draws from (a schema or database clone remaps it, see
:mod:`lakeclone.engine.constraints`).

An INSERT (or MERGE's WHEN NOT MATCHED THEN INSERT) that omits a column with a
NEXTVAL default first fixes its rows (a local checkpoint), counts them,
reserves one contiguous block of that many values and numbers the rows. The
extra pass is paid only when such a default is actually needed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.names import schema_name
from lakeclone.catalog.store import ColumnDefault, SchemaEntry, SequenceEntry
from lakeclone.engine import results
from lakeclone.engine.objects import require_database, require_schema, value_of
from lakeclone.errors import ObjectExistsError, ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    import datetime as dt

    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructField, StructType

    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.executor import Execution

NEXTVAL = "NEXTVAL"

SHOW_SCHEMA = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, "
    "next_value BIGINT, interval BIGINT, comment STRING"
)


# Statements ------------------------------------------------------------------------


def create_sequence(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] SEQUENCE [IF NOT EXISTS] s [START [WITH] n] [INCREMENT [BY] n]``."""
    expression = execution.expression
    name = execution.tables.name(expression.this)
    start, increment, comment = 1, 1, ""
    properties = expression.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.SequenceProperties):
            unsupported = [k for k, v in prop.args.items() if v and k not in ("start", "increment")]
            if unsupported:
                raise SqlCompilationError(f"unsupported sequence option {unsupported[0].upper()}")
            if prop.args.get("start") is not None:
                start = _integer(prop.args["start"], "START")
            if prop.args.get("increment") is not None:
                increment = _integer(prop.args["increment"], "INCREMENT")
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = value_of(prop.this)
        else:
            raise SqlCompilationError(f"unsupported sequence option {prop.sql(dialect='snowflake')}")
    if increment == 0:
        raise SqlCompilationError("Sequence increment must not be zero.")
    catalog = execution.catalog
    with catalog.transaction():
        schema = require_schema(execution, name.database, name.schema)
        existing = catalog.sequence(name.database, name.schema, name.name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name.name)
            catalog.drop_sequence(existing, execution.now())
        catalog.create_sequence(
            schema, name.name, start=start, increment=increment, now=execution.now(), comment=comment
        )
    return results.status(execution.spark, f"Sequence {name.name} successfully created.")


def _integer(node: exp.Expression, option: str) -> int:
    negative = isinstance(node, exp.Neg)
    literal = node.this if negative else node
    if not isinstance(literal, exp.Literal) or literal.is_string or not re.fullmatch(r"\d+", str(literal.this)):
        raise SqlCompilationError(f"{option} must be an integer")
    value = int(literal.this)
    return -value if negative else value


def drop_sequence(execution: Execution, target: exp.Table) -> tuple[str, str, SequenceEntry | None]:
    """Drop a sequence inside DROP's transaction: (its name for messages, its label, the entry)."""
    name = execution.tables.name(target)
    entry = execution.catalog.sequence(name.database, name.schema, name.name)
    if entry is not None:
        execution.catalog.drop_sequence(entry, execution.now())
    return str(name), name.name, entry


def show_sequences(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW SEQUENCES [LIKE 'p'] [IN {SCHEMA s | DATABASE d}]``."""
    catalog = execution.catalog
    data = [
        (
            q.created_at,
            q.name,
            q.database,
            q.schema,
            q.next_value,
            q.increment,
            q.comment,
        )
        for schema in scope_schemas(execution)
        for q in catalog.sequences(schema)
        if like is None or like.match(q.name)
    ]
    return results.rows(execution.spark, SHOW_SCHEMA, data)


def scope_schemas(execution: Execution) -> list[SchemaEntry]:
    """The schemas a SHOW's ``IN SCHEMA s`` / ``IN DATABASE d`` names; else the current database's."""
    catalog = execution.catalog
    expression = execution.expression
    scope = expression.args.get("scope")
    scope_kind = str(expression.args.get("scope_kind") or "").upper()
    if isinstance(scope, exp.Table) and scope_kind == "DATABASE":
        return catalog.schemas(require_database(execution, scope.name))
    if isinstance(scope, exp.Table):
        database, name = schema_name(scope, database=execution.session.database)
        schema = catalog.schema(database, name)
        if schema is None:
            raise ObjectNotFoundError(f"{database}.{name}", "Schema")
        return [schema]
    current = catalog.database(execution.session.database or "")
    return catalog.schemas(current) if current else []


# Column defaults ----------------------------------------------------------------------


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
    if node.find(exp.Column, exp.Select, exp.Subquery):
        raise SqlCompilationError(
            f"Invalid column default expression [{node.sql(dialect='snowflake')}]: "
            "only constants and a sequence's NEXTVAL are allowed"
        )
    return ColumnDefault(column, expression=node.sql(dialect="snowflake"))


def describe_default(catalog: Catalog, default: ColumnDefault | None) -> str | None:
    """A default as DESCRIBE TABLE shows it: ``DB.S.SEQ.NEXTVAL`` or the constant's text."""
    if default is None:
        return None
    if default.sequence_id is not None:
        sequence = catalog.sequence_by_id(default.sequence_id)
        return f"{sequence.qualified}.{NEXTVAL}" if sequence else None
    return default.expression


def defaults_by_column(catalog: Catalog, table_id: str) -> dict[str, ColumnDefault]:
    return {d.column.upper(): d for d in catalog.column_defaults(table_id)}


def constant_sql(default: ColumnDefault) -> str:
    """A constant default as Spark SQL."""
    import sqlglot

    assert default.expression is not None
    return sqlglot.parse_one(default.expression, read="snowflake").sql(dialect="spark")


def reserve(catalog: Catalog, entry: TableEntry, default: ColumnDefault, count: int) -> tuple[int, int]:
    """``count`` consecutive values of a default's sequence: (first, increment)."""
    assert default.sequence_id is not None
    if not catalog.sequence_is_live(default.sequence_id):
        raise SqlCompilationError(
            f"Sequence used as a default value in table '{entry.name}' column '{default.column}' "
            "was not found or could not be accessed."
        )
    return catalog.reserve_sequence_values(default.sequence_id, count)


def with_insert_defaults(
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
        (field.name, defaults[field.name.upper()])
        for field in schema.fields
        if field.name.upper() in defaults and field.name.upper() not in given
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
    columns: dict[str, ColumnDefault],
    *,
    needed: dict[str, str] | None = None,
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
        first, increment = reserve(execution.catalog, entry, default, count) if count else (0, 0)
        value = F.lit(first) + (F.row_number().over(window) - 1) * F.lit(increment)
        if flag is not None:
            value = F.when(F.col(flag), value)
        frame = frame.withColumn(column, value.cast("bigint"))
    return frame.drop(order)


# Clones ---------------------------------------------------------------------------------


def clone_sequences(
    catalog: Catalog,
    source: SchemaEntry,
    target: SchemaEntry,
    *,
    now: dt.datetime,
    existed: Callable[[dt.datetime], bool] = lambda created_at: True,
) -> dict[str, str]:
    """Clone the live sequences of ``source`` into ``target``: {source sequence id: clone id}.

    Each clone continues from its source's next value as it is now (sequences
    have no history), and from then on the two hand out values independently.
    Runs inside the clone's catalog transaction.
    """
    cloned = {}
    for sequence in catalog.sequences(source):
        if not existed(sequence.created_at):
            continue
        clone = catalog.create_sequence(
            target,
            sequence.name,
            start=sequence.next_value,
            increment=sequence.increment,
            now=now,
            comment=sequence.comment,
            source_id=sequence.id,
        )
        cloned[sequence.id] = clone.id
    return cloned


class MergeDefaults:
    """Defaults for the columns a MERGE's ``WHEN NOT MATCHED THEN INSERT`` clauses omit.

    :meth:`value` gives each clause's value for a column; a NEXTVAL default is a
    NULL placeholder plus a flag column (:meth:`flag_columns`) marking the rows
    that need a value, which :meth:`fill` numbers once the rows are known.
    """

    def __init__(self, execution: Execution, entry: TableEntry) -> None:
        self.execution = execution
        self.entry = entry
        self.defaults = defaults_by_column(execution.catalog, entry.id)
        # column -> (its field, the numbers of the clauses that omit it)
        self.sequenced: dict[str, tuple[StructField, set[int]]] = {}

    def value(self, clause: Any, field: StructField, checked: Callable[[str, StructField], str]) -> str:
        if field.name in clause.values:
            return checked(clause.values[field.name], field)
        default = self.defaults.get(field.name.upper())
        if default is None:
            return checked("NULL", field)
        if default.expression is not None:
            return checked(constant_sql(default), field)
        self.sequenced.setdefault(field.name, (field, set()))[1].add(clause.number)
        return f"CAST(NULL AS {field.dataType.simpleString()})"

    def flag_columns(self, clauses: list[Any]) -> list[str]:
        """``CASE`` columns, one per sequenced column, true for the rows whose clause omits it."""
        columns = []
        for index, (_, numbers) in enumerate(self.sequenced.values()):
            branches = " ".join(
                f"WHEN {c.condition} THEN {'TRUE' if c.number in numbers else 'FALSE'}" for c in clauses
            )
            columns.append(f"CASE {branches} END AS _lc_need_{index}")
        return columns

    def fill(self, frame: DataFrame) -> DataFrame:
        """Draw the sequenced columns' values for the rows flagged as needing them."""
        from pyspark.sql import functions as F

        if not self.sequenced:
            return frame
        columns = {
            f"_lc_next_{i}": self.defaults[name.upper()] for i, name in enumerate(self.sequenced)
        }
        needed = {f"_lc_next_{i}": f"_lc_need_{i}" for i in range(len(self.sequenced))}
        frame = number_rows(self.execution, self.entry, frame, columns, needed=needed)
        for index, (name, (field, _)) in enumerate(self.sequenced.items()):
            value = F.when(F.col(f"_lc_need_{index}"), F.col(f"_lc_next_{index}").cast(field.dataType))
            frame = frame.withColumn(name, value.otherwise(F.col(f"`{name}`")))
            frame = frame.drop(f"_lc_need_{index}", f"_lc_next_{index}")
        return frame
