"""The binds of the engine's own statements: what each needs, registered with its run.

Each function takes the statement's lookups and its syntax tree, resolves
each name the statement uses, and yields a
:class:`~lakeclone.engine.privileges.Need` per object a name holds (None where
a name holds nothing: the statement's run reports that as it always has).
While the statement runs, each name holds the object it held here. They run
lazily, and only for a role that is not ACCOUNTADMIN.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.catalog.policies import POLICY_KINDS
from lakeclone.engine import registry
from lakeclone.engine.privileges import (
    ACCOUNT_SECURABLE,
    Need,
    Privilege,
    Requirement,
    Securable,
    create_in_schema,
    database_securable,
    named_formats,
    named_schema,
    owned,
    reads,
    reads_of,
    relation,
    schema_securable,
    seen,
    sequence_need,
)
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.catalog.entries import SchemaEntry
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.tables import Tables


def _kind(expression: exp.Expression, default: ObjectKind) -> ObjectKind | None:
    """The kind of object a statement names (``default`` where it names none); None for a kind lakeclone does not know."""
    kind = expression.args.get("kind")
    return ObjectKind.named(kind) if kind else default


def nothing(tables: Tables, expression: exp.Expression) -> Iterable[Need | None]:
    """A statement any role may run: it names no object, or checks what it names itself."""
    return ()


def query(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """SELECT on each relation a query reads, and USAGE on the stages whose files it reads."""
    yield from reads(tables, expression)


def explain(tables: Tables, expression: exp.Expression) -> Iterable[Requirement | None]:
    """Explaining a statement needs what running it needs; one lakeclone does not run, EXPLAIN refuses itself."""
    explained = expression.this
    statement = registry.STATEMENTS.get(type(explained))
    return statement.bind(tables, explained) if statement is not None else ()


def modify(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """MODIFY on the table a statement changes without DML (VACUUM, OPTIMIZE, RESTORE)."""
    target = relation(tables, expression.this, (ObjectKind.TABLE,))
    yield Need(target, (Privilege.MODIFY,)) if target else None


def read_history(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """SELECT on the table whose history or detail is described."""
    target = relation(tables, expression.this, (ObjectKind.TABLE,))
    yield Need(target, (Privilege.SELECT,)) if target else None


def describe(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """That the role sees the object described."""
    kind = _kind(expression, ObjectKind.TABLE)
    described = (ObjectKind.VIEW, ObjectKind.STREAM, ObjectKind.STAGE, ObjectKind.FILE_FORMAT, *POLICY_KINDS)
    kinds = (kind,) if kind in described else (ObjectKind.TABLE, ObjectKind.VIEW)
    target = relation(tables, expression.this, kinds)
    yield Need(target, ()) if target else None


def alter(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """OWNERSHIP of what ALTER (or SET/UNSET of its parameters) changes, and of the table a SWAP WITH names;
    what a rename into another schema needs there."""
    yield from owned(tables, expression.this, _kind(expression, ObjectKind.TABLE))
    if isinstance(expression, exp.Alter):
        for action in expression.args.get("actions") or []:
            if isinstance(action, exp.SwapTable) and isinstance(action.this, exp.Table):
                yield from owned(tables, action.this, ObjectKind.TABLE)
        yield from _moved(tables, expression)


def show_parameters(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """That the role sees the object whose parameters are shown (none for the session's or the account's)."""
    if expression.this is not None:
        yield from seen(tables, expression.this, _kind(expression, ObjectKind.TABLE))


def show(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """What a SHOW's ``IN …`` scope needs; what it lists is filtered to what the role sees, not checked."""
    scope = expression.args.get("scope")
    if isinstance(scope, exp.Table):
        yield from _show_scope(tables, scope, ObjectKind.named(expression.args.get("scope_kind")))


def _dml_target(expression: exp.Expression) -> exp.Table | None:
    target = expression.this
    if isinstance(target, exp.Schema):
        target = target.this
    return target if isinstance(target, exp.Table) else None


def dml(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """The writes a DML statement makes on its target, the sequences its defaults draw from, and what it reads."""
    target = _dml_target(expression)
    if target is not None:
        securable = relation(tables, target, (ObjectKind.TABLE,))
        if securable is not None:
            for privilege in _writes(expression):
                yield Need(securable, (privilege,))
            yield from _defaults_drawn(tables.catalog, securable, expression)
    yield from reads(tables, expression, skip=target)


def _defaults_drawn(catalog: Catalog, table: Securable, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE on each sequence whose NEXTVAL fills a column an INSERT (or a MERGE's INSERT) leaves out."""
    sequenced = {d.column.upper(): d.sequence_id for d in catalog.definitions.column_defaults(table.id) if d.sequence_id}
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
        yield sequence_need(catalog, sequence_id)


def _nextval_defaults(tables: Tables, create: exp.Expression) -> Iterator[Need | None]:
    """USAGE on each sequence a CREATE TABLE's ``DEFAULT seq.NEXTVAL`` names."""
    for default in create.find_all(exp.DefaultColumnConstraint):
        node = default.this
        if isinstance(node, exp.Column) and node.name.upper() == "NEXTVAL" and node.table:
            parts = {k: node.args[k].copy() for k in ("db", "catalog") if node.args.get(k) is not None}
            sequence = relation(tables, exp.Table(this=node.args["table"].copy(), **parts), (ObjectKind.SEQUENCE,))
            yield Need(sequence, (Privilege.USAGE,)) if sequence else None


def undrop(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """OWNERSHIP of the dropped object, and the privilege to create it in its parent (Snowflake's UNDROP)."""
    catalog = tables.catalog
    kind = _kind(expression, ObjectKind.TABLE)
    if kind is ObjectKind.TABLE:
        name = tables.name(expression.this)
        schema_entry = catalog.objects.schema(name.database, name.schema)
        yield from create_in_schema(tables, expression.this, Privilege.CREATE_TABLE)
        table = catalog.objects.last_dropped_table(schema_entry, name.name) if schema_entry else None
        if table is not None and schema_entry is not None:
            dropped = Securable(ObjectKind.TABLE, table.id, str(name), (schema_securable(catalog, schema_entry),))
            yield Need(dropped, (Privilege.OWNERSHIP,))
    elif kind is ObjectKind.SCHEMA:
        parent, label = schema_name(expression.this, database=tables.scope.database)
        database = catalog.objects.database(parent)
        if database is None:
            return
        container = Securable(ObjectKind.DATABASE, database.id, database.name)
        yield Need(container, (Privilege.USAGE,))
        yield Need(container, (Privilege.CREATE_SCHEMA,))
        schema = catalog.objects.last_dropped_schema(database, label)
        if schema is not None:
            yield Need(Securable(ObjectKind.SCHEMA, schema.id, schema.qualified, (container,)), (Privilege.OWNERSHIP,))
    elif kind is ObjectKind.DATABASE:
        yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_DATABASE,))
        dropped_database = catalog.objects.last_dropped_database(database_name(expression.this))
        if dropped_database is not None:
            yield Need(Securable(ObjectKind.DATABASE, dropped_database.id, dropped_database.name), (Privilege.OWNERSHIP,))


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
    ObjectKind.TABLE: Privilege.CREATE_TABLE,
    ObjectKind.VIEW: Privilege.CREATE_VIEW,
    ObjectKind.SEQUENCE: Privilege.CREATE_SEQUENCE,
    ObjectKind.STAGE: Privilege.CREATE_STAGE,
    ObjectKind.FILE_FORMAT: Privilege.CREATE_FILE_FORMAT,
}


def create(tables: Tables, expression: exp.Expression) -> Iterator[Requirement | None]:
    """CREATE <kind> where the object goes; OWNERSHIP (MODIFY for a table) of what OR REPLACE replaces; what it reads."""
    catalog = tables.catalog
    text = str(expression.args.get("kind") or "").upper()
    kind = ObjectKind.named(text)
    target = expression.this
    if isinstance(target, exp.Schema):
        target = target.this
    clone = expression.args.get("clone")
    if kind in _CREATE_PRIVILEGE:
        yield from create_in_schema(tables, target, _CREATE_PRIVILEGE[kind])
        if expression.args.get("replace"):
            existing = relation(tables, target, (kind,))
            modify = kind is ObjectKind.TABLE
            yield Need(existing, (Privilege.MODIFY,) if modify else (Privilege.OWNERSHIP,)) if existing else None
        if (kind is ObjectKind.TABLE and expression.find(exp.LocationProperty) is not None) or kind is ObjectKind.STAGE:
            # A table's LOCATION and a stage's URL reach files outside the warehouse.
            yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_EXTERNAL_TABLE,))
        if kind is ObjectKind.STAGE:
            yield from named_formats(tables, expression)
        if kind is ObjectKind.TABLE:
            yield from _nextval_defaults(tables, expression)
        if clone is not None:
            yield from reads_of(tables, [clone.this])
        elif expression.expression is not None:
            yield from reads(tables, expression.expression)
    elif kind is ObjectKind.SCHEMA:
        database, _ = schema_name(target, database=tables.scope.database)
        securable = database_securable(catalog, database)
        if securable is not None:
            yield Need(securable, (Privilege.USAGE,))
            yield Need(securable, (Privilege.CREATE_SCHEMA,))
        if clone is not None:
            source_database, source = schema_name(clone.this, database=tables.scope.database)
            source_schema = catalog.objects.schema(source_database, source)
            if source_schema is not None:
                yield from _cloned_schema(catalog, source_schema)
    elif kind is ObjectKind.DATABASE:
        yield Need(ACCOUNT_SECURABLE, (Privilege.CREATE_DATABASE,))
        if clone is not None:
            source_entry = catalog.objects.database(database_name(clone.this))
            if source_entry is not None:
                yield Need(Securable(ObjectKind.DATABASE, source_entry.id, source_entry.name), (Privilege.USAGE,))
                for schema_entry in catalog.objects.schemas(source_entry):
                    yield from _cloned_schema(catalog, schema_entry)
    else:
        raise SqlCompilationError(f"CREATE {text} is not supported for roles other than ACCOUNTADMIN.")


def _cloned_schema(catalog: Catalog, schema: SchemaEntry) -> Iterator[Need]:
    """USAGE on a schema a clone copies, and SELECT on each of its tables, as cloning each table alone needs.

    A role clones no table it could not read: a clone of the schema (or of
    its database) that holds one fails as a whole and creates nothing. The
    error names the schema, since the role may not know the table exists.
    """
    securable = schema_securable(catalog, schema)
    yield Need(securable, (Privilege.USAGE,))
    for table in catalog.objects.tables(schema):
        yield Need(Securable(ObjectKind.TABLE, table.id, table.qualified, (securable,)), (Privilege.SELECT,), denied_on=securable)


_MOVE_PRIVILEGE = {**_CREATE_PRIVILEGE, ObjectKind.STREAM: Privilege.CREATE_STREAM}


def _moved(tables: Tables, alter: exp.Alter) -> Iterator[Need | None]:
    """``ALTER … RENAME TO`` another schema creates the object there: USAGE and CREATE <kind> on that schema."""
    kind = ObjectKind.named(alter.args.get("kind"))
    privilege = _MOVE_PRIVILEGE.get(kind) if kind is not None else None
    for action in alter.args.get("actions") or []:
        if privilege is None or not isinstance(action, exp.AlterRename) or not isinstance(action.this, exp.Table):
            continue
        old, new = tables.name(alter.this), tables.name(action.this)
        if (old.database, old.schema) != (new.database, new.schema):
            yield from create_in_schema(tables, action.this, privilege)


def drop(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """OWNERSHIP of each object dropped (MODIFY does for a table)."""
    kind = ObjectKind.named(expression.args.get("kind"))
    for target in expression.args.get("tables") or []:
        if isinstance(target, exp.Table):
            yield from owned(tables, target, kind, modify=kind is ObjectKind.TABLE)


def _show_scope(tables: Tables, scope: exp.Table, kind: ObjectKind | None) -> Iterator[Need | None]:
    """SHOW … IN TABLE t (VIEW v) needs to see it; IN SCHEMA s and IN DATABASE d need USAGE on them (else they do not exist)."""
    catalog = tables.catalog
    if kind in (ObjectKind.TABLE, ObjectKind.VIEW):
        yield from seen(tables, scope, kind)
    elif kind is ObjectKind.DATABASE:
        database = database_securable(catalog, scope.name)
        yield Need(database, (Privilege.USAGE,)) if database else None
    else:
        schema = named_schema(catalog, *schema_name(scope, database=tables.session.database))
        yield Need(schema, (Privilege.USAGE,)) if schema else None


def use(tables: Tables, expression: exp.Expression) -> Iterator[Need | None]:
    """USAGE on the database or schema a session moves to."""
    kind = _kind(expression, ObjectKind.DATABASE)
    catalog = tables.catalog
    if kind is ObjectKind.DATABASE:
        database = database_securable(catalog, database_name(expression.this))
        yield Need(database, (Privilege.USAGE,)) if database else None
    elif kind is ObjectKind.SCHEMA:
        schema = named_schema(catalog, *schema_name(expression.this, database=tables.session.database))
        yield Need(schema, (Privilege.USAGE,)) if schema else None
