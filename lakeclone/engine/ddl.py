"""DDL: databases, schemas and tables; DROP/UNDROP; RENAME; parameters."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import sqlite3
import uuid
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.catalog.store import TableEntry
from lakeclone.delta.log import DeltaLog, open_log
from lakeclone.delta.writer import ROW_ID, write_data_files
from lakeclone.clones.create import create_clone
from lakeclone.clones.vacuum import purge_expired
from lakeclone.engine import clustering, constraints, results, sequences
from lakeclone.engine.objects import (
    is_external,
    location_of,
    properties_of,
    require_database,
    require_schema,
    store_parameters,
    value_of,
)
from lakeclone.engine.compiler import spark_sql
from lakeclone.engine.schema import struct_from_columns, with_new_row_ids
from lakeclone.errors import (
    ObjectExistsError,
    ObjectNotFoundError,
    SqlCompilationError,
    UnsupportedStatementError,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

# Databases and schemas ------------------------------------------------------


def create(execution: Execution) -> DataFrame:
    kind = str(execution.expression.args.get("kind") or "").upper()
    creators = {
        "DATABASE": _create_database,
        "SCHEMA": _create_schema,
        "TABLE": _create_table,
        "SEQUENCE": sequences.create_sequence,
    }
    if kind not in creators:
        raise UnsupportedStatementError(execution.sql)
    if execution.expression.args.get("clone") is not None:
        return create_clone(execution)
    return creators[kind](execution)


def _create_database(execution: Execution) -> DataFrame:
    expression = execution.expression
    name = database_name(expression.this)
    catalog = execution.catalog
    settings = properties_of(expression, params.DATABASE)
    with catalog.transaction():
        existing = catalog.database(name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name)
            catalog.drop_database(existing, execution.now())
        database = catalog.create_database(name, execution.now())
        catalog.create_schema(database, "PUBLIC", execution.now())
        store_parameters(execution, database.id, settings)
    execution.session.database, execution.session.schema = name, "PUBLIC"
    return results.status(execution.spark, f"Database {name} successfully created.")


def _create_schema(execution: Execution) -> DataFrame:
    expression = execution.expression
    parent, name = schema_name(expression.this, database=execution.session.database)
    catalog = execution.catalog
    settings = properties_of(expression, params.SCHEMA)
    with catalog.transaction():
        database = require_database(execution, parent)
        existing = catalog.schema(parent, name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name)
            catalog.drop_schema(existing, execution.now())
        schema = catalog.create_schema(database, name, execution.now())
        store_parameters(execution, schema.id, settings)
    execution.session.database, execution.session.schema = parent, name
    return results.status(execution.spark, f"Schema {name} successfully created.")


# Tables -----------------------------------------------------------------------


def _create_table(execution: Execution) -> DataFrame:
    expression = execution.expression
    target = expression.this
    columns = None
    if isinstance(target, exp.Schema):
        columns, target = target.expressions, target.this
    name = execution.tables.name(target)
    settings = properties_of(expression, params.TABLE)
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
    existing = catalog.table(name.database, name.schema, name.name)
    if existing is not None and not replace:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
        raise ObjectExistsError(name.name)
    definition = constraints.table_definition(execution, name, columns)
    columns = definition.columns
    cluster_key = clustering.key_of(expression)

    table_id = uuid.uuid4().hex
    location = os.path.abspath(location_text) if external else execution.managed_location(table_id)
    log = DeltaLog(location)
    adopted = external and log.exists()
    folder_existed = os.path.exists(location)
    operation = ("CREATE OR REPLACE TABLE" if replace else "CREATE TABLE") + (" AS SELECT" if query else "")
    if adopted:
        if columns or query:
            raise SqlCompilationError(
                f"Location '{location_text}' already holds a Delta table; omit the columns to use it."
            )
        open_log(location)
    else:
        try:
            _write_new_table(execution, log, name.name, columns, query, operation, settings)
        except BaseException:
            _discard(location, folder_existed=folder_existed)
            raise

    try:
        with catalog.transaction():
            current = catalog.table(name.database, name.schema, name.name)
            if current is not None:
                if not replace:
                    raise ObjectExistsError(name.name)
                catalog.drop_table(current, execution.now())
            entry = catalog.create_table(
                schema,
                name.name,
                kind="EXTERNAL" if external else "MANAGED",
                location=location,
                now=execution.now(),
                table_id=table_id,
            )
            store_parameters(execution, entry.id, settings)
            definition.store(catalog, entry)
            clustering.store_key(catalog, entry, cluster_key)
    except BaseException as error:
        if not adopted:
            _discard(location, folder_existed=folder_existed)
        if isinstance(error, sqlite3.IntegrityError):
            raise ObjectExistsError(name.name) from None
        raise
    return results.status(execution.spark, f"Table {name.name} successfully created.")


def _write_new_table(
    execution: Execution,
    log: DeltaLog,
    name: str,
    columns: list[exp.Expression] | None,
    query: exp.Expression | None,
    operation: str,
    settings: dict[str, str],
) -> None:
    from pyspark.sql.types import StructType

    adds = []
    if query is not None:
        frame = execution.spark.sql(spark_sql(query, execution.tables))
        schema = StructType([f for f in frame.schema.fields])
        if columns:
            raise SqlCompilationError("CREATE TABLE AS SELECT takes its columns from the query.")
        adds = write_data_files(with_new_row_ids(frame), log.location, now=execution.now())
    elif columns:
        schema = struct_from_columns(columns)
    else:
        raise SqlCompilationError("CREATE TABLE needs a column list, AS SELECT, or CLONE.")
    _check_column_names(schema.fieldNames())
    rows = sum(f.num_records for f in adds)
    log.create(
        json.dumps(schema.jsonValue()),
        name=name,
        adds=adds,
        info=execution.commit_info(
            operation,
            parameters={"description": settings.get("COMMENT", "")} if settings.get("COMMENT") else {},
            metrics={
                "numAddedFiles": len(adds),
                "numRemovedFiles": 0,
                "numAddedBytes": sum(f.size for f in adds),
                "numRemovedBytes": 0,
                "numOutputRows": rows,
            },
        ),
    )


def _check_column_names(names: list[str]) -> None:
    seen: set[str] = set()
    for column in names:
        if column.upper() in seen:
            raise SqlCompilationError(f"duplicate column name '{column}'")
        # Spark resolves names case-insensitively, so any spelling would clash.
        if column.upper() == ROW_ID.upper():
            raise SqlCompilationError(f"column name '{column}' is reserved")
        seen.add(column.upper())


def _discard(location: str, *, folder_existed: bool) -> None:
    """Undo a table creation that did not complete.

    A folder this statement made goes whole; in a folder that was already there
    (an external location) only the Delta log goes, so the table never existed.
    """
    if folder_existed:
        shutil.rmtree(os.path.join(location, "_delta_log"), ignore_errors=True)
    else:
        shutil.rmtree(location, ignore_errors=True)


# DROP and UNDROP -----------------------------------------------------------------


def drop(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = str(expression.args.get("kind") or "").upper()
    targets = expression.args.get("tables") or []
    if len(targets) != 1:
        raise UnsupportedStatementError(execution.sql)
    target = targets[0]
    catalog = execution.catalog
    if_exists = bool(expression.args.get("exists"))
    with catalog.transaction():
        if kind == "TABLE":
            name = execution.tables.name(target)
            label = name.name
            entry = catalog.table(name.database, name.schema, name.name)
            if entry is not None:
                catalog.drop_table(entry, execution.now())
        elif kind == "SCHEMA":
            database, label = schema_name(target, database=execution.session.database)
            entry = catalog.schema(database, label)
            if entry is not None:
                catalog.drop_schema(entry, execution.now())
            name = f"{database}.{label}"
        elif kind == "DATABASE":
            label = database_name(target)
            entry = catalog.database(label)
            if entry is not None:
                catalog.drop_database(entry, execution.now())
            name = label
        elif kind == "SEQUENCE":
            name, label, entry = sequences.drop_sequence(execution, target)
        else:
            raise UnsupportedStatementError(execution.sql)
    purge_expired(catalog, execution.started_at)
    if entry is None:
        if if_exists:
            return results.status(execution.spark, f"Drop statement executed successfully ({label} already dropped).")
        raise ObjectNotFoundError(str(name))
    return results.status(execution.spark, f"{label} successfully dropped.")


def undrop(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = str(expression.args.get("kind") or "").upper()
    target = expression.this
    catalog = execution.catalog
    now = execution.started_at
    with catalog.transaction():
        if kind == "TABLE":
            name = execution.tables.name(target)
            schema = require_schema(execution, name.database, name.schema)
            if catalog.table(name.database, name.schema, name.name) is not None:
                raise ObjectExistsError(name.name)
            dropped = catalog.last_dropped_table(schema, name.name)
            if dropped is None or not _within_window(execution, dropped, now):
                raise SqlCompilationError(f"Table {name.name} did not exist or was purged.")
            catalog.undrop_table(dropped)
            label = name.name
        elif kind == "SCHEMA":
            parent, label = schema_name(target, database=execution.session.database)
            database = require_database(execution, parent)
            if catalog.schema(parent, label) is not None:
                raise ObjectExistsError(label)
            dropped_schema = catalog.last_dropped_schema(database, label)
            if dropped_schema is None or not _object_within_window(execution, dropped_schema.id, dropped_schema.dropped_at, now, database.id):
                raise SqlCompilationError(f"Schema {label} did not exist or was purged.")
            catalog.undrop_schema(dropped_schema)
        elif kind == "DATABASE":
            label = database_name(target)
            if catalog.database(label) is not None:
                raise ObjectExistsError(label)
            dropped_db = catalog.last_dropped_database(label)
            if dropped_db is None or not _object_within_window(execution, dropped_db.id, dropped_db.dropped_at, now):
                raise SqlCompilationError(f"Database {label} did not exist or was purged.")
            catalog.undrop_database(dropped_db)
        else:
            raise UnsupportedStatementError(execution.sql)
    return results.status(execution.spark, f"{kind.capitalize()} {label} successfully restored.")


def _within_window(execution: Execution, table: TableEntry, now: dt.datetime) -> bool:
    """A dropped table can come back while its retention period lasts."""
    assert table.dropped_at is not None
    return now <= table.dropped_at + execution.catalog.retention(table)


def _object_within_window(
    execution: Execution, object_id: str, dropped_at: dt.datetime | None, now: dt.datetime, *parents: str
) -> bool:
    assert dropped_at is not None
    key = "DATA_RETENTION_TIME_IN_DAYS"
    value = params.PARAMETERS[key].default
    for owner in (object_id, *parents):
        found = execution.catalog.parameters(owner).get(key)
        if found is not None:
            value = found
            break
    return now <= dropped_at + dt.timedelta(days=int(value))


# USE, ALTER, parameters ----------------------------------------------------------------


def use(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = str(expression.args.get("kind") or "DATABASE").upper()
    target = expression.this
    if kind == "SCHEMA":
        parent, name = schema_name(target, database=execution.session.database)
        require_schema(execution, parent, name)
        execution.session.database, execution.session.schema = parent, name
    elif kind == "DATABASE":
        name = database_name(target)
        require_database(execution, name)
        execution.session.database = name
        execution.session.schema = "PUBLIC" if execution.catalog.schema(name, "PUBLIC") else None
    else:
        raise UnsupportedStatementError(execution.sql)
    return results.status(execution.spark, "Statement executed successfully.")


def alter(execution: Execution) -> DataFrame:
    """ALTER TABLE|SCHEMA|DATABASE x RENAME TO y; other ALTERs have statements of their own."""
    expression = execution.expression
    kind = str(expression.args.get("kind") or "").upper()
    actions = expression.args.get("actions") or []
    renames = {"TABLE": _rename_table, "SCHEMA": _rename_schema, "DATABASE": _rename_database}
    if kind not in renames or len(actions) != 1 or not isinstance(actions[0], exp.AlterRename):
        raise UnsupportedStatementError(execution.sql)
    with execution.catalog.transaction():
        renames[kind](execution, expression.this, actions[0].this)
    return results.status(execution.spark, "Statement executed successfully.")


def _rename_table(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    new_name = execution.tables.name(new)
    entry = execution.tables.entry(old)
    schema = require_schema(execution, new_name.database, new_name.schema)
    if execution.catalog.table(new_name.database, new_name.schema, new_name.name) is not None:
        raise ObjectExistsError(new_name.name)
    execution.catalog.rename_table(entry, schema, new_name.name)


def _rename_schema(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    database, name = schema_name(old, database=execution.session.database)
    schema = require_schema(execution, database, name)
    new_database, new_name = schema_name(new, database=database)
    if new_database != database:
        raise SqlCompilationError("A schema cannot be moved to another database by RENAME.")
    if execution.catalog.schema(database, new_name) is not None:
        raise ObjectExistsError(new_name)
    execution.catalog.rename_schema(schema, new_name)
    if execution.session.database == database and execution.session.schema == name:
        execution.session.schema = new_name


def _rename_database(execution: Execution, old: exp.Table, new: exp.Table) -> None:
    name, new_name = database_name(old), database_name(new)
    database = require_database(execution, name)
    if execution.catalog.database(new_name) is not None:
        raise ObjectExistsError(new_name)
    execution.catalog.rename_database(database, new_name)
    if execution.session.database == name:
        execution.session.database = new_name


def set_parameters(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = str(expression.args["kind"]).upper()
    object_id = _parameter_owner(execution, kind, expression.this)
    if object_id is None:
        return results.status(execution.spark, "Statement executed successfully.")
    settings = {}
    for prop in expression.expressions:
        parameter = params.lookup(prop.name, kind)
        settings[parameter.key] = parameter.normalize(value_of(prop.args["value"]))
    with execution.catalog.transaction():
        for key, value in settings.items():
            execution.catalog.set_parameter(object_id, key, value)
    return results.status(execution.spark, "Statement executed successfully.")


def unset_parameters(execution: Execution) -> DataFrame:
    expression = execution.expression
    kind = str(expression.args["kind"]).upper()
    object_id = _parameter_owner(execution, kind, expression.this)
    if object_id is None:
        return results.status(execution.spark, "Statement executed successfully.")
    keys = [params.lookup(var.name, kind).key for var in expression.expressions]
    with execution.catalog.transaction():
        for key in keys:
            execution.catalog.unset_parameter(object_id, key)
    return results.status(execution.spark, "Statement executed successfully.")


def _parameter_owner(execution: Execution, kind: str, target: exp.Table) -> str | None:
    """The id of the object whose parameters change; None for a missing one under ALTER ... IF EXISTS."""
    try:
        return _object_id(execution, kind, target)
    except ObjectNotFoundError:
        if execution.expression.args.get("exists"):
            return None
        raise


def _object_id(execution: Execution, kind: str, target: exp.Table) -> str:
    if kind == params.TABLE:
        return execution.tables.entry(target).id
    if kind == params.SCHEMA:
        database, name = schema_name(target, database=execution.session.database)
        return require_schema(execution, database, name).id
    if kind == params.DATABASE:
        return require_database(execution, database_name(target)).id
    raise UnsupportedStatementError(execution.sql)
