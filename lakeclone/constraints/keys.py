"""Informational constraints of CREATE TABLE, and what SHOW, DESCRIBE and clones do with them.

As in Snowflake, PRIMARY KEY, UNIQUE and FOREIGN KEY constraints are
recorded but not enforced. They live in the catalog by table id; a foreign
key names its referenced table by id too, so renaming either table keeps the
link. A foreign key whose referenced table is no longer live is not shown.

Clones copy a table's constraints. References follow Snowflake's rule: a
referenced table cloned by the same statement is replaced by its clone; a
table outside what was cloned stays the original.
"""

from __future__ import annotations

import dataclasses
import re
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.entries import ConstraintEntry, ConstraintKind, ObjectKind, TableEntry
from lakeclone.catalog.names import QualifiedName
from lakeclone.engine import registry, results
from lakeclone.engine.show import scope_schemas
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.registry import CloneEvent

PRIMARY_KEY, UNIQUE, FOREIGN_KEY = ConstraintKind.PRIMARY_KEY, ConstraintKind.UNIQUE, ConstraintKind.FOREIGN_KEY

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
    kind: ConstraintKind
    columns: tuple[str, ...]
    ref_table: TableEntry | None = None
    ref_columns: tuple[str, ...] = ()


@dataclass
class Constraints:
    """The constraints a CREATE TABLE declares, stored once the table exists."""

    constraints: list[_Pending] = field(default_factory=list)
    consumed: set[int] = field(default_factory=set)

    def store(self, catalog: Catalog, entry: TableEntry) -> None:
        """Record the constraints of the just-created ``entry`` (inside its transaction)."""
        for pending in self.constraints:
            ref_id = None
            if pending.kind == FOREIGN_KEY:
                ref_id = pending.ref_table.id if pending.ref_table is not None else entry.id
            catalog.definitions.add_constraint(
                ConstraintEntry(
                    entry.id,
                    pending.name,
                    pending.kind,
                    pending.columns,
                    entry.created_at,
                    ref_id,
                    pending.ref_columns,
                )
            )


def read_constraints(
    execution: Execution, name: QualifiedName, create: exp.Create, elements: list[exp.Expression]
) -> Constraints:
    """The PRIMARY KEY, UNIQUE and FOREIGN KEY constraints of CREATE TABLE's columns and elements.

    Raises:
        SqlCompilationError: a constraint names an unknown column, or a referenced
            table or key does not exist.
    """
    definition = Constraints()
    if not elements:
        return definition
    columns: list[exp.Expression] = [e for e in elements if isinstance(e, exp.ColumnDef)]
    upper = {c.name.upper(): c.name for c in columns}
    raw: list[tuple[str | None, exp.Expression, list[str]]] = []  # (name, node, column names)
    for column in columns:
        for constraint in column.args.get("constraints") or []:
            kind = constraint.args.get("kind")
            label = constraint.name or None
            if isinstance(kind, (exp.PrimaryKeyColumnConstraint, exp.UniqueColumnConstraint, exp.Reference)):
                raw.append((label, kind, [column.name]))
                definition.consumed.add(id(constraint))
    for original in elements:
        if isinstance(original, exp.ColumnDef):
            continue
        label, element = None, original
        if isinstance(element, exp.Constraint) and len(element.expressions) == 1:
            label, element = element.name, element.expressions[0]
        if isinstance(element, (exp.PrimaryKey, exp.ForeignKey)):
            raw.append((label, element, [_column_name(e) for e in element.expressions]))
            definition.consumed.add(id(original))
        elif isinstance(element, exp.UniqueColumnConstraint) and isinstance(element.this, exp.Schema):
            raw.append((label, element, [_column_name(e) for e in element.this.expressions]))
            definition.consumed.add(id(original))

    own_keys: list[tuple[ConstraintKind, tuple[str, ...]]] = []
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
        definition.constraints.append(_foreign_key(execution, name, label, keys, reference, own_keys, list(upper.values())))
    labels = [c.name for c in definition.constraints]
    if len(set(labels)) != len(labels):
        duplicate = next(n for n in labels if labels.count(n) > 1)
        raise SqlCompilationError(f"Constraint '{duplicate}' is defined more than once.")
    return definition


def _column_name(node: exp.Expression) -> str:
    if isinstance(node, (exp.Identifier, exp.Column)):
        return node.name
    raise SqlCompilationError(f"invalid key column {node.sql(dialect='snowflake')}")


SYSTEM_NAME_PREFIX = "SYS_CONSTRAINT_"


def _system_name() -> str:
    return f"{SYSTEM_NAME_PREFIX}{uuid.uuid4()}"


def _foreign_key(
    execution: Execution,
    name: QualifiedName,
    label: str | None,
    keys: tuple[str, ...],
    reference: exp.Reference,
    own_keys: list[tuple[ConstraintKind, tuple[str, ...]]],
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
        ref_entry = execution.catalog.objects.table(ref_name.database, ref_name.schema, ref_name.name)
        if ref_entry is None:
            raise ObjectNotFoundError(str(ref_name))
        ref_keys = [(c.kind, c.columns) for c in execution.catalog.definitions.constraints(ref_entry.id) if c.kind != FOREIGN_KEY]
        ref_columns = execution.tables.log(ref_entry).schema().fieldNames()
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


def key_columns(catalog: Catalog, table_id: str) -> dict[str, dict[str, str | None]]:
    """DESCRIBE TABLE's ``primary key`` and ``unique key`` columns: Y for the columns in such a key."""
    described: dict[str, dict[str, str | None]] = {}
    for constraint in catalog.definitions.constraints(table_id):
        attribute = {PRIMARY_KEY: "primary key", UNIQUE: "unique key"}.get(constraint.kind)
        if attribute is not None:
            for column in constraint.columns:
                described.setdefault(column.upper(), {})[attribute] = "Y"
    return described


def _scope_tables(execution: Execution, like: re.Pattern[str] | None) -> list[TableEntry]:
    expression = execution.expression
    scope = expression.args.get("scope")
    scope_kind = expression.args.get("scope_kind")
    if isinstance(scope, exp.Table) and (not scope_kind or ObjectKind.named(scope_kind) is ObjectKind.TABLE):
        return [execution.tables.entry(scope)]
    found = [t for s in scope_schemas(execution) for t in execution.catalog.objects.tables(s)]
    return [t for t in found if like is None or like.match(t.name)]


def _live(catalog: Catalog, table_id: str | None) -> TableEntry | None:
    """The live table with this id, or None once it (or its schema or database) is dropped."""
    entry = catalog.objects.table_by_id(table_id) if table_id else None
    if entry is None:
        return None
    current = catalog.objects.table(entry.database, entry.schema, entry.name)
    return current if current is not None and current.id == entry.id else None


def show_primary_keys(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW PRIMARY KEYS [IN {TABLE t | SCHEMA s | DATABASE d}]``: one row per key column."""
    catalog = execution.catalog
    data = [
        (c.created_at, t.database, t.schema, t.name, column, position, c.name, "false", None)
        for t in _scope_tables(execution, like)
        for c in catalog.definitions.constraints(t.id)
        if c.kind == PRIMARY_KEY
        for position, column in enumerate(c.columns, start=1)
    ]
    return results.rows(execution.spark, PRIMARY_KEYS_SCHEMA, data)


def show_imported_keys(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW IMPORTED KEYS [IN ...]``: the foreign keys of the tables, one row per column pair."""
    catalog = execution.catalog
    data = []
    for table in _scope_tables(execution, like):
        for constraint in catalog.definitions.constraints(table.id):
            if constraint.kind != FOREIGN_KEY:
                continue
            referenced = _live(catalog, constraint.ref_table_id)
            if referenced is None:
                continue
            pk_name = next(
                (
                    c.name
                    for c in catalog.definitions.constraints(referenced.id)
                    if c.kind != FOREIGN_KEY and set(c.columns) == set(constraint.ref_columns)
                ),
                None,
            )
            for position, (fk_column, pk_column) in enumerate(
                zip(constraint.columns, constraint.ref_columns, strict=True), start=1
            ):
                data.append(
                    (
                        constraint.created_at,
                        referenced.database,
                        referenced.schema,
                        referenced.name,
                        pk_column,
                        table.database,
                        table.schema,
                        table.name,
                        fk_column,
                        position,
                        "NO ACTION",
                        "NO ACTION",
                        constraint.name,
                        pk_name,
                        "NOT DEFERRABLE",
                        "false",
                        None,
                    )
                )
    return results.rows(execution.spark, IMPORTED_KEYS_SCHEMA, data)


# DROP … RESTRICT ----------------------------------------------------------------------


def refuse_referenced(execution: Execution, dropped: list[TableEntry]) -> None:
    """Refuse to drop tables a live table outside the drop references by a foreign key."""
    catalog = execution.catalog
    leaving = {t.id for t in dropped}
    for table in dropped:
        for constraint in catalog.definitions.references_to(table.id):
            referencing = _live(catalog, constraint.table_id)
            if referencing is not None and referencing.id not in leaving:
                raise SqlCompilationError(
                    f"Cannot drop table '{table.name}' with RESTRICT: foreign key '{constraint.name}' "
                    f"of table '{referencing.database}.{referencing.schema}.{referencing.name}' references it."
                )


# Clones --------------------------------------------------------------------------------


def clone_constraints(event: CloneEvent) -> None:
    """Give each clone its source's constraints; a foreign key to a table cloned along points at the clone."""
    catalog = event.catalog
    tables = dict(event.tables)
    for source_id, clone_id in event.tables:
        for constraint in catalog.definitions.constraints(source_id):
            ref = constraint.ref_table_id
            catalog.definitions.add_constraint(
                dataclasses.replace(
                    constraint,
                    table_id=clone_id,
                    ref_table_id=tables.get(ref, ref) if ref else None,
                    created_at=event.now,
                )
            )


def ddl_constraints(catalog: Catalog, entry: TableEntry) -> list[str]:
    """A table's constraints as its DDL writes them: ``constraint <name> primary key (ID)``, a foreign key's table qualified.

    A system-named constraint is written without its name, which a new table makes anew.
    """
    elements = []
    for constraint in catalog.definitions.constraints(entry.id):
        columns = ", ".join(constraint.columns)
        named = "" if constraint.name.startswith(SYSTEM_NAME_PREFIX) else f"constraint {constraint.name} "
        element = f"{named}{constraint.kind.value.lower()} ({columns})"
        if constraint.kind is FOREIGN_KEY:
            referenced = catalog.objects.table_by_id(constraint.ref_table_id or "")
            if referenced is None or referenced.dropped_at is not None:
                continue
            element += f" references {referenced.qualified} ({', '.join(constraint.ref_columns)})"
        elements.append(element)
    return elements


registry.TABLE_DEFINITIONS.append(read_constraints)
registry.TABLE_DDL_ELEMENTS.append(ddl_constraints)
registry.COLUMN_ATTRIBUTES.append(key_columns)
registry.CLONE_HOOKS.append(clone_constraints)
registry.DROP_RESTRICTIONS.append(refuse_referenced)
registry.SHOWS["PRIMARY KEYS"] = show_primary_keys
registry.SHOWS["IMPORTED KEYS"] = show_imported_keys
