"""Column defaults and informational constraints of CREATE TABLE, and what SHOW and clones do with them.

As in Snowflake, PRIMARY KEY, UNIQUE and FOREIGN KEY constraints are
recorded but not enforced. They live in the catalog by table id; a foreign
key names its referenced table by id too, so renaming either table keeps the
link. A foreign key whose referenced table is no longer live is not shown.

Clones copy a table's defaults, constraints and clustering key. References
follow Snowflake's rule: a sequence or referenced table cloned by the same
statement is replaced by its clone; anything outside what was cloned stays
the original.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.names import QualifiedName
from lakeclone.catalog.store import ColumnDefault, ConstraintEntry, TableEntry
from lakeclone.delta.log import DeltaLog
from lakeclone.engine import results, sequences
from lakeclone.engine.tables import spark_schema
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    import datetime as dt

    from pyspark.sql import DataFrame

    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution

PRIMARY_KEY, UNIQUE, FOREIGN_KEY = "PRIMARY KEY", "UNIQUE", "FOREIGN KEY"

PRIMARY_KEYS_SCHEMA = (
    "created_on TIMESTAMP, database_name STRING, schema_name STRING, table_name STRING, "
    "column_name STRING, key_sequence BIGINT, constraint_name STRING, rely STRING, comment STRING"
)
IMPORTED_KEYS_SCHEMA = (
    "created_on TIMESTAMP, pk_database_name STRING, pk_schema_name STRING, pk_table_name STRING, "
    "pk_column_name STRING, fk_database_name STRING, fk_schema_name STRING, fk_table_name STRING, "
    "fk_column_name STRING, key_sequence BIGINT, update_rule STRING, delete_rule STRING, "
    "fk_name STRING, pk_name STRING, deferrability STRING, rely STRING, comment STRING"
)


@dataclass(frozen=True)
class _Pending:
    """A constraint read from CREATE TABLE, its referenced table resolved (None: the table itself)."""

    name: str
    kind: str
    columns: tuple[str, ...]
    ref_table: TableEntry | None = None
    ref_columns: tuple[str, ...] = ()


@dataclass
class TableDefinition:
    """What CREATE TABLE's element list says beyond the columns' names and types."""

    columns: list[exp.Expression] | None
    defaults: list[ColumnDefault] = field(default_factory=list)
    constraints: list[_Pending] = field(default_factory=list)

    def store(self, catalog: Catalog, entry: TableEntry) -> None:
        """Record the defaults and constraints of the just-created ``entry`` (inside its transaction)."""
        for default in self.defaults:
            catalog.set_column_default(entry.id, default)
        for pending in self.constraints:
            ref_id = None
            if pending.kind == FOREIGN_KEY:
                ref_id = pending.ref_table.id if pending.ref_table is not None else entry.id
            catalog.add_constraint(
                ConstraintEntry(
                    entry.id, pending.name, pending.kind, pending.columns, entry.created_at,
                    ref_id, pending.ref_columns,
                )
            )


def table_definition(
    execution: Execution, name: QualifiedName, elements: list[exp.Expression] | None
) -> TableDefinition:
    """Split CREATE TABLE's elements into column definitions, defaults and constraints.

    Raises:
        SqlCompilationError: a constraint names an unknown column, a referenced table
            or key does not exist, or a default is not a constant or a sequence's NEXTVAL.
    """
    if not elements:
        return TableDefinition(elements)
    columns: list[exp.Expression] = [e for e in elements if isinstance(e, exp.ColumnDef)]
    upper = {c.name.upper(): c.name for c in columns}
    definition = TableDefinition(columns)
    raw: list[tuple[str | None, exp.Expression, list[str]]] = []  # (name, node, column names)
    for column in columns:
        for constraint in column.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            label = constraint.name or None
            if isinstance(kind, exp.DefaultColumnConstraint):
                definition.defaults.append(sequences.default_of(execution, column.name, kind.this))
            elif isinstance(kind, (exp.PrimaryKeyColumnConstraint, exp.UniqueColumnConstraint, exp.Reference)):
                raw.append((label, kind, [column.name]))
    for element in elements:
        if isinstance(element, exp.ColumnDef):
            continue
        label = None
        if isinstance(element, exp.Constraint) and len(element.expressions) == 1:
            label, element = element.name, element.expressions[0]
        if isinstance(element, (exp.PrimaryKey, exp.ForeignKey)):
            raw.append((label, element, [_column_name(e) for e in element.expressions]))
        elif isinstance(element, exp.UniqueColumnConstraint) and isinstance(element.this, exp.Schema):
            raw.append((label, element, [_column_name(e) for e in element.this.expressions]))
        else:
            raise SqlCompilationError(f"unsupported table element {element.sql(dialect='snowflake')}")

    own_keys: list[tuple[str, tuple[str, ...]]] = []
    foreign: list[tuple[str | None, exp.Expression, tuple[str, ...]]] = []
    for label, node, names in raw:
        resolved = []
        for key in names:
            if key.upper() not in upper:
                raise SqlCompilationError(f"invalid identifier '{key}'")
            resolved.append(upper[key.upper()])
        keys = tuple(resolved)
        if isinstance(node, (exp.PrimaryKey, exp.PrimaryKeyColumnConstraint)):
            if any(kind == PRIMARY_KEY for kind, _ in own_keys):
                raise SqlCompilationError(f"Table '{name.name}' cannot have more than one primary key.")
            own_keys.append((PRIMARY_KEY, keys))
            definition.constraints.append(_Pending(label or _system_name(), PRIMARY_KEY, keys))
        elif isinstance(node, exp.UniqueColumnConstraint):
            own_keys.append((UNIQUE, keys))
            definition.constraints.append(_Pending(label or _system_name(), UNIQUE, keys))
        else:
            foreign.append((label, node, keys))
    for label, node, keys in foreign:
        reference = node if isinstance(node, exp.Reference) else node.args["reference"]
        definition.constraints.append(
            _foreign_key(execution, name, label, keys, reference, own_keys, list(upper.values()))
        )
    labels = [c.name for c in definition.constraints]
    if len(set(labels)) != len(labels):
        duplicate = next(n for n in labels if labels.count(n) > 1)
        raise SqlCompilationError(f"Constraint '{duplicate}' is defined more than once.")
    return definition


def _column_name(node: exp.Expression) -> str:
    if isinstance(node, (exp.Identifier, exp.Column)):
        return node.name
    raise SqlCompilationError(f"invalid key column {node.sql(dialect='snowflake')}")


def _system_name() -> str:
    return f"SYS_CONSTRAINT_{uuid.uuid4()}"


def _foreign_key(
    execution: Execution,
    name: QualifiedName,
    label: str | None,
    keys: tuple[str, ...],
    reference: exp.Reference,
    own_keys: list[tuple[str, tuple[str, ...]]],
    own_columns: list[str],
) -> _Pending:
    target = reference.this
    ref_names: list[str] = []
    if isinstance(target, exp.Schema):
        ref_names = [_column_name(e) for e in target.expressions]
        target = target.this
    ref_name = execution.tables.name(target)
    if ref_name == name:
        ref_entry, ref_keys, ref_columns = None, own_keys, own_columns
    else:
        ref_entry = execution.catalog.table(ref_name.database, ref_name.schema, ref_name.name)
        if ref_entry is None:
            raise ObjectNotFoundError(str(ref_name))
        ref_keys = [(c.kind, c.columns) for c in execution.catalog.constraints(ref_entry.id) if c.kind != FOREIGN_KEY]
        ref_columns = spark_schema(DeltaLog(ref_entry.location).snapshot()).fieldNames()
    if not ref_names:
        primary = [columns for kind, columns in ref_keys if kind == PRIMARY_KEY]
        if not primary:
            raise SqlCompilationError(f"Table '{ref_name}' has no primary key for the foreign key to reference.")
        resolved = primary[0]
    else:
        upper = {c.upper(): c for c in ref_columns}
        missing = [c for c in ref_names if c.upper() not in upper]
        if missing:
            raise SqlCompilationError(f"invalid identifier '{missing[0]}'")
        resolved = tuple(upper[c.upper()] for c in ref_names)
    if len(resolved) != len(keys):
        raise SqlCompilationError("The number of columns in the foreign key does not match the referenced key.")
    if not any(set(columns) == set(resolved) for _, columns in ref_keys):
        raise SqlCompilationError(
            f"Cannot find a primary or unique key on ({', '.join(resolved)}) in table '{ref_name}' "
            "for the foreign key to reference."
        )
    return _Pending(label or _system_name(), FOREIGN_KEY, keys, ref_entry, tuple(resolved))


# DESCRIBE and SHOW ---------------------------------------------------------------------


def key_columns(catalog: Catalog, table_id: str) -> tuple[set[str], set[str]]:
    """The upper-cased columns in a table's primary key, and those in a unique key."""
    primary: set[str] = set()
    unique: set[str] = set()
    for constraint in catalog.constraints(table_id):
        if constraint.kind == PRIMARY_KEY:
            primary.update(c.upper() for c in constraint.columns)
        elif constraint.kind == UNIQUE:
            unique.update(c.upper() for c in constraint.columns)
    return primary, unique


def _scope_tables(execution: Execution, like: re.Pattern[str] | None) -> list[TableEntry]:
    expression = execution.expression
    scope = expression.args.get("scope")
    scope_kind = str(expression.args.get("scope_kind") or "").upper()
    if isinstance(scope, exp.Table) and scope_kind in ("TABLE", ""):
        return [execution.tables.entry(scope)]
    found = [t for s in sequences.scope_schemas(execution) for t in execution.catalog.tables(s)]
    return [t for t in found if like is None or like.match(t.name)]


def _live(catalog: Catalog, table_id: str | None) -> TableEntry | None:
    """The live table with this id, or None once it (or its schema or database) is dropped."""
    entry = catalog.table_by_id(table_id) if table_id else None
    if entry is None:
        return None
    current = catalog.table(entry.database, entry.schema, entry.name)
    return current if current is not None and current.id == entry.id else None


def show_primary_keys(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW PRIMARY KEYS [IN {TABLE t | SCHEMA s | DATABASE d}]``: one row per key column."""
    catalog = execution.catalog
    data = [
        (c.created_at, t.database, t.schema, t.name, column, position, c.name, "false", None)
        for t in _scope_tables(execution, like)
        for c in catalog.constraints(t.id)
        if c.kind == PRIMARY_KEY
        for position, column in enumerate(c.columns, start=1)
    ]
    return results.rows(execution.spark, PRIMARY_KEYS_SCHEMA, data)


def show_imported_keys(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW IMPORTED KEYS [IN ...]``: the foreign keys of the tables, one row per column pair."""
    catalog = execution.catalog
    data = []
    for table in _scope_tables(execution, like):
        for constraint in catalog.constraints(table.id):
            if constraint.kind != FOREIGN_KEY:
                continue
            referenced = _live(catalog, constraint.ref_table_id)
            if referenced is None:
                continue
            pk_name = next(
                (
                    c.name
                    for c in catalog.constraints(referenced.id)
                    if c.kind != FOREIGN_KEY and set(c.columns) == set(constraint.ref_columns)
                ),
                None,
            )
            for position, (fk_column, pk_column) in enumerate(
                zip(constraint.columns, constraint.ref_columns), start=1
            ):
                data.append(
                    (
                        constraint.created_at,
                        referenced.database, referenced.schema, referenced.name, pk_column,
                        table.database, table.schema, table.name, fk_column,
                        position, "NO ACTION", "NO ACTION", constraint.name, pk_name,
                        "NOT DEFERRABLE", "false", None,
                    )
                )
    return results.rows(execution.spark, IMPORTED_KEYS_SCHEMA, data)


# Clones --------------------------------------------------------------------------------


def copy_definitions(
    catalog: Catalog,
    pairs: Sequence[tuple[str, str]],
    *,
    now: dt.datetime,
    sequence_map: Mapping[str, str] | None = None,
) -> None:
    """Give each clone in ``pairs`` (source table id, clone table id) its source's definitions.

    Defaults, constraints and the clustering key are copied. A sequence in
    ``sequence_map`` or a referenced table among ``pairs`` is replaced by its
    clone; other references stay those of the source. Automatic clustering is
    suspended on every clone until ``ALTER TABLE ... RESUME RECLUSTER``.
    Runs inside the clone's catalog transaction.
    """
    tables = dict(pairs)
    sequence_map = sequence_map or {}
    for source_id, clone_id in pairs:
        for default in catalog.column_defaults(source_id):
            if default.sequence_id is not None:
                default = dataclasses.replace(
                    default, sequence_id=sequence_map.get(default.sequence_id, default.sequence_id)
                )
            catalog.set_column_default(clone_id, default)
        for constraint in catalog.constraints(source_id):
            ref = constraint.ref_table_id
            catalog.add_constraint(
                dataclasses.replace(
                    constraint,
                    table_id=clone_id,
                    ref_table_id=tables.get(ref, ref) if ref else None,
                    created_at=now,
                )
            )
        clustering = catalog.clustering(source_id)
        if clustering is not None:
            catalog.set_clustering(clone_id, clustering.keys, automatic=False)
