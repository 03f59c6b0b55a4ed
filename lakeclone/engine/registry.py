"""Where features plug into the engine.

The engine parses, binds and runs statements; features (sequences,
constraints, clustering, clones, VACUUM, ...) live in packages of their own
and register here what they add: statements (each with its bind, which
resolves its names and says what it needs on the objects they hold, and its
run), CREATE and SHOW kinds, table
definition parts, and hooks that run at fixed points of a statement. The
engine imports no feature, so there is no import cycle between them;
:mod:`lakeclone.features` imports every feature once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sqlglot import exp

if TYPE_CHECKING:
    import re

    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

    from lakeclone.catalog.entries import ObjectKind, ViewEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog, SchemaEntry, TableEntry
    from lakeclone.delta.statements import Merge
    from lakeclone.engine.context import OpenTransaction
    from lakeclone.engine.executor import Execution, Executor
    from lakeclone.engine.privileges import Requirement
    from lakeclone.engine.tables import Tables

Handler = Callable[["Execution"], "DataFrame"]
Binder = Callable[["Tables", exp.Expression], "Iterable[Requirement | None]"]
"""Resolves each name a statement uses, yielding what the statement needs on the object it holds (None for a
name that holds nothing): see :mod:`lakeclone.engine.needs`."""
QueryType = str | Callable[[exp.Expression], str]
"""Snowflake's QUERY_TYPE of a kind of statement, or how to tell it from the statement (``CREATE_TABLE_AS_SELECT``)."""
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

    def __call__(self, execution: Execution, entry: TableEntry, schema: StructType, target: str, merge: Merge) -> Merge: ...


RelationResolver = Callable[["Tables", exp.Table, "QualifiedName"], "exp.Expression | None"]
"""Binds a name that is not a table (a view, a stream): the relation, bound, to put in the reference's place, or None."""


@dataclass(frozen=True)
class Statement:
    """A kind of statement, as the feature that owns it registers it.

    Attributes:
        bind: resolves the names the statement uses and yields what it needs on
            the objects they hold, which the session's role is checked for
            before anything else runs; the statement's run finds each name
            holding the object it held then (see
            :meth:`~lakeclone.catalog.db.CatalogConnection.names_held`).
        run: runs it, inside the statement's unit of work.
        query_type: what the query history calls it.
    """

    bind: Binder
    run: Handler
    query_type: QueryType


STATEMENTS: dict[type[exp.Expression], Statement] = {}
"""Statements by the expression class the parser builds."""


@dataclass(frozen=True)
class SchemaObject:
    """One kind of schema object a feature owns (a view, a stream, a sequence, a stage, a file format).

    The catalog keeps each kind's objects (:meth:`SchemaObjectStore.named`
    finds one by name); the engine's generic statements serve every kind from
    this one record: DROP (:func:`lakeclone.engine.objects.drop_object`),
    CREATE's OR REPLACE and IF NOT EXISTS (:func:`lakeclone.engine.objects.make_room`),
    SHOW, and ALTER … RENAME and SET/UNSET where the kind has them.
    Databases, schemas and tables are the engine's own.

    Attributes:
        kind: what it is.
        plural: what SHOW calls the kind's objects (``FILE FORMATS``).
        columns: SHOW's columns (a Spark schema's DDL).
        row: SHOW's row for one object.
        create: ``CREATE <kind>``; None where the kind's CREATE is a statement of its own (CREATE STREAM).
        rename: ``ALTER <kind> old RENAME TO new``, inside ALTER's records.
        shares_table_names: whether it takes its names from the tables'
            namespace: a query reads tables, views and streams by name alike,
            so no two of them hold one name in a schema.
        takes_parameters: whether ``ALTER <kind> x SET|UNSET`` sets parameters on it (COMMENT, CHANGE_TRACKING).
    """

    kind: ObjectKind
    plural: str
    columns: str
    row: Callable[[Execution, Any], tuple[Any, ...]]
    create: Handler | None = None
    rename: Callable[[Execution, exp.Table, exp.Table], None] | None = None
    shares_table_names: bool = False
    takes_parameters: bool = False


SCHEMA_OBJECTS: dict[ObjectKind, SchemaObject] = {}
"""The kinds of schema object features own, by kind: see :class:`SchemaObject`."""


def schema_object(record: SchemaObject) -> SchemaObject:
    """Register a kind of schema object; each kind is registered once."""
    assert record.kind not in SCHEMA_OBJECTS, f"{record.kind.value} registered twice"
    SCHEMA_OBJECTS[record.kind] = record
    return record


SHOWS: dict[str, ShowHandler] = {}
"""``SHOW <what>`` handlers beyond databases, schemas and tables."""

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

Protector = Callable[["Tables", "QualifiedName", "exp.Expression", "Sequence[exp.Expression]"], "exp.Expression"]

PROTECTORS: list[Protector] = []
"""Run on each bound table, view or stream reference: the relation read through its policies (or unchanged).

Also given the conditions the statement puts on the relation's rows (compiler.own_predicates).
"""

TargetFilter = Callable[["Tables", "TableEntry", int, str], "exp.Expression | None"]

TARGET_FILTERS: list[TargetFilter] = []
"""A condition the rows an UPDATE or DELETE touches must meet, on its target (entry, version, alias): row access."""

TableClauseBinder = Callable[["Tables", exp.Table, "TableEntry"], "exp.Expression"]

TABLE_CLAUSES: dict[str, TableClauseBinder] = {}
"""Binders of a clause written after a table's name (``changes``: the CHANGES clause), by sqlglot's arg name."""


def _reads_nothing(call: exp.Anonymous) -> list[exp.Table]:
    return []


def _needs_nothing(tables: Tables, call: exp.Anonymous) -> Iterable[Requirement | None]:
    return ()


@dataclass(frozen=True)
class TableFunction:
    """A table function lakeclone binds itself.

    Attributes:
        bind: the call bound for the statement (a frame of rows, read through
            the policies of what it reads: see :func:`lakeclone.engine.compiler.protected`).
        reads: the relations a call reads, by the names it gives; the statement needs
            SELECT on each, as on a relation it names.
        reads_files: whether a call reads files by their URI, which needs what
            naming a stage's URL needs.
        needs: what a call needs beyond reading those (that the role sees the
            object whose policies it lists; the administrator's right to
            another user's statements), checked with the statement's other
            needs wherever the call is, in a view's definition too.
    """

    bind: Callable[[Tables, exp.Anonymous], exp.Expression]
    reads: Callable[[exp.Anonymous], list[exp.Table]] = _reads_nothing
    reads_files: bool = False
    needs: Callable[[Tables, exp.Anonymous], Iterable[Requirement | None]] = _needs_nothing


TABLE_FUNCTIONS: dict[str, TableFunction] = {}
"""Table functions lakeclone binds itself (``TABLE_CHANGES``), by upper-case name."""

SCALAR_FUNCTIONS: dict[str, Callable[[Tables, exp.Anonymous], exp.Expression]] = {}
"""Functions lakeclone answers itself from the catalog (``GET_DDL``), by upper-case name: the call bound to its value."""

TABLE_DDL_ELEMENTS: list[Callable[[Catalog, TableEntry], list[str]]] = []
"""The table elements a feature adds to a table's DDL after its columns (``primary key (ID)``)."""

BEFORE_COMMIT: list[Callable[[Execution, str | None], None]] = []
"""Run before each Delta commit a statement makes, with the location it commits to (None when unknown)."""

FINISH: list[Callable[[Execution], None]] = []
"""Run when a statement succeeds, inside the catalog transaction that records it as finished."""

BEFORE_STATEMENT: list[Callable[[Executor, exp.Expression], bool]] = []
"""Run before each statement, after its privilege check (a DDL statement commits the open transaction first).

Each says whether it committed work: the statement then starts after it, at a new reading of the clock.
"""

TRANSACTION_COMMITS: list[Callable[[Catalog, OpenTransaction, dt.datetime], None]] = []
"""Run inside COMMIT's catalog transaction (the streams a transaction consumed move)."""

TRANSACTION_ROLLBACKS: list[Callable[[Catalog, str], None]] = []
"""Run inside the catalog transaction that ends a rolled-back transaction, with its id (also after a crash)."""

RECOVERIES: list[Callable[[Executor], None]] = []
"""Run when a Lake opens its warehouse: finish or undo what crashed sessions left half done."""

ParameterHook = Callable[["Execution", "ObjectKind", str, "str | None"], None]

CREATE_PROPERTIES: dict[str, Callable[[str], Mapping[str, str]]] = {}
"""Delta table properties a new table is created with, by the CREATE TABLE parameter that asks for them.

Given the parameter's value, the properties to add to the table's first
commit (``CHANGE_TRACKING = TRUE``: the change data feed and row tracking),
so that what the parameter's hook would otherwise turn on in commits of its
own is there from version 0.
"""

PARAMETER_HOOKS: dict[str, ParameterHook] = {}
"""Reacts to a parameter's new value, by key (``CHANGE_TRACKING``): (execution, kind, object id, value).

Run when the parameter is set (its new value) or unset (None) on an object
of any kind, once the object is found (a feature's kinds through their
:class:`SchemaObject`) and the value stored in the statement's records; a hook's
Delta commits and records join the same unit of work.
"""

DESCRIBERS: dict[str, Handler] = {}
"""``DESCRIBE <kind>`` handlers beyond tables, by the kind's words (``VIEW``, ``MASKING POLICY``)."""

PURGES: list[Callable[[Execution], None]] = []
"""Run after DROP and VACUUM (the purge of dropped tables whose UNDROP window has passed)."""


class Authorizer(Protocol):
    """Checks the current role's privileges: the one place lakeclone enforces them."""

    def statement(self, executor: Executor, needs: Iterable[Requirement | None]) -> None:
        """Raise unless the session's role holds what a statement ``needs``; runs before anything else does.

        ``needs`` is computed as it is read: an authorizer that lets the role do anything need not read it.
        """

    def table(self, executor: Executor, entry: TableEntry, privilege: str) -> None:
        """Raise unless the session's role holds ``privilege`` on ``entry`` (the Python API's reads)."""

    def sees_table(self, executor: Executor, table_id: str) -> bool:
        """Whether the session's role may see a table (live or dropped), and use its schema and database."""

    def owns_table(self, executor: Executor, table_id: str) -> bool:
        """Whether the session's role owns a table (or is ACCOUNTADMIN)."""

    def visible(self, catalog: Catalog, role: str, what: str) -> tuple[tuple[str, ...], set[tuple[str, ...]]] | None:
        """What ``SHOW <what>`` may list to ``role``: (its key columns, their values for the objects it sees), or None for all."""

    def administers(self, catalog: Catalog, role: str) -> bool:
        """Whether ``role`` is or inherits ACCOUNTADMIN (it sees every user's statements in the query history)."""


USES: dict[str, Handler] = {}
"""``USE <kind>`` handlers beyond databases and schemas (``ROLE``)."""

SESSION_STARTS: list[Callable[[Executor], None]] = []
"""Run when a Lake starts its session, after the recoveries: check who signs in, as what role."""


StagedFiles = Callable[["Tables", "exp.Table"], "exp.Expression"]
"""Binds a reference to staged files, ``@stage[/path] [(FILE_FORMAT => …, PATTERN => …)]``, to the rows of its files."""


ViewQuery = Callable[["Tables", "ViewEntry"], "tuple[Tables, exp.Expr]"]
"""A view's query, parsed, with the lookups that resolve its names as its definition does (in its own schema)."""


@dataclass
class Slots:
    """Features that fill a single slot rather than a list."""

    authorizer: Authorizer | None = None
    clone: Handler | None = None
    staged_files: StagedFiles | None = None
    view_query: ViewQuery | None = None
    insert_defaults: InsertDefaults | None = None
    merge_defaults: MergeDefaults | None = None


SLOTS = Slots()


def statement(*kinds: type[exp.Expression], bind: Binder, query_type: QueryType) -> Callable[[Handler], Handler]:
    """Register the decorated handler as the run of the statements parsed as ``kinds``, with their ``bind`` and ``query_type``."""

    def register(handler: Handler) -> Handler:
        for kind in kinds:
            STATEMENTS[kind] = Statement(bind, handler, query_type)
        return handler

    return register
