"""ALTER TABLE's column actions: ``ADD [COLUMN] [IF NOT EXISTS] c type [COMMENT '…'], …`` and
``ALTER | MODIFY [COLUMN] c COMMENT '…' | UNSET COMMENT | DROP NOT NULL | SET NOT NULL | DROP DEFAULT``.

A change of columns is one metadata commit of the table's whole new schema
(:func:`lakeclone.delta.transaction.commit_schema`): time travel reads each
version with the columns it had, and a new column is NULL in every row the
table held before. ``SET NOT NULL`` first checks that no row holds NULL there
(a concurrent write fails the commit rather than slip past the check).

What would rewrite the rows is refused with what to do instead: a new column
with a DEFAULT, NOT NULL or AUTOINCREMENT (Snowflake fills the existing rows;
here, add the column and UPDATE it). So are DROP COLUMN, RENAME COLUMN and a
change of type: Delta drops or renames a column only under column mapping, a
protocol upgrade that older readers of the table cannot follow.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.delta import transaction
from lakeclone.engine.schema import column_named, struct_from_columns
from lakeclone.errors import ExecutionError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql.types import StructField

    from lakeclone.catalog.entries import TableEntry
    from lakeclone.engine.executor import Execution

# What ADD COLUMN refuses, since it would fill the rows there are: the constraint, and the message's words for it.
_REWRITING = (
    (exp.DefaultColumnConstraint, "DEFAULT"),
    (exp.AutoIncrementColumnConstraint, "AUTOINCREMENT"),
    (exp.GeneratedAsIdentityColumnConstraint, "AUTOINCREMENT"),
)


def is_column_action(action: exp.Expression) -> bool:
    """Whether an ALTER TABLE action changes the table's columns (this module's) rather than its name."""
    return isinstance(action, (exp.ColumnDef, exp.AlterColumn, exp.RenameColumn)) or (
        isinstance(action, exp.Drop) and str(action.args.get("kind") or "").upper() == "COLUMN"
    )


def alter_columns(execution: Execution, target: exp.Table, actions: Sequence[exp.Expression]) -> None:
    """Add or change the columns of the table ``target`` names, as ``actions`` say: one metadata commit, or none.

    Raises:
        SqlCompilationError: a column that is there already (not IF NOT EXISTS) or is not, a change lakeclone refuses.
        ExecutionError: SET NOT NULL on a column that holds NULL.
    """
    from pyspark.sql.types import StructType

    tables = execution.tables
    entry = tables.entry(target)
    schema = tables.log(entry).schema(tables.current_version(entry))
    fields = list(schema.fields)
    made_not_null: list[str] = []
    for action in actions:
        if isinstance(action, exp.ColumnDef):
            fields = _added(fields, action)
        elif isinstance(action, exp.AlterColumn):
            fields = _altered(execution, entry, fields, action, made_not_null)
        else:
            word = "RENAME COLUMN" if isinstance(action, exp.RenameColumn) else "DROP COLUMN"
            raise SqlCompilationError(
                f"ALTER TABLE … {word} is not supported by lakeclone: Delta drops or renames a column only under "
                "column mapping, a protocol upgrade older readers of the table cannot follow."
            )
    if fields == list(schema.fields):
        return
    for column in made_not_null:
        _require_no_nulls(execution, entry, column)
    with execution.work.delta(target=entry.location):
        transaction.commit_schema(execution.delta, entry.location, StructType(fields), read_whole_table=bool(made_not_null))


def _added(fields: list[StructField], column: exp.ColumnDef) -> list[StructField]:
    name = column.name
    if column_named([f.name for f in fields], column.this) is not None:
        if column.args.get("exists"):
            return fields
        raise SqlCompilationError(f"ambiguous column name '{name}'")
    for constraint in column.args.get("constraints") or []:
        kind = constraint.kind
        for refused, word in _REWRITING:
            if isinstance(kind, refused):
                raise SqlCompilationError(
                    f"ADD COLUMN … {word} is not supported by lakeclone (column '{name}'): it would fill the rows the table "
                    f"holds; add the column, then UPDATE it."
                )
        if isinstance(kind, exp.NotNullColumnConstraint) and not kind.args.get("allow_null"):
            raise SqlCompilationError(
                f"Non-nullable column '{name}' cannot be added to a table: add it, fill it (UPDATE), then "
                f"ALTER COLUMN {name} SET NOT NULL."
            )
    (field,) = struct_from_columns([column]).fields
    return [*fields, field]


def _altered(
    execution: Execution, entry: TableEntry, fields: list[StructField], action: exp.AlterColumn, made_not_null: list[str]
) -> list[StructField]:
    from pyspark.sql.types import StructField

    name = column_named([f.name for f in fields], action.this)
    if name is None:
        raise SqlCompilationError(f"invalid identifier '{action.this.name}'")
    index = next(i for i, f in enumerate(fields) if f.name == name)
    field = fields[index]
    args = action.args
    if args.get("comment") is not None:
        comment = args["comment"].name
        metadata = {k: v for k, v in field.metadata.items() if k != "comment"} | ({"comment": comment} if comment else {})
        changed = StructField(field.name, field.dataType, field.nullable, metadata)
    elif args.get("allow_null") is True and args.get("drop"):
        changed = StructField(field.name, field.dataType, True, field.metadata)
    elif args.get("allow_null") is False:
        changed = StructField(field.name, field.dataType, False, field.metadata)
        if field.nullable:
            made_not_null.append(name)
    elif args.get("drop") and args.get("allow_null") is None:
        with execution.work.records():
            execution.catalog.definitions.drop_column_default(entry.id, name)
        return fields
    else:
        raise SqlCompilationError(
            f"{action.sql(dialect='snowflake')} is not supported by lakeclone: "
            "it changes a column's COMMENT and NOT NULL, and drops its DEFAULT."
        )
    return [*fields[:index], changed, *fields[index + 1 :]]


def _require_no_nulls(execution: Execution, entry: TableEntry, column: str) -> None:
    tables = execution.tables
    reference = tables.reference(entry, tables.current_version(entry)).sql(dialect="spark")
    quoted = "`" + column.replace("`", "``") + "`"
    if execution.spark.sql(f"SELECT 1 FROM {reference} WHERE {quoted} IS NULL LIMIT 1").take(1):
        raise ExecutionError(f"NULL result in a non-nullable column '{column}': it holds NULL in some rows.")
