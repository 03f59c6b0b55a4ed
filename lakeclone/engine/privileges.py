"""What a statement needs on the objects it names, in terms a role's grants answer.

A statement's ``bind`` (registered with it, see
:func:`lakeclone.engine.registry.statement`) resolves each name it uses as
its run does (:meth:`lakeclone.engine.tables.Tables.name`) and yields a
:class:`Need` per object: which privileges on it would do. The access
feature checks them against the session's role before the statement runs;
without it, nothing is checked. The helpers here are the vocabulary those
functions share: resolving a name to a :class:`Securable`, and what reading
a relation needs, through the streams and views it reads.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.access import ACCOUNT_ID
from lakeclone.catalog.entries import GranteeKind, ObjectKind
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.catalog.policies import POLICY_KINDS, PolicyEntry, PolicyKind
from lakeclone.dialect import option_reference, table_reference
from lakeclone.engine import registry
from lakeclone.engine.compiler import read_references, staged_references, table_function_calls

if TYPE_CHECKING:
    from lakeclone.catalog.entries import SchemaEntry, SchemaObjectEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.tables import Tables


class Privilege(str, Enum):
    """A privilege, as Snowflake spells it (Unity Catalog's spellings are read in :mod:`lakeclone.access.privileges`)."""

    USAGE = "USAGE"
    SELECT = "SELECT"
    INSERT = "INSERT"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    TRUNCATE = "TRUNCATE"
    MODIFY = "MODIFY"
    CREATE_TABLE = "CREATE TABLE"
    CREATE_VIEW = "CREATE VIEW"
    CREATE_STREAM = "CREATE STREAM"
    CREATE_SEQUENCE = "CREATE SEQUENCE"
    CREATE_STAGE = "CREATE STAGE"
    CREATE_FILE_FORMAT = "CREATE FILE FORMAT"
    CREATE_SCHEMA = "CREATE SCHEMA"
    CREATE_DATABASE = "CREATE DATABASE"
    CREATE_EXTERNAL_TABLE = "CREATE EXTERNAL TABLE"
    CREATE_MASKING_POLICY = "CREATE MASKING POLICY"
    CREATE_ROW_ACCESS_POLICY = "CREATE ROW ACCESS POLICY"
    CREATE_TAG = "CREATE TAG"
    APPLY = "APPLY"
    APPLY_MASKING_POLICY = "APPLY MASKING POLICY"
    APPLY_ROW_ACCESS_POLICY = "APPLY ROW ACCESS POLICY"
    APPLY_TAG = "APPLY TAG"
    OWNERSHIP = "OWNERSHIP"
    ALL = "ALL"


@dataclass(frozen=True)
class Securable:
    """An object privileges are granted on.

    Attributes:
        kind: what it is.
        name: its qualified name, for messages.
        containers: its schema and database (or a schema's database), which need USAGE first.
    """

    kind: ObjectKind
    id: str
    name: str
    containers: tuple[Securable, ...] = ()

    def __post_init__(self) -> None:
        # A kind's text would compare equal to its kind but fail every `is` check the guard makes.
        assert isinstance(self.kind, ObjectKind), f"a securable's kind is an ObjectKind, not {self.kind!r}"


@dataclass(frozen=True)
class Definer:
    """A view or policy whose definition a statement reads: its owner's rights, not the session's, reach what it reads.

    Attributes:
        name: the view's or policy's qualified name, for messages.
        owner: the role that owns it.
        kind: what it is, for messages: ``view``, ``masking policy``, ``row access policy``.
    """

    name: str
    owner: str
    kind: str = "view"


@dataclass(frozen=True)
class Principal:
    """A user or role a denial names (``Insufficient privileges to operate on user 'ANN'``): no object grants are on."""

    kind: GranteeKind
    name: str


@dataclass(frozen=True)
class Need:
    """What a statement needs on one object: any one of ``privileges`` (none: that the role sees it).

    Attributes:
        definer: the view through which the object is read, whose owner must hold ``privileges``
            (Snowflake views run with their owner's rights); None for the session's role.
        denied_on: what a denial names, when not the object itself: a schema clone names the
            schema, not a table in it the role may not know of.
    """

    securable: Securable
    privileges: tuple[Privilege, ...]
    definer: Definer | None = None
    denied_on: Securable | Principal | None = None
    unseen_as: str | None = None
    """What a denial calls the object when the role does not see it, where that is not said by its kind (``Policy``)."""


@dataclass(frozen=True)
class Either:
    """Needs met one of two ways: all of ``first``, else all of ``second``, whose denial is the one reported.

    Attaching a policy takes APPLY on the account (and seeing the object), or
    OWNERSHIP of the object and APPLY on the policy.
    """

    first: tuple[Need, ...]
    second: tuple[Need, ...]


@dataclass(frozen=True)
class Grantable:
    """That the role may grant ``privilege`` on ``securable``: it owns it, or holds the privilege WITH GRANT OPTION.

    Granting OWNERSHIP, or future grants in a schema, takes owning it.
    """

    securable: Securable
    privilege: Privilege


Requirement = Need | Either | Grantable
"""One thing a statement needs: a :class:`Need`, an :class:`Either` of two sets of them, or a :class:`Grantable`."""

ACCOUNT_SECURABLE = Securable(ObjectKind.ACCOUNT, ACCOUNT_ID, "ACCOUNT")

ADMINISTRATION = Need(ACCOUNT_SECURABLE, (Privilege.OWNERSHIP,))
"""What only the account's owner, ACCOUNTADMIN, may do: create users and roles, drop users."""


def role_securable(name: str) -> Securable:
    """A role, as managing it (granting it, dropping it) needs its ownership."""
    return Securable(ObjectKind.ROLE, name, name)


def database_securable(catalog: Catalog, name: str) -> Securable | None:
    entry = catalog.objects.database(name)
    return Securable(ObjectKind.DATABASE, entry.id, entry.name) if entry else None


def schema_securable(catalog: Catalog, schema: SchemaEntry) -> Securable:
    database = catalog.objects.database(schema.database)
    containers = (Securable(ObjectKind.DATABASE, database.id, database.name),) if database else ()
    return Securable(ObjectKind.SCHEMA, schema.id, schema.qualified, containers)


def named_schema(catalog: Catalog, database: str, name: str) -> Securable | None:
    entry = catalog.objects.schema(database, name)
    return schema_securable(catalog, entry) if entry else None


RELATIONS = (ObjectKind.TABLE, ObjectKind.VIEW, ObjectKind.STREAM)
"""What a query reads by name."""

# The kinds of object that live in a schema by name, and so are found by :func:`relation`.
IN_SCHEMA = frozenset({*RELATIONS, ObjectKind.SEQUENCE, ObjectKind.STAGE, ObjectKind.FILE_FORMAT, *POLICY_KINDS})


def relation(tables: Tables, table: exp.Table, kinds: tuple[ObjectKind, ...] = RELATIONS) -> Securable | None:
    """The live object of one of ``kinds`` (tried in order) a reference names, as the binder resolves it; None if none."""
    assert IN_SCHEMA.issuperset(kinds), f"{kinds} are not all kinds of schema object"
    name = tables.name(table)
    catalog = tables.catalog
    for kind in kinds:
        entry = _in_schema(catalog, kind, name)
        if entry is not None:
            schema = catalog.objects.schema(name.database, name.schema)
            assert schema is not None
            return Securable(kind, entry.id, str(name), (schema_securable(catalog, schema),))
    return None


def _in_schema(catalog: Catalog, kind: ObjectKind, name: QualifiedName) -> SchemaObjectEntry | PolicyEntry | None:
    if kind in POLICY_KINDS:
        return catalog.policies.policy(name.database, name.schema, name.name, PolicyKind(kind.value))
    return catalog.schema_objects.named(kind, name)


def reads(tables: Tables, expression: exp.Expr, *, skip: exp.Expr | None = None) -> Iterator[Requirement | None]:
    references = [table for table in read_references(expression) if table is not skip]
    yield from reads_of(tables, references)
    yield from file_reads(tables, expression)
    yield from function_needs(tables, expression)


def function_needs(tables: Tables, expression: exp.Expr) -> Iterator[Requirement | None]:
    """What each call of a table function in ``expression`` needs beyond the relations it reads (see ``TableFunction.needs``)."""
    for _, call, function in table_function_calls(expression):
        yield from function.needs(tables, call)


def file_reads(tables: Tables, expression: exp.Expr) -> Iterator[Need | None]:
    """USAGE on each stage whose files ``expression`` reads (and on a file format it names); for ``read_files``, a URI's need.

    A URI reaches outside the warehouse as a stage's URL does, and needs what
    naming one needs: the account's CREATE EXTERNAL TABLE.
    """
    for table in staged_references(expression):
        yield from stage_usage(tables, table.name)
        named = table.args.get("format")
        if named is not None:
            yield from format_usage(tables, named)
    if any(function.reads_files for _, _, function in table_function_calls(expression)):
        yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_EXTERNAL_TABLE,))


def reads_of(tables: Tables, references: list[exp.Table], definer: Definer | None = None) -> Iterator[Requirement | None]:
    """SELECT on each relation ``references`` name, and on what streams and views among them read."""
    for table in references:
        securable = relation(tables, table)
        if securable is None:
            # Missing or not: a role that may not use the schema learns only that.
            yield _container_need(tables, table, definer)
            continue
        yield Need(securable, (Privilege.SELECT,), definer)
        yield from _behind(tables, securable, definer)


def _container_need(tables: Tables, table: exp.Table, definer: Definer | None) -> Need | None:
    """USAGE on the schema (else the database) a name that names no relation would be in, where that exists."""
    name = tables.name(table)
    schema = named_schema(tables.catalog, name.database, name.schema)
    if schema is not None:
        return Need(schema, (Privilege.USAGE,), definer)
    database = database_securable(tables.catalog, name.database)
    return Need(database, (Privilege.USAGE,), definer) if database is not None else None


def _behind(tables: Tables, securable: Securable, definer: Definer | None) -> Iterator[Requirement | None]:
    """What reading a stream or a view needs beyond SELECT on it: on what the stream tracks, or what the view reads."""
    catalog = tables.catalog
    if securable.kind is ObjectKind.STREAM:
        # Querying a stream also needs SELECT on what it tracks.
        stream = catalog.streams.stream_by_id(securable.id)
        assert stream is not None
        source = _source_need(catalog, stream.source_id)
        if source is not None:
            yield Need(source.securable, source.privileges, definer)
            yield from _behind(tables, source.securable, definer)
    elif securable.kind is ObjectKind.VIEW:
        view = catalog.views.view_by_id(securable.id)
        view_query = registry.SLOTS.view_query
        assert view is not None and view_query is not None
        scope, query = view_query(tables, view)
        owner = Definer(view.qualified, catalog.access.owner(ObjectKind.VIEW, view.id))
        yield from reads_of(scope, read_references(query), owner)
        # A table function's own needs are the session's, in a view as in a statement.
        yield from function_needs(scope, query)


def _source_need(catalog: Catalog, source_id: str) -> Need | None:
    table = catalog.objects.table_by_id(source_id)
    entry = table or catalog.views.view_by_id(source_id)
    if entry is None:
        return None
    schema = catalog.objects.schema(entry.database, entry.schema)
    assert schema is not None
    name = f"{entry.database}.{entry.schema}.{entry.name}"
    kind = ObjectKind.TABLE if table else ObjectKind.VIEW
    securable = Securable(kind, entry.id, name, (schema_securable(catalog, schema),))
    return Need(securable, (Privilege.SELECT,))


def sequence_need(catalog: Catalog, sequence_id: str) -> Need | None:
    sequence = catalog.sequences.sequence_by_id(sequence_id)
    schema = catalog.objects.schema(sequence.database, sequence.schema) if sequence else None
    if sequence is None or schema is None:
        return None  # a dropped sequence: the statement reports it
    securable = Securable(ObjectKind.SEQUENCE, sequence.id, sequence.qualified, (schema_securable(catalog, schema),))
    return Need(securable, (Privilege.USAGE,))


def named_formats(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE on each file format a ``FORMAT_NAME = …`` names."""
    for prop in expression.find_all(exp.Property):
        if prop.this is None or prop.name.upper() != "FORMAT_NAME":
            continue
        value = prop.args.get("value")
        if value is not None:
            yield from format_usage(tables, value)


def format_usage(tables: Tables, value: exp.Expression) -> Iterator[Need | None]:
    """USAGE on the file format ``value`` names: ``f``, ``'db.s.f'``."""
    named = relation(tables, option_reference(value), (ObjectKind.FILE_FORMAT,))
    yield Need(named, (Privilege.USAGE,)) if named else None


def stage_usage(tables: Tables, reference: str) -> Iterator[Need | None]:
    """USAGE on the stage ``@stage/path`` names."""
    body = reference.removeprefix("@")
    if body.startswith(("~", "%")):
        return  # no such stages: the statement says so
    stage = relation(tables, table_reference(body.partition("/")[0]), (ObjectKind.STAGE,))
    yield Need(stage, (Privilege.USAGE,)) if stage else None


def create_in_schema(tables: Tables, target: exp.Table, privilege: Privilege) -> Iterator[Need | None]:
    name = tables.name(target)
    schema = named_schema(tables.catalog, name.database, name.schema)
    if schema is not None:
        yield Need(schema, (Privilege.USAGE,))
        yield Need(schema, (privilege,))


def owned(tables: Tables, target: exp.Table, kind: ObjectKind | None, *, modify: bool = False) -> Iterator[Need | None]:
    """OWNERSHIP (or, on a table, MODIFY where ``modify``) of the object ``target`` names.

    ``kind`` is a database, a schema, or a kind :func:`relation` finds
    (tables, views, streams, sequences, stages, file formats, policies, tags).
    """
    catalog = tables.catalog
    if kind is ObjectKind.DATABASE:
        securable = database_securable(catalog, database_name(target))
    elif kind is ObjectKind.SCHEMA:
        securable = named_schema(catalog, *schema_name(target, database=tables.scope.database))
    elif kind in IN_SCHEMA:
        securable = relation(tables, target, (kind,))
    else:
        securable = None
    privileges = (Privilege.MODIFY,) if modify else (Privilege.OWNERSHIP,)
    yield Need(securable, privileges) if securable else None


def seen(tables: Tables, target: exp.Table, kind: ObjectKind | None) -> Iterator[Need | None]:
    """That the role sees the object ``target`` names (any privilege on it), and may use its containers."""
    catalog = tables.catalog
    if kind is ObjectKind.DATABASE:
        securable = database_securable(catalog, database_name(target))
    elif kind is ObjectKind.SCHEMA:
        securable = named_schema(catalog, *schema_name(target, database=tables.scope.database))
    else:
        securable = relation(tables, target, (ObjectKind.TABLE, ObjectKind.VIEW))
    yield Need(securable, ()) if securable else None
