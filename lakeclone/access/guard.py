"""The one place lakeclone checks privileges: every statement, and the Python API's table lookups.

:class:`Guard` resolves the names a statement uses exactly as the binder
does (:meth:`lakeclone.engine.tables.Tables.name`), works out what the
statement needs on each object (:func:`needs`), and checks the session's
role against the catalog's grants and ownership before the statement's
handler runs, so a denied statement writes nothing: no Delta commit, no
catalog row, not even the commit of an open transaction.

A role has the privileges granted to it and to every role granted to it, and
PUBLIC's. ACCOUNTADMIN may do everything.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.access.privileges import Privilege, satisfies
from lakeclone.catalog.access import ACCOUNT, ACCOUNTADMIN, PUBLIC
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.catalog.policies import PolicyEntry, PolicyKind
from lakeclone.dialect import expressions as lx
from lakeclone.dialect import option_reference, table_reference
from lakeclone.engine.compiler import read_references, staged_references, table_function_calls
from lakeclone.errors import InsufficientPrivilegesError, ObjectNotFoundError, SqlCompilationError
from lakeclone.views.expand import definition_scope, parse_definition

if TYPE_CHECKING:
    from lakeclone.catalog.entries import SchemaEntry
    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.executor import Executor
    from lakeclone.engine.tables import Tables


@dataclass(frozen=True)
class Securable:
    """An object privileges are granted on.

    Attributes:
        kind: ``"TABLE"``, ``"VIEW"``, ``"STREAM"``, ``"SEQUENCE"``, ``"STAGE"``, ``"SCHEMA"``, ``"DATABASE"`` or ``"ACCOUNT"``.
        name: its qualified name, for messages.
        containers: its schema and database (or a schema's database), which need USAGE first.
    """

    kind: str
    id: str
    name: str
    containers: tuple[Securable, ...] = ()


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
    denied_on: Securable | None = None


ACCOUNT_SECURABLE = Securable(*ACCOUNT, "ACCOUNT")


def database_securable(catalog: Catalog, name: str) -> Securable | None:
    entry = catalog.database(name)
    return Securable("DATABASE", entry.id, entry.name) if entry else None


def schema_securable(catalog: Catalog, schema: SchemaEntry) -> Securable:
    database = catalog.database(schema.database)
    containers = (Securable("DATABASE", database.id, database.name),) if database else ()
    return Securable("SCHEMA", schema.id, schema.qualified, containers)


def named_schema(catalog: Catalog, database: str, name: str) -> Securable | None:
    entry = catalog.schema(database, name)
    return schema_securable(catalog, entry) if entry else None


def relation(tables: Tables, table: exp.Table, kinds: tuple[str, ...] = ("TABLE", "VIEW", "STREAM")) -> Securable | None:
    """The live table, view, stream or sequence a reference names, as the binder resolves it; None if none."""
    name = tables.name(table)
    catalog = tables.catalog
    lookups: dict[str, Callable[[str, str, str], object | None]] = {
        "TABLE": catalog.table,
        "VIEW": catalog.view,
        "STREAM": catalog.stream,
        "SEQUENCE": catalog.sequence,
        "STAGE": catalog.stage,
        "FILE FORMAT": catalog.file_format,
        **{kind.value: functools.partial(_policy, catalog, kind) for kind in PolicyKind},
    }
    for kind in kinds:
        entry = lookups[kind](name.database, name.schema, name.name)
        if entry is not None:
            schema = catalog.schema(name.database, name.schema)
            assert schema is not None
            return Securable(kind, entry.id, str(name), (schema_securable(catalog, schema),))  # type: ignore[attr-defined]
    return None


def _policy(catalog: Catalog, kind: PolicyKind, database: str, schema: str, name: str) -> PolicyEntry | None:
    return catalog.policy(database, schema, name, kind)


def _with_containers(securable: Securable) -> list[Securable]:
    """``securable`` after the containers that must be usable to reach it, outermost first."""
    ordered: list[Securable] = []
    for container in securable.containers:
        ordered.extend(_with_containers(container))
    return [*ordered, securable]


class Guard:
    """Checks the session's role; registered as the engine's authorizer."""

    def roles(self, catalog: Catalog, role: str) -> set[str]:
        """``role``, every role granted to it (transitively), and PUBLIC."""
        found = {role, PUBLIC}
        pending = [role]
        while pending:
            for granted in catalog.roles_granted_to_role(pending.pop()):
                if granted not in found:
                    found.add(granted)
                    pending.append(granted)
        return found

    def statement(self, executor: Executor, expression: exp.Expression) -> None:
        if expression.find(exp.CopyGrantsProperty) and not (
            isinstance(expression, exp.Create) and expression.args.get("clone") is not None
        ):
            raise SqlCompilationError("COPY GRANTS is supported by lakeclone on CREATE TABLE … CLONE only.")
        catalog = executor.catalog
        roles = self.roles(catalog, executor.context.role)
        if ACCOUNTADMIN in roles:
            return
        for need in needs(executor.tables(), expression):
            if need.definer is None:
                self.require(catalog, roles, need)
            else:
                self.require_for_view(catalog, need)

    def require_for_view(self, catalog: Catalog, need: Need) -> None:
        """Raise unless the owner of the view or policy ``need`` reads through holds what it needs (Snowflake's expansion)."""
        assert need.definer is not None
        owner_roles = self.roles(catalog, need.definer.owner)
        if ACCOUNTADMIN in owner_roles:
            return
        try:
            self.require(catalog, owner_roles, need)
        except SqlCompilationError as error:
            raise SqlCompilationError(f"Failure during expansion of {need.definer.kind} '{need.definer.name}': {error}") from None

    def table(self, executor: Executor, entry: TableEntry, privilege: str) -> None:
        catalog = executor.catalog
        roles = self.roles(catalog, executor.context.role)
        if ACCOUNTADMIN in roles:
            return
        schema = catalog.schema(entry.database, entry.schema)
        assert schema is not None
        securable = Securable("TABLE", entry.id, entry.name, (schema_securable(catalog, schema),))
        self.require(catalog, roles, Need(securable, (Privilege(privilege),)))

    def owns_table(self, executor: Executor, table_id: str) -> bool:
        catalog = executor.catalog
        return self.owns(catalog, self.roles(catalog, executor.context.role), Securable("TABLE", table_id, table_id))

    def sees_table(self, executor: Executor, table_id: str) -> bool:
        catalog = executor.catalog
        roles = self.roles(catalog, executor.context.role)
        if ACCOUNTADMIN in roles:
            return True
        entry = catalog.table_by_id(table_id)
        schema = catalog.schema(entry.database, entry.schema) if entry else None
        if entry is None or schema is None:
            return False
        securable = Securable("TABLE", entry.id, entry.qualified, (schema_securable(catalog, schema),))
        return all(self.holds(catalog, roles, c, Privilege.USAGE) for c in _with_containers(securable)[:-1]) and (
            self.sees(catalog, roles, securable)
        )

    def visible(self, catalog: Catalog, role: str, what: str) -> tuple[tuple[str, ...], set[tuple[str, ...]]] | None:
        """What SHOW lists for ``role``: the objects it sees, in containers it may use."""
        roles = self.roles(catalog, role)
        if ACCOUNTADMIN in roles or what not in SHOWN:
            return None
        kind, columns = SHOWN[what]
        keys: set[tuple[str, ...]] = set()
        for database in catalog.databases():
            securable = Securable("DATABASE", database.id, database.name)
            if kind == "DATABASE":
                if self.sees(catalog, roles, securable):
                    keys.add((database.name,))
                continue
            if not self.holds(catalog, roles, securable, Privilege.USAGE):
                continue
            for schema_entry in catalog.schemas(database):
                schema = schema_securable(catalog, schema_entry)
                if kind == "SCHEMA":
                    if self.sees(catalog, roles, schema):
                        keys.add((database.name, schema_entry.name))
                    continue
                if not self.holds(catalog, roles, schema, Privilege.USAGE):
                    continue
                for object_id, name in _objects(catalog, kind, schema_entry):
                    if self.sees(catalog, roles, Securable(kind, object_id, name)):
                        keys.add((database.name, schema_entry.name, name))
        return columns, keys

    def administers(self, catalog: Catalog, role: str) -> bool:
        """Whether ``role`` is or inherits ACCOUNTADMIN."""
        return ACCOUNTADMIN in self.roles(catalog, role)

    def require(self, catalog: Catalog, roles: set[str], need: Need) -> None:
        """Raise unless ``roles`` may reach ``need``'s object and hold one of its privileges."""
        for securable in _with_containers(need.securable)[:-1]:
            if not self.holds(catalog, roles, securable, Privilege.USAGE):
                raise ObjectNotFoundError(securable.name, securable.kind.capitalize())
        target = need.securable
        if need.privileges == (Privilege.USAGE,) and target.kind in ("SCHEMA", "DATABASE"):
            # A container the role may not use does not exist for it, whatever else it holds on it.
            if not self.holds(catalog, roles, target, Privilege.USAGE):
                raise ObjectNotFoundError(target.name, target.kind.capitalize())
            return
        seen = target.kind == "ACCOUNT" or self.sees(catalog, roles, target)
        if seen and (not need.privileges or any(self.holds(catalog, roles, target, p) for p in need.privileges)):
            return
        if need.denied_on is not None:
            raise InsufficientPrivilegesError(need.denied_on.kind, need.denied_on.name)
        if not seen:
            raise ObjectNotFoundError(target.name, _NOT_FOUND_AS.get(target.kind, "Object"))
        raise InsufficientPrivilegesError(target.kind, target.name)

    def owns(self, catalog: Catalog, roles: set[str], securable: Securable) -> bool:
        return ACCOUNTADMIN in roles or catalog.owner(securable.kind, securable.id) in roles

    def sees(self, catalog: Catalog, roles: set[str], securable: Securable) -> bool:
        """Whether ``roles`` hold any privilege on ``securable``: else it does not exist for them."""
        if self.owns(catalog, roles, securable):
            return True
        return any(grant.role in roles for grant in catalog.grants_on(securable.kind, securable.id))

    def holds(self, catalog: Catalog, roles: set[str], securable: Securable, needed: Privilege) -> bool:
        if self.owns(catalog, roles, securable):
            return True
        return any(
            grant.role in roles and satisfies(Privilege(grant.privilege), needed)
            for grant in catalog.grants_on(securable.kind, securable.id)
        )

    def grantable(self, catalog: Catalog, roles: set[str], securable: Securable, privilege: Privilege) -> bool:
        """Whether ``roles`` may grant ``privilege`` on ``securable``: they own it or hold it WITH GRANT OPTION."""
        if self.owns(catalog, roles, securable):
            return True
        return privilege is not Privilege.OWNERSHIP and any(
            grant.role in roles and grant.grant_option and satisfies(Privilege(grant.privilege), privilege)
            for grant in catalog.grants_on(securable.kind, securable.id)
        )


# How Snowflake names a kind of object the role cannot see, where not "Object".
_NOT_FOUND_AS = {"STAGE": "Stage", "FILE FORMAT": "File format"}

# What each SHOW lists: the kind of object, and the columns that name it.
_QUALIFIED = ("database_name", "schema_name", "name")
SHOWN: dict[str, tuple[str, tuple[str, ...]]] = {
    "DATABASES": ("DATABASE", ("name",)),
    "SCHEMAS": ("SCHEMA", ("database_name", "name")),
    "TABLES": ("TABLE", _QUALIFIED),
    "VIEWS": ("VIEW", _QUALIFIED),
    "STREAMS": ("STREAM", _QUALIFIED),
    "SEQUENCES": ("SEQUENCE", _QUALIFIED),
    "STAGES": ("STAGE", _QUALIFIED),
    "FILE FORMATS": ("FILE FORMAT", _QUALIFIED),
    "PRIMARY KEYS": ("TABLE", ("database_name", "schema_name", "table_name")),
    "IMPORTED KEYS": ("TABLE", ("fk_database_name", "fk_schema_name", "fk_table_name")),
    # A channel is listed to the roles that see its table.
    "CHANNELS": ("TABLE", ("database_name", "schema_name", "table_name")),
}


def _objects(catalog: Catalog, kind: str, schema: SchemaEntry) -> list[tuple[str, str]]:
    """(id, name) of a schema's live objects of ``kind``."""
    if kind == "TABLE":
        return [(t.id, t.name) for t in catalog.tables(schema)]
    if kind == "VIEW":
        return [(v.id, v.name) for v in catalog.views(schema)]
    if kind == "STREAM":
        return [(s.id, s.name) for s in catalog.streams(schema)]
    if kind == "STAGE":
        return [(s.id, s.name) for s in catalog.stages(schema)]
    if kind == "FILE FORMAT":
        return [(f.id, f.name) for f in catalog.file_formats(schema)]
    return [(s.id, s.name) for s in catalog.sequences(schema)]


GUARD = Guard()


def needs(tables: Tables, expression: exp.Expression) -> list[Need]:
    """What ``expression`` needs on each object it names, containers' USAGE implied.

    Objects that do not exist are left to the statement's handler, which
    reports them as it always has.
    """
    return [need for need in _needs(tables, expression) if need is not None]


def _needs(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    if isinstance(expression, lx.Explain):
        # Explaining a statement needs what running it needs.
        yield from _needs(tables, expression.this)
    elif isinstance(expression, (exp.Select, exp.Union, exp.Intersect, exp.Except)):
        yield from _reads(tables, expression)
    elif isinstance(expression, (exp.Insert, exp.Update, exp.Delete, exp.Merge)):
        yield from _dml(tables, expression)
    elif isinstance(expression, exp.Create):
        yield from _create(tables, expression)
    elif isinstance(expression, lx.CreateStream):
        yield from _create_in_schema(tables, expression.this, Privilege.CREATE_STREAM)
        yield from _reads_of(tables, [expression.args["source"]])
    elif isinstance(expression, exp.Drop):
        yield from _drop(tables, expression)
    elif isinstance(expression, exp.Undrop):
        yield from _undrop(tables, expression)
    elif isinstance(expression, (exp.Alter, lx.SetParameters, lx.UnsetParameters)):
        yield from _owned(tables, expression.this, str(expression.args.get("kind") or "TABLE").upper())
        if isinstance(expression, exp.Alter):
            yield from _moved(tables, expression)
    elif isinstance(expression, (lx.AlterClustering, lx.AlterRecluster)):
        yield from _owned(tables, expression.this, "TABLE")
    elif isinstance(expression, (lx.Vacuum, lx.Optimize, lx.Restore)):
        target = relation(tables, expression.this, ("TABLE",))
        yield Need(target, (Privilege.MODIFY,)) if target else None
    elif isinstance(expression, (lx.DescribeHistory, lx.DescribeDetail)):
        target = relation(tables, expression.this, ("TABLE",))
        yield Need(target, (Privilege.SELECT,)) if target else None
    elif isinstance(expression, exp.Describe):
        kind = str(expression.args.get("kind") or "TABLE").upper()
        target = relation(
            tables, expression.this, (kind,) if kind in ("VIEW", "STREAM", "STAGE", "FILE FORMAT") else ("TABLE", "VIEW")
        )
        yield Need(target, ()) if target else None
    elif isinstance(expression, exp.Copy):
        yield from _copy(tables, expression)
    elif isinstance(expression, exp.ListStage):
        yield from _stage_usage(tables, expression.name)
    elif isinstance(expression, exp.Use):
        yield from _use(tables, expression)
    elif isinstance(expression, lx.ShowParameters) and expression.this is not None:
        yield from _seen(tables, expression.this, str(expression.args.get("kind") or "TABLE").upper())
    elif isinstance(expression, exp.Show) and isinstance(expression.args.get("scope"), exp.Table):
        yield from _show_scope(tables, expression.args["scope"], str(expression.args.get("scope_kind") or "").upper())


def require_definer_reads(tables: Tables, query: exp.Expr, definer: Definer) -> None:
    """Raise unless ``definer``'s owner may read every relation ``query`` reads: a policy body's mapping table.

    ``tables`` resolves names as the definition does (its own schema). A body
    is read with its owner's rights, at CREATE and at every use, so that a
    policy reads only what its owner could read itself. Files have no owner
    or grants to check: a body reads none.

    Raises:
        SqlCompilationError: the body reads staged files or ``read_files``.
    """
    if staged_references(query) or any(function.reads_files for _, _, function in table_function_calls(query)):
        raise SqlCompilationError(
            f"{definer.name} cannot read files: a view's or a policy's query reads tables, views and streams."
        )
    for need in _reads_of(tables, read_references(query), definer):
        if need is not None:
            GUARD.require_for_view(tables.catalog, need)


def _reads(tables: Tables, expression: exp.Expr, *, skip: exp.Expr | None = None) -> Iterator[Need | None]:
    references = [table for table in read_references(expression) if table is not skip]
    yield from _reads_of(tables, references)
    yield from _file_reads(tables, expression)


def _file_reads(tables: Tables, expression: exp.Expr) -> Iterator[Need | None]:
    """USAGE on each stage whose files ``expression`` reads (and on a file format it names); for ``read_files``, a URI's need.

    A URI reaches outside the warehouse as a stage's URL does, and needs what
    naming one needs: the account's CREATE EXTERNAL TABLE.
    """
    for table in staged_references(expression):
        yield from _stage_usage(tables, table.name)
        named = table.args.get("format")
        if named is not None:
            yield from _format_usage(tables, named)
    if any(function.reads_files for _, _, function in table_function_calls(expression)):
        yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_EXTERNAL_TABLE,))


def _reads_of(tables: Tables, references: list[exp.Table], definer: Definer | None = None) -> Iterator[Need | None]:
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


def _behind(tables: Tables, securable: Securable, definer: Definer | None) -> Iterator[Need | None]:
    """What reading a stream or a view needs beyond SELECT on it: on what the stream tracks, or what the view reads."""
    catalog = tables.catalog
    if securable.kind == "STREAM":
        # Querying a stream also needs SELECT on what it tracks.
        stream = catalog.stream_by_id(securable.id)
        assert stream is not None
        source = _source_need(catalog, stream.source_id)
        if source is not None:
            yield Need(source.securable, source.privileges, definer)
            yield from _behind(tables, source.securable, definer)
    elif securable.kind == "VIEW":
        view = catalog.view_by_id(securable.id)
        assert view is not None
        scope = definition_scope(tables, view)
        owner = Definer(view.qualified, catalog.owner("VIEW", view.id))
        yield from _reads_of(scope, read_references(parse_definition(view.definition)), owner)


def _source_need(catalog: Catalog, source_id: str) -> Need | None:
    table = catalog.table_by_id(source_id)
    entry = table or catalog.view_by_id(source_id)
    if entry is None:
        return None
    schema = catalog.schema(entry.database, entry.schema)
    assert schema is not None
    name = f"{entry.database}.{entry.schema}.{entry.name}"
    securable = Securable("TABLE" if table else "VIEW", entry.id, name, (schema_securable(catalog, schema),))
    return Need(securable, (Privilege.SELECT,))


def _dml_target(expression: exp.Expression) -> exp.Table | None:
    target = expression.this
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None


def _dml(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    target = _dml_target(expression)
    if target is not None:
        securable = relation(tables, target, ("TABLE",))
        if securable is not None:
            for privilege in _writes(expression):
                yield Need(securable, (privilege,))
            yield from _defaults_drawn(tables.catalog, securable, expression)
    yield from _reads(tables, expression, skip=target)


def _defaults_drawn(catalog: Catalog, table: Securable, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE on each sequence whose NEXTVAL fills a column an INSERT (or a MERGE's INSERT) leaves out."""
    sequenced = {d.column.upper(): d.sequence_id for d in catalog.column_defaults(table.id) if d.sequence_id}
    if not sequenced:
        return
    if isinstance(expression, exp.Insert):
        listed: list[exp.Expression] = [expression.this] if isinstance(expression.this, exp.Schema) else []
    else:
        inserts = [w.args.get("then") for w in expression.find_all(exp.When)]
        listed = [i.this for i in inserts if isinstance(i, exp.Insert) and isinstance(i.this, exp.Tuple)]
    drawn: set[str] = set()
    for columns in listed:
        given = {column.name.upper() for column in columns.expressions}
        drawn.update(sequence for column, sequence in sequenced.items() if column not in given)
    for sequence_id in sorted(drawn):
        yield _sequence_need(catalog, sequence_id)


def _sequence_need(catalog: Catalog, sequence_id: str) -> Need | None:
    sequence = catalog.sequence_by_id(sequence_id)
    schema = catalog.schema(sequence.database, sequence.schema) if sequence else None
    if sequence is None or schema is None:
        return None  # a dropped sequence: the statement reports it
    securable = Securable("SEQUENCE", sequence.id, sequence.qualified, (schema_securable(catalog, schema),))
    return Need(securable, (Privilege.USAGE,))


def _nextval_defaults(tables: Tables, create: exp.Create) -> Iterator[Need | None]:
    """USAGE on each sequence a CREATE TABLE's ``DEFAULT seq.NEXTVAL`` names."""
    for default in create.find_all(exp.DefaultColumnConstraint):
        node = default.this
        if isinstance(node, exp.Column) and node.name.upper() == "NEXTVAL" and node.table:
            parts = {k: node.args[k].copy() for k in ("db", "catalog") if node.args.get(k) is not None}
            sequence = relation(tables, exp.Table(this=node.args["table"].copy(), **parts), ("SEQUENCE",))
            yield Need(sequence, (Privilege.USAGE,)) if sequence else None


def _copy(tables: Tables, expression: exp.Copy) -> Iterator[Need | None]:
    """INSERT on the table loaded; USAGE on the stage read, or, for a location given as text, what a stage's URL needs."""
    target = expression.this
    securable = relation(tables, target, ("TABLE",)) if isinstance(target, exp.Table) else None
    yield Need(securable, (Privilege.INSERT,)) if securable else None
    for source in expression.args.get("files") or []:
        node = source.this if isinstance(source, exp.Table) else source
        if isinstance(node, exp.Var) and node.name.startswith("@"):
            yield from _stage_usage(tables, node.name)
        else:
            yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_EXTERNAL_TABLE,))
    yield from _named_formats(tables, expression)


def _named_formats(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE on each file format a ``FORMAT_NAME = …`` names."""
    for prop in expression.find_all(exp.Property):
        if prop.this is None or prop.name.upper() != "FORMAT_NAME":
            continue
        value = prop.args.get("value")
        if value is not None:
            yield from _format_usage(tables, value)


def _format_usage(tables: Tables, value: exp.Expression) -> Iterator[Need | None]:
    """USAGE on the file format ``value`` names: ``f``, ``'db.s.f'``."""
    named = relation(tables, option_reference(value), ("FILE FORMAT",))
    yield Need(named, (Privilege.USAGE,)) if named else None


def _stage_usage(tables: Tables, reference: str) -> Iterator[Need | None]:
    """USAGE on the stage ``@stage/path`` names."""
    body = reference.removeprefix("@")
    if body.startswith(("~", "%")):
        return  # no such stages: the statement says so
    stage = relation(tables, table_reference(body.partition("/")[0]), ("STAGE",))
    yield Need(stage, (Privilege.USAGE,)) if stage else None


def _undrop(tables: Tables, expression: exp.Undrop) -> Iterator[Need | None]:
    """OWNERSHIP of the dropped object, and the privilege to create it in its parent (Snowflake's UNDROP)."""
    catalog = tables.catalog
    kind = str(expression.args.get("kind") or "TABLE").upper()
    if kind == "TABLE":
        name = tables.name(expression.this)
        schema_entry = catalog.schema(name.database, name.schema)
        yield from _create_in_schema(tables, expression.this, Privilege.CREATE_TABLE)
        table = catalog.last_dropped_table(schema_entry, name.name) if schema_entry else None
        if table is not None and schema_entry is not None:
            dropped = Securable("TABLE", table.id, str(name), (schema_securable(catalog, schema_entry),))
            yield Need(dropped, (Privilege.OWNERSHIP,))
    elif kind == "SCHEMA":
        parent, label = schema_name(expression.this, database=tables.scope.database)
        database = catalog.database(parent)
        if database is None:
            return
        container = Securable("DATABASE", database.id, database.name)
        yield Need(container, (Privilege.USAGE,))
        yield Need(container, (Privilege.CREATE_SCHEMA,))
        schema = catalog.last_dropped_schema(database, label)
        if schema is not None:
            yield Need(Securable("SCHEMA", schema.id, schema.qualified, (container,)), (Privilege.OWNERSHIP,))
    elif kind == "DATABASE":
        yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_DATABASE,))
        dropped_database = catalog.last_dropped_database(database_name(expression.this))
        if dropped_database is not None:
            yield Need(Securable("DATABASE", dropped_database.id, dropped_database.name), (Privilege.OWNERSHIP,))


def _writes(expression: exp.Expression) -> list[Privilege]:
    if isinstance(expression, exp.Insert):
        # OVERWRITE deletes the table's rows first: Snowflake asks for DELETE too.
        return [Privilege.INSERT, Privilege.DELETE] if expression.args.get("overwrite") else [Privilege.INSERT]
    if isinstance(expression, exp.Update):
        return [Privilege.UPDATE]
    if isinstance(expression, exp.Delete):
        return [Privilege.DELETE]
    writes: list[Privilege] = []
    for when in expression.find_all(exp.When):
        action = when.args.get("then")
        if isinstance(action, exp.Insert):
            writes.append(Privilege.INSERT)
        elif isinstance(action, exp.Update):
            writes.append(Privilege.UPDATE)
        elif action is not None:
            writes.append(Privilege.DELETE)
    return list(dict.fromkeys(writes))


_CREATE_PRIVILEGE = {
    "TABLE": Privilege.CREATE_TABLE,
    "VIEW": Privilege.CREATE_VIEW,
    "SEQUENCE": Privilege.CREATE_SEQUENCE,
    "STAGE": Privilege.CREATE_STAGE,
    "FILE FORMAT": Privilege.CREATE_FILE_FORMAT,
}


def _create(tables: Tables, expression: exp.Create) -> Iterator[Need | None]:
    catalog = tables.catalog
    kind = str(expression.args.get("kind") or "").upper()
    target = expression.this
    if isinstance(target, exp.Schema):
        target = target.this
    clone = expression.args.get("clone")
    if kind in _CREATE_PRIVILEGE:
        yield from _create_in_schema(tables, target, _CREATE_PRIVILEGE[kind])
        if expression.args.get("replace"):
            existing = relation(tables, target, (kind,))
            yield Need(existing, (Privilege.MODIFY,) if kind == "TABLE" else (Privilege.OWNERSHIP,)) if existing else None
        if (kind == "TABLE" and expression.find(exp.LocationProperty) is not None) or kind == "STAGE":
            # A table's LOCATION and a stage's URL reach files outside the warehouse.
            yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_EXTERNAL_TABLE,))
        if kind == "STAGE":
            yield from _named_formats(tables, expression)
        if kind == "TABLE":
            yield from _nextval_defaults(tables, expression)
        if clone is not None:
            yield from _reads_of(tables, [clone.this])
        elif expression.expression is not None:
            yield from _reads(tables, expression.expression)
    elif kind == "SCHEMA":
        database, _ = schema_name(target, database=tables.scope.database)
        securable = database_securable(catalog, database)
        if securable is not None:
            yield Need(securable, (Privilege.USAGE,))
            yield Need(securable, (Privilege.CREATE_SCHEMA,))
        if clone is not None:
            source_database, source = schema_name(clone.this, database=tables.scope.database)
            source_schema = catalog.schema(source_database, source)
            if source_schema is not None:
                yield from _cloned_schema(catalog, source_schema)
    elif kind == "DATABASE":
        yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_DATABASE,))
        if clone is not None:
            source_entry = catalog.database(database_name(clone.this))
            if source_entry is not None:
                yield Need(Securable("DATABASE", source_entry.id, source_entry.name), (Privilege.USAGE,))
                for schema_entry in catalog.schemas(source_entry):
                    yield from _cloned_schema(catalog, schema_entry)
    else:
        raise SqlCompilationError(f"CREATE {kind} is not supported for roles other than ACCOUNTADMIN.")


def _cloned_schema(catalog: Catalog, schema: SchemaEntry) -> Iterator[Need]:
    """USAGE on a schema a clone copies, and SELECT on each of its tables, as cloning each table alone needs.

    A role clones no table it could not read: a clone of the schema (or of
    its database) that holds one fails as a whole and creates nothing. The
    error names the schema, since the role may not know the table exists.
    """
    securable = schema_securable(catalog, schema)
    yield Need(securable, (Privilege.USAGE,))
    for table in catalog.tables(schema):
        yield Need(Securable("TABLE", table.id, table.qualified, (securable,)), (Privilege.SELECT,), denied_on=securable)


_MOVE_PRIVILEGE = {**_CREATE_PRIVILEGE, "STREAM": Privilege.CREATE_STREAM}


def _moved(tables: Tables, alter: exp.Alter) -> Iterator[Need | None]:
    """``ALTER … RENAME TO`` another schema creates the object there: USAGE and CREATE <kind> on that schema."""
    privilege = _MOVE_PRIVILEGE.get(str(alter.args.get("kind") or "").upper())
    for action in alter.args.get("actions") or []:
        if privilege is None or not isinstance(action, exp.AlterRename) or not isinstance(action.this, exp.Table):
            continue
        old, new = tables.name(alter.this), tables.name(action.this)
        if (old.database, old.schema) != (new.database, new.schema):
            yield from _create_in_schema(tables, action.this, privilege)


def _create_in_schema(tables: Tables, target: exp.Table, privilege: Privilege) -> Iterator[Need | None]:
    name = tables.name(target)
    schema = named_schema(tables.catalog, name.database, name.schema)
    if schema is not None:
        yield Need(schema, (Privilege.USAGE,))
        yield Need(schema, (privilege,))


def _drop(tables: Tables, expression: exp.Drop) -> Iterator[Need | None]:
    kind = str(expression.args.get("kind") or "").upper()
    for target in expression.args.get("tables") or []:
        if isinstance(target, exp.Table):
            yield from _owned(tables, target, kind, modify=kind == "TABLE")


def _owned(tables: Tables, target: exp.Table, kind: str, *, modify: bool = False) -> Iterator[Need | None]:
    """OWNERSHIP (or, on a table, MODIFY where ``modify``) of the object ``target`` names."""
    catalog = tables.catalog
    if kind == "DATABASE":
        securable = database_securable(catalog, database_name(target))
    elif kind == "SCHEMA":
        securable = named_schema(catalog, *schema_name(target, database=tables.scope.database))
    elif kind in ("TABLE", "VIEW", "STREAM", "SEQUENCE", "STAGE", "FILE FORMAT"):
        securable = relation(tables, target, (kind,))
    else:
        securable = None
    privileges = (Privilege.MODIFY,) if modify else (Privilege.OWNERSHIP,)
    yield Need(securable, privileges) if securable else None


def _seen(tables: Tables, target: exp.Table, kind: str) -> Iterator[Need | None]:
    """That the role sees the object ``target`` names (any privilege on it), and may use its containers."""
    catalog = tables.catalog
    if kind == "DATABASE":
        securable = database_securable(catalog, database_name(target))
    elif kind == "SCHEMA":
        securable = named_schema(catalog, *schema_name(target, database=tables.scope.database))
    else:
        securable = relation(tables, target, ("TABLE", "VIEW"))
    yield Need(securable, ()) if securable else None


def _show_scope(tables: Tables, scope: exp.Table, kind: str) -> Iterator[Need | None]:
    """SHOW … IN TABLE t (VIEW v) needs to see it; IN SCHEMA s and IN DATABASE d need USAGE on them (else they do not exist)."""
    catalog = tables.catalog
    if kind in ("TABLE", "VIEW"):
        yield from _seen(tables, scope, kind)
    elif kind == "DATABASE":
        database = database_securable(catalog, scope.name)
        yield Need(database, (Privilege.USAGE,)) if database else None
    else:
        schema = named_schema(catalog, *schema_name(scope, database=tables.session.database))
        yield Need(schema, (Privilege.USAGE,)) if schema else None


def _use(tables: Tables, expression: exp.Use) -> Iterator[Need | None]:
    kind = str(expression.args.get("kind") or "DATABASE").upper()
    catalog = tables.catalog
    if kind == "DATABASE":
        database = database_securable(catalog, database_name(expression.this))
        yield Need(database, (Privilege.USAGE,)) if database else None
    elif kind == "SCHEMA":
        schema = named_schema(catalog, *schema_name(expression.this, database=tables.session.database))
        yield Need(schema, (Privilege.USAGE,)) if schema else None
