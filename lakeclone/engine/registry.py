"""Where features plug into the engine.

The engine parses, binds and runs statements; features (sequences,
constraints, clustering, clones, VACUUM, ...) live in packages of their own
and register here what they add: statements, CREATE and SHOW kinds, table
definition parts, and hooks that run at fixed points of a statement. The
engine imports no feature, so there is no import cycle between them;
:mod:`lakeclone.features` imports every feature once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sqlglot import exp

if TYPE_CHECKING:
    import re

    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from lakeclone.catalog.entries import ObjectKind
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog, SchemaEntry, TableEntry
    from lakeclone.delta.statements import Merge
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables

Handler = Callable[["Execution"], "DataFrame"]
ShowHandler = Callable[["Execution", "re.Pattern[str] | None"], "DataFrame"]


class TableDefinition(Protocol):
    """What a feature read from a CREATE TABLE, stored once the table has its catalog entry."""

    consumed: set[int]
    """``id()`` of the syntax nodes (column constraints, table elements, properties) it took care of."""

    def store(self, catalog: Catalog, entry: TableEntry) -> None: ...


DefinitionReader = Callable[["Execution", "QualifiedName", exp.Create, "list[exp.Expression]"], TableDefinition]


@dataclass(frozen=True)
class CloneEvent:
    """Tables (and, for a schema or database clone, schemas) one statement cloned, for features to copy their parts.

    Attributes:
        tables: (source table id, clone table id) pairs.
        schemas: (source schema, new schema) pairs; empty for a single-table clone.
        existed: whether an object created at a given moment existed at the clone's point.
    """

    catalog: Catalog
    now: dt.datetime
    tables: Sequence[tuple[str, str]]
    schemas: Sequence[tuple[SchemaEntry, SchemaEntry]] = ()
    existed: Callable[[dt.datetime], bool] = lambda created_at: True
    remapped: dict[str, dict[str, str]] = field(default_factory=dict)
    """What earlier hooks cloned along, by kind (``"sequence"`` -> {source id: clone id})."""


class InsertDefaults(Protocol):
    """Fills the columns an INSERT leaves out from their defaults."""

    def __call__(
        self, execution: Execution, entry: TableEntry, schema: StructType, frame: DataFrame, names: list[str] | None
    ) -> tuple[DataFrame, list[str] | None]: ...


class MergeDefaults(Protocol):
    """Gives a MERGE's INSERT clauses the columns they leave out, from their defaults.

    Returns the MERGE with its source extended by any columns the defaults
    need and each INSERT clause's values completed. ``target`` is the target
    as the statement reads it (``delta.`<location>` VERSION AS OF n``).
    """

    def __call__(
        self, execution: Execution, entry: TableEntry, schema: StructType, target: str, merge: Merge
    ) -> Merge: ...


RelationResolver = Callable[["Tables", exp.Table, "QualifiedName"], "exp.Expression | None"]
"""Binds a name that is not a table (a view, a stream): the relation, bound, to put in the reference's place, or None."""

STATEMENTS: dict[type[exp.Expression], Handler] = {}
"""Statement handlers by the expression class the parser builds."""

CREATORS: dict[str, Handler] = {}
"""``CREATE <kind>`` handlers beyond databases, schemas and tables (``SEQUENCE``)."""

DROPPERS: dict[str, Callable[[Execution, exp.Table], tuple[str, str, object | None]]] = {}
"""``DROP <kind>`` inside DROP's catalog transaction: (name for messages, label, the dropped entry or None)."""

SHOWS: dict[str, ShowHandler] = {}
"""``SHOW <what>`` handlers beyond databases, schemas and tables."""

DESCRIBES: dict[str, Handler] = {}
"""``DESCRIBE <kind>`` handlers beyond tables (``VIEW``)."""

RENAMES: dict[str, Callable[[Execution, exp.Table, exp.Table], None]] = {}
"""``ALTER <kind> old RENAME TO new`` beyond tables, schemas and databases, inside ALTER's catalog transaction."""

PARAMETER_OWNERS: dict[ObjectKind, Callable[[Execution, exp.Table], str]] = {}
"""The id of a feature's object whose parameters ``ALTER <kind> x SET|UNSET`` changes; ObjectNotFoundError if none."""

NAME_TAKEN: list[Callable[[Catalog, QualifiedName], bool]] = []
"""Whether a feature's object (a view) holds a name that tables share with it.

Asked wherever a table takes a name (CREATE, CLONE, RENAME, UNDROP), so that
the engine refuses the name without knowing the feature.
"""

TABLE_DEFINITIONS: list[DefinitionReader] = []
"""Readers of the parts of CREATE TABLE a feature owns (defaults, constraints, clustering keys)."""

COLUMN_ATTRIBUTES: list[Callable[[Catalog, str], Mapping[str, Mapping[str, str | None]]]] = []
"""DESCRIBE TABLE's per-column attributes a feature supplies: column (upper) -> {attribute: value}."""

TABLE_ATTRIBUTES: list[Callable[[Catalog, str], Mapping[str, Any]]] = []
"""SHOW TABLES' and DESCRIBE DETAIL's per-table attributes a feature supplies."""

CLONE_HOOKS: list[Callable[[CloneEvent], None]] = []
"""Run inside a clone's catalog transaction, in registration order."""

AFTER_DML: list[Callable[[Execution, TableEntry], None]] = []
"""Run after a DML statement's commit, on the table it wrote (automatic clustering)."""

# Checks DROP … RESTRICT runs on the tables it would drop; each raises if something else depends on them.
DROP_RESTRICTIONS: list[Callable[[Execution, list[TableEntry]], None]] = []

RELATIONS: list[RelationResolver] = []
"""Tried in order when a query names something that is not a live table."""

PURGES: list[Callable[[Execution], None]] = []
"""Run after DROP and VACUUM (the purge of dropped tables whose UNDROP window has passed)."""


@dataclass
class Slots:
    """Features that fill a single slot rather than a list."""

    clone: Handler | None = None
    insert_defaults: InsertDefaults | None = None
    merge_defaults: MergeDefaults | None = None


SLOTS = Slots()


def statement(*kinds: type[exp.Expression]) -> Callable[[Handler], Handler]:
    """Register a handler for the statements the parser builds as ``kinds``."""

    def register(handler: Handler) -> Handler:
        for kind in kinds:
            STATEMENTS[kind] = handler
        return handler

    return register
