"""DDL: databases, schemas and tables; DROP/UNDROP; USE; RENAME; parameters."""

from __future__ import annotations

import datetime as dt
import functools
import sqlite3
import uuid
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import ObjectKind, SchemaObjectEntry, TableEntry, TableKind
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.delta import statements
from lakeclone.dialect import expressions as lx
from lakeclone.engine import needs, registry, results
from lakeclone.engine.alter_columns import alter_columns, is_column_action
from lakeclone.engine.compiler import spark_sql
from lakeclone.engine.objects import (
    drop_object,
    external_location,
    is_external,
    location_of,
    properties_of,
    require_database,
    require_free_name,
    require_object,
    require_schema,
    schema_object,
    store_parameters,
    value_of,
)
from lakeclone.engine.schema import struct_from_columns
from lakeclone.errors import (
    InvalidLocationError,
    ObjectExistsError,
    ObjectNotFoundError,
    SqlCompilationError,
    UnsupportedStatementError,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution
    from lakeclone.engine.registry import TableDefinition

# Databases and schemas ------------------------------------------------------


def _create_type(expression: exp.Expression) -> str:
    """CREATE_TABLE, CREATE_TABLE_AS_SELECT, CREATE_VIEW, or CREATE for other kinds, as Snowflake's query history has them."""
    kind = ObjectKind.named(expression.args.get("kind"))
    if kind is ObjectKind.TABLE:
        return "CREATE_TABLE_AS_SELECT" if isinstance(expression.expression, exp.Query) else "CREATE_TABLE"
    return "CREATE_VIEW" if kind is ObjectKind.VIEW else "CREATE"


def _alter_type(expression: exp.Expression) -> str:
    return "ALTER_TABLE" if ObjectKind.named(expression.args.get("kind")) is ObjectKind.TABLE else "ALTER"


@registry.statement(exp.Create, bind=needs.create, query_type=_create_type)
def create(execution: Execution) -> DataFrame:
    kind = ObjectKind.named(execution.expression.args.get("kind"))
    if execution.expression.args.get("clone") is not None:
        if registry.SLOTS.clone is None:
            raise UnsupportedStatementError(execution.sql)
        return registry.SLOTS.clone(execution)
    own = {ObjectKind.DATABASE: _create_database, ObjectKind.SCHEMA: _create_schema, ObjectKind.TABLE: _create_table}
    if kind in own:
        return own[kind](execution)
    create = schema_object(execution, kind).create
    if create is None:
        raise UnsupportedStatementError(execution.sql)
    return create(execution)


def _create_database(execution: Execution) -> DataFrame:
    expression = execution.expression
    name = database_name(expression.this)
    catalog = execution.catalog
    settings = properties_of(expression, ObjectKind.DATABASE)
    with execution.work.records():
        existing = catalog.objects.database(name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name)
            catalog.objects.drop_database(existing, execution.now())
        database = catalog.objects.create_database(name, execution.now())
        catalog.objects.create_schema(database, "PUBLIC", execution.now())
        store_parameters(execution, ObjectKind.DATABASE, database.id, settings)
    execution.session.database, execution.session.schema = name, "PUBLIC"
    return results.status(execution.spark, f"Database {name} successfully created.")


# The schema whose views describe a database, in every database.
INFORMATION_SCHEMA = "INFORMATION_SCHEMA"


def _create_schema(execution: Execution) -> DataFrame:
    expression = execution.expression
    parent, name = schema_name(expression.this, database=execution.session.database)
    catalog = execution.catalog
    settings = properties_of(expression, ObjectKind.SCHEMA)
    if name == INFORMATION_SCHEMA:  # every database has one, whose views are read, never created
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name} already exists, statement succeeded.")
        raise ObjectExistsError(name)
    with execution.work.records():
        database = require_database(execution, parent)
        existing = catalog.objects.schema(parent, name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name)
            catalog.objects.drop_schema(existing, execution.now())
        schema = catalog.objects.create_schema(database, name, execution.now())
        store_parameters(execution, ObjectKind.SCHEMA, schema.id, settings)
    execution.session.database, execution.session.schema = parent, name
    return results.status(execution.spark, f"Schema {name} successfully created.")


# Tables -----------------------------------------------------------------------


def _create_table(execution: Execution) -> DataFrame:
    expression = execution.expression
    assert isinstance(expression, exp.Create)
    target = expression.this
    elements: list[exp.Expression] | None = None
    if isinstance(target, exp.Schema):
        elements, target = list(target.expressions), target.this
    name = execution.tables.name(target)
    settings = properties_of(expression, ObjectKind.TABLE)
    external = is_external(expression)
    location_text = location_of(expression)
    if external and not location_text:
        raise SqlCompilationError("An external table needs a LOCATION.")
    if location_text and not external:
        raise SqlCompilationError("LOCATION is only allowed with CREATE EXTERNAL TABLE.")
    replace = bool(expression.args.get("replace"))
    query = expression.expression

    catalog = execution.catalog
    schema = require_schema(execution, name.database, name.schema)
    existing = catalog.objects.table(name.database, name.schema, name.name)
    if existing is not None and not replace:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
        raise ObjectExistsError(name.name)
    require_free_name(execution, name)
    definitions: list[TableDefinition] = [
        reader(execution, name, expression, elements or []) for reader in registry.TABLE_DEFINITIONS
    ]
    consumed = set().union(*(d.consumed for d in definitions))

    properties: dict[str, str] = {}
    for key, value in settings.items():
        if key in registry.CREATE_PROPERTIES and value is not None:
            properties.update(registry.CREATE_PROPERTIES[key](value))
    table_id = uuid.uuid4().hex
    location = (
        external_location(execution.tables, location_text) if external and location_text else execution.managed_location(table_id)
    )
    log = execution.delta.table(location)
    adopted = external and log.exists()
    owns_folder = not adopted
    if adopted:
        if elements or query is not None:
            raise SqlCompilationError(f"Location '{location_text}' already holds a Delta table; omit the columns to use it.")
    else:
        _prepare_folder(execution, location, location_text or location)
        if query is not None:
            if elements:
                raise SqlCompilationError("CREATE TABLE AS SELECT takes its columns from the query.")
            frame = execution.spark.sql(spark_sql(query, execution.tables))
            check_column_names(frame.columns)
            view = f"lc_ctas_{execution.query_id.replace('-', '')}"
            frame.createOrReplaceTempView(view)
            try:
                with execution.work.delta(target=location):
                    statements.create_table_as(
                        execution.spark, location, view, comment=settings.get("COMMENT"), properties=properties
                    )
            finally:
                execution.spark.catalog.dropTempView(view)
        elif elements:
            schema_struct = struct_from_columns(elements, consumed)
            check_column_names(schema_struct.fieldNames())
            with execution.work.delta():
                statements.create_table(
                    execution.spark, location, schema_struct, comment=settings.get("COMMENT"), properties=properties
                )
        else:
            raise SqlCompilationError("CREATE TABLE needs a column list, AS SELECT, or CLONE.")

    try:
        with execution.work.records():
            require_free_name(execution, name)
            current = catalog.objects.table(name.database, name.schema, name.name)
            if current is not None:
                if not replace:
                    raise ObjectExistsError(name.name)
                catalog.objects.drop_table(current, execution.now())
            entry = catalog.objects.create_table(
                schema,
                name.name,
                kind=TableKind.EXTERNAL if external else TableKind.MANAGED,
                location=location,
                now=execution.now(),
                table_id=table_id,
                owns_folder=owns_folder,
            )
            store_parameters(execution, ObjectKind.TABLE, entry.id, settings)
            for definition in definitions:
                definition.store(catalog, entry)
    except sqlite3.IntegrityError:
        raise ObjectExistsError(name.name) from None
    return results.status(execution.spark, f"Table {name.name} successfully created.")


def _prepare_folder(execution: Execution, location: str, label: str) -> None:
    """Make sure a new table's folder is empty, and undo what the statement writes there if it fails.

    Raises:
        InvalidLocationError: the folder holds files but no Delta table.
    """
    storage = execution.storage
    if storage.is_file(location):
        raise InvalidLocationError(f"Location '{label}' is a file, not a folder.")
    if storage.has_entries(location):
        raise InvalidLocationError(f"Location '{label}' is not empty and holds no Delta table; a table needs an empty folder.")
    # A folder that was there before: only what the statement puts into it is undone.
    execution.work.writes_new_table_in(location, made=not storage.exists(location))


def check_column_names(names: list[str]) -> None:
    """Refuse columns of which two have one name, ignoring case as Spark does when it resolves them."""
    seen: set[str] = set()
    for column in names:
        if column.upper() in seen:
            raise SqlCompilationError(f"duplicate column name '{column}'")
        seen.add(column.upper())


# DROP and UNDROP -----------------------------------------------------------------


# What DROP reads; sqlglot parses more (PURGE, MATERIALIZED, ...), which lakeclone refuses.
_DROP_CLAUSES = {"this", "kind", "tables", "exists", "cascade", "restrict"}


def _check_restrict(execution: Execution, restrict: bool, dropped: list[TableEntry]) -> None:
    """``DROP … RESTRICT``: refuse while a table outside what is dropped depends on it.

    ``CASCADE`` (the default) drops regardless, as Snowflake does for tables.
    """
    if restrict:
        for check in registry.DROP_RESTRICTIONS:
            check(execution, dropped)


@registry.statement(exp.Drop, bind=needs.drop, query_type="DROP")
def drop(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = ObjectKind.named(expression.args.get("kind"))
    targets = expression.args.get("tables") or []
    if len(targets) != 1:
        raise UnsupportedStatementError(execution.sql)
    target = targets[0]
    for key, value in expression.args.items():
        if value and key not in _DROP_CLAUSES:
            raise SqlCompilationError(f"DROP … {key.upper()} is not supported by lakeclone.")
    catalog = execution.catalog
    if_exists = bool(expression.args.get("exists"))
    restrict = bool(expression.args.get("restrict"))
    entry: object | None
    with execution.work.records():
        if kind is ObjectKind.TABLE:
            qualified = execution.tables.name(target)
            name, label = str(qualified), qualified.name
            entry = catalog.objects.table(qualified.database, qualified.schema, qualified.name)
            if entry is not None:
                _check_restrict(execution, restrict, [entry])
                catalog.objects.drop_table(entry, execution.now())
        elif kind is ObjectKind.SCHEMA:
            database, label = schema_name(target, database=execution.session.database)
            entry = catalog.objects.schema(database, label)
            if entry is not None:
                _check_restrict(execution, restrict, catalog.objects.tables(entry))
                catalog.objects.drop_schema(entry, execution.now())
            name = f"{database}.{label}"
        elif kind is ObjectKind.DATABASE:
            label = database_name(target)
            entry = catalog.objects.database(label)
            if entry is not None:
                _check_restrict(
                    execution, restrict, [t for s in catalog.objects.schemas(entry) for t in catalog.objects.tables(s)]
                )
                catalog.objects.drop_database(entry, execution.now())
            name = label
        else:
            name, label, entry = drop_object(execution, kind, target)
    if entry is None and not if_exists:
        raise ObjectNotFoundError(name)
    for purge in registry.PURGES:
        execution.work.after_commit(f"purge after {label} was dropped", functools.partial(purge, execution))
    if entry is None:
        return results.status(execution.spark, f"Drop statement executed successfully ({label} already dropped).")
    return results.status(execution.spark, f"{label} successfully dropped.")


@registry.statement(exp.Undrop, bind=needs.undrop, query_type="UNDROP")
def undrop(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = ObjectKind.named(expression.args.get("kind"))
    target = expression.this
    catalog = execution.catalog
    now = execution.started_at
    with execution.work.records():
        if kind is ObjectKind.TABLE:
            name = execution.tables.name(target)
            schema = require_schema(execution, name.database, name.schema)
            if catalog.objects.table(name.database, name.schema, name.name) is not None:
                raise ObjectExistsError(name.name)
            require_free_name(execution, name)
            dropped = catalog.objects.last_dropped_table(schema, name.name)
            if dropped is None or not _table_within_window(execution, dropped, now):
                raise SqlCompilationError(f"Table {name.name} did not exist or was purged.")
            catalog.objects.undrop_table(dropped)
            label = name.name
        elif kind is ObjectKind.SCHEMA:
            parent, label = schema_name(target, database=execution.session.database)
            database = require_database(execution, parent)
            if catalog.objects.schema(parent, label) is not None:
                raise ObjectExistsError(label)
            dropped_schema = catalog.objects.last_dropped_schema(database, label)
            chain = [(ObjectKind.SCHEMA, dropped_schema.id), (ObjectKind.DATABASE, database.id)] if dropped_schema else []
            if dropped_schema is None or not _within_window(execution, dropped_schema.dropped_at, chain, now):
                raise SqlCompilationError(f"Schema {label} did not exist or was purged.")
            _keep_expired_tables_dropped(execution, now)
            catalog.objects.undrop_schema(dropped_schema)
        elif kind is ObjectKind.DATABASE:
            label = database_name(target)
            if catalog.objects.database(label) is not None:
                raise ObjectExistsError(label)
            dropped_db = catalog.objects.last_dropped_database(label)
            chain = [(ObjectKind.DATABASE, dropped_db.id)] if dropped_db else []
            if dropped_db is None or not _within_window(execution, dropped_db.dropped_at, chain, now):
                raise SqlCompilationError(f"Database {label} did not exist or was purged.")
            _keep_expired_tables_dropped(execution, now)
            catalog.objects.undrop_database(dropped_db)
        else:
            raise UnsupportedStatementError(execution.sql)
    return results.status(execution.spark, f"{kind.capitalize()} {label} successfully restored.")


def _table_within_window(execution: Execution, table: TableEntry, now: dt.datetime) -> bool:
    """A dropped table can come back while its retention period lasts."""
    assert table.dropped_at is not None
    return execution.catalog.parameters.undroppable(table, table.dropped_at, now)


def _keep_expired_tables_dropped(execution: Execution, now: dt.datetime) -> None:
    """Tables whose UNDROP window passed while their schema or database was dropped stay dropped.

    They are dropped as of when their schema or database was, so undropping
    that brings them back only inside their own window, whether or not a purge
    has run since; the next purge deletes them as it would have anyway.
    """
    catalog = execution.catalog
    for table, stopped in catalog.objects.unpurged_tables():
        if table.dropped_at is None and stopped is not None and not catalog.parameters.undroppable(table, stopped, now):
            catalog.objects.drop_table(table, stopped)


def _within_window(
    execution: Execution, dropped_at: dt.datetime | None, chain: list[tuple[ObjectKind, str]], now: dt.datetime
) -> bool:
    assert dropped_at is not None
    return now <= dropped_at + execution.catalog.parameters.retention_of(chain)


# USE, ALTER, parameters ----------------------------------------------------------------


@registry.statement(exp.Use, bind=needs.use, query_type="USE")
def use(execution: Execution) -> DataFrame:
    expression = execution.expression
    word = str(expression.args.get("kind") or "DATABASE").upper()
    kind = ObjectKind.named(word)
    target = expression.this
    if kind is ObjectKind.SCHEMA:
        parent, name = schema_name(target, database=execution.session.database)
        require_schema(execution, parent, name)
        execution.session.database, execution.session.schema = parent, name
    elif kind is ObjectKind.DATABASE:
        name = database_name(target)
        require_database(execution, name)
        execution.session.database = name
        execution.session.schema = "PUBLIC" if execution.catalog.objects.schema(name, "PUBLIC") else None
    elif word in registry.USES:
        return registry.USES[word](execution)
    else:
        raise UnsupportedStatementError(execution.sql)
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(exp.Alter, bind=needs.alter, query_type=_alter_type)
def alter(execution: Execution) -> DataFrame:
    """ALTER TABLE|SCHEMA|DATABASE x RENAME TO y, features' kinds (VIEW), and a table's columns (engine/alter_columns.py).

    Other ALTERs have statements of their own.
    """
    expression = execution.expression
    kind = ObjectKind.named(expression.args.get("kind"))
    actions = expression.args.get("actions") or []
    if kind is ObjectKind.TABLE and actions and all(is_column_action(action) for action in actions):
        alter_columns(execution, expression.this, actions)
        return results.status(execution.spark, "Statement executed successfully.")
    if kind is ObjectKind.TABLE and len(actions) == 1 and isinstance(actions[0], exp.SwapTable):
        with execution.work.records():
            _swap_tables(execution, expression.this, actions[0].this)
        return results.status(execution.spark, "Statement executed successfully.")
    own = {ObjectKind.TABLE: _rename_table, ObjectKind.SCHEMA: _rename_schema, ObjectKind.DATABASE: _rename_database}
    rename = own.get(kind) if kind in own else schema_object(execution, kind).rename
    if rename is None or len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise UnsupportedStatementError(execution.sql)
    with execution.work.records():
        rename(execution, expression.this, actions[0].this)
    return results.status(execution.spark, "Statement executed successfully.")


def _rename_table(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    new_name = execution.tables.name(new)
    entry = execution.tables.entry(old)
    schema = require_schema(execution, new_name.database, new_name.schema)
    if execution.catalog.objects.table(new_name.database, new_name.schema, new_name.name) is not None:
        raise ObjectExistsError(new_name.name)
    require_free_name(execution, new_name)
    execution.catalog.objects.rename_table(entry, schema, new_name.name)


def _swap_tables(execution: Execution, first: exp.Table, second: exp.Table) -> None:
    """``ALTER TABLE a SWAP WITH b``: each table takes the other's name (and schema), in one catalog transaction.

    What names a table by its name (a view's query, a statement) finds the
    other table from now on; what holds it by identity (a stream, a clone's
    lineage, grants, policies) stays with the same table under its new name.
    """
    one, other = execution.tables.entry(first), execution.tables.entry(second)
    if one.id == other.id:
        raise SqlCompilationError(f"Table {one.qualified} cannot be swapped with itself.")
    catalog = execution.catalog
    one_schema = require_schema(execution, one.database, one.schema)
    other_schema = require_schema(execution, other.database, other.schema)
    # Names are unique among live tables at every step: one steps aside under a name no table can have.
    catalog.objects.rename_table(one, one_schema, f"{one.name}\0swap")
    catalog.objects.rename_table(other, one_schema, one.name)
    catalog.objects.rename_table(one, other_schema, other.name)


def _rename_schema(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    database, name = schema_name(old, database=execution.session.database)
    schema = require_schema(execution, database, name)
    new_database, new_name = schema_name(new, database=database)
    if new_database != database:
        raise SqlCompilationError("A schema cannot be moved to another database by RENAME.")
    if execution.catalog.objects.schema(database, new_name) is not None:
        raise ObjectExistsError(new_name)
    execution.catalog.objects.rename_schema(schema, new_name)
    if execution.session.database == database and execution.session.schema == name:
        execution.session.schema = new_name


def _rename_database(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    name, new_name = database_name(old), database_name(new)
    database = require_database(execution, name)
    if execution.catalog.objects.database(new_name) is not None:
        raise ObjectExistsError(new_name)
    execution.catalog.objects.rename_database(database, new_name)
    if execution.session.database == name:
        execution.session.database = new_name


def _parameter_settings(execution: Execution, kind: ObjectKind) -> dict[str, str]:
    settings = {}
    for prop in execution.expression.expressions:
        parameter = params.lookup(prop.name, kind)
        settings[parameter.key] = parameter.normalize(value_of(prop.args["value"]))
    return settings


@registry.statement(lx.SetParameters, bind=needs.alter, query_type="ALTER")
def set_parameters(execution: Execution) -> DataFrame:
    kind = ObjectKind(str(execution.expression.args["kind"]).upper())
    object_id = _parameter_owner(execution, kind, execution.expression.this)
    if object_id is not None:
        settings = _parameter_settings(execution, kind)
        with execution.work.records():
            store_parameters(execution, kind, object_id, settings)
    return results.status(execution.spark, "Statement executed successfully.")


@registry.statement(lx.UnsetParameters, bind=needs.alter, query_type="ALTER")
def unset_parameters(execution: Execution) -> DataFrame:
    kind = ObjectKind(str(execution.expression.args["kind"]).upper())
    object_id = _parameter_owner(execution, kind, execution.expression.this)
    if object_id is not None:
        keys = [params.lookup(var.name, kind).key for var in execution.expression.expressions]
        with execution.work.records():
            store_parameters(execution, kind, object_id, dict.fromkeys(keys))
    return results.status(execution.spark, "Statement executed successfully.")


def _parameter_owner(execution: Execution, kind: ObjectKind, target: exp.Table) -> str | None:
    """The id of the object whose parameters change; None for a missing one under ALTER ... IF EXISTS."""
    try:
        if kind in registry.SCHEMA_OBJECTS:
            if not registry.SCHEMA_OBJECTS[kind].takes_parameters:
                raise UnsupportedStatementError(execution.sql)
            return require_object(execution, kind, target, SchemaObjectEntry).id
        if kind is ObjectKind.TABLE:
            return execution.tables.entry(target).id
        if kind is ObjectKind.SCHEMA:
            database, name = schema_name(target, database=execution.session.database)
            return require_schema(execution, database, name).id
        return require_database(execution, database_name(target)).id
    except ObjectNotFoundError:
        if execution.expression.args.get("exists"):
            return None
        raise
