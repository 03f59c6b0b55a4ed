"""CREATE ... CLONE for tables, schemas and databases.

A zero-copy clone (``CLONE``, ``SHALLOW CLONE``) is what Delta's own SHALLOW
CLONE makes of the source at the version lakeclone resolved (for a small
source, committed through Delta's transaction, :mod:`lakeclone.delta.transaction`):
its log references the source's files where they live, so no data is copied. A DEEP CLONE copies them
(:mod:`lakeclone.clones.deep`). Either way the clone's version 0 is a ``CLONE``
commit; DESCRIBE HISTORY shows the source by name, the source version and
whether it is shallow. Schema and database clones take every table at one
moment (the statement's start unless AT|BEFORE says otherwise), so they are
consistent even while other sessions write.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone import timetravel
from lakeclone.catalog.entries import CloneKind, DatabaseEntry, ObjectKind, SchemaEntry, TableEntry, TableKind
from lakeclone.catalog.names import database_name, schema_name
from lakeclone.clones import deep as deep_clone
from lakeclone.delta import statements, transaction
from lakeclone.engine import registry, results
from lakeclone.engine.objects import (
    external_location,
    location_of,
    properties_of,
    require_database,
    require_free_name,
    require_schema,
)
from lakeclone.engine.registry import CloneEvent
from lakeclone.errors import (
    DataNotAvailableError,
    InvalidLocationError,
    ObjectExistsError,
    ObjectNotFoundError,
    SqlCompilationError,
    TimeTravelError,
)
from lakeclone.timetravel import PointKind

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from sqlglot import exp

    from lakeclone.engine.executor import Execution


@dataclass(frozen=True)
class ClonedTable:
    """A clone whose Delta log is written but which the catalog does not know yet."""

    table_id: str
    name: str
    source: TableEntry
    version: int
    kind: CloneKind
    location: str
    managed: bool


def create_clone(execution: Execution) -> DataFrame:
    word = str(execution.expression.args.get("kind") or "").upper()
    kind = ObjectKind.named(word)
    if kind is ObjectKind.TABLE:
        return _clone_table(execution)
    if kind is ObjectKind.SCHEMA or kind is ObjectKind.DATABASE:
        return _clone_container(execution, kind)
    raise SqlCompilationError(f"CLONE is not supported for {word}")


# Tables ------------------------------------------------------------------------


def _clone_table(execution: Execution) -> DataFrame:
    expression = execution.expression
    clone = expression.args["clone"]
    deep = bool(clone.args.get("deep"))
    if isinstance(expression.this, exp.Schema):
        raise SqlCompilationError("A clone has its source's columns: CLONE takes no column list.")
    target = execution.tables.name(expression.this)
    schema = require_schema(execution, target.database, target.schema)
    settings = properties_of(expression, ObjectKind.TABLE)
    source = execution.tables.entry(clone.this)
    version = _version(execution, source, timetravel.point_of(clone.this))

    catalog = execution.catalog
    existing = catalog.objects.table(target.database, target.schema, target.name)
    if existing is not None:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{target.name} already exists, statement succeeded.")
        if not expression.args.get("replace"):
            raise ObjectExistsError(target.name)
        if deep and existing.clone_kind is CloneKind.DEEP and existing.source_id == source.id:
            return _refresh_deep_clone(execution, existing, source, version)
    require_free_name(execution, target)

    cloned = _write_clone(execution, target.name, source, version, deep=deep, location=location_of(expression))
    with execution.work.records():
        require_free_name(execution, target)
        current = catalog.objects.table(target.database, target.schema, target.name)
        if current is not None:
            if not expression.args.get("replace"):
                raise ObjectExistsError(target.name)
            catalog.objects.drop_table(current, execution.now())
        entry = _register(execution, schema, cloned)
        for key, value in settings.items():
            catalog.parameters.set_parameter(entry.id, key, value)
        _run_clone_hooks(CloneEvent(catalog, execution.now(), [(source.id, entry.id)]))
    return results.status(execution.spark, f"Table {target.name} successfully created.")


def _version(execution: Execution, source: TableEntry, point: timetravel.Point | None) -> int:
    """The source version a clone takes, with the messages Snowflake gives for clones.

    A point before the source existed names no object; a point whose data is
    outside retention (or was vacuumed away) is "Data is not available."
    """
    tables = execution.tables
    if point is not None and point.kind is PointKind.VERSION:
        try:
            return tables.version(source, point)
        except DataNotAvailableError:
            raise
        except TimeTravelError as error:
            if "Cannot time travel" in str(error):
                raise
            raise DataNotAvailableError() from None
    moment = tables.moment_of(point) if point is not None else execution.started_at
    before = point.before if point is not None else False
    if moment < source.created_at or (before and moment == source.created_at):
        raise ObjectNotFoundError(source.qualified)
    if point is not None and point.kind is PointKind.STATEMENT:
        try:
            return tables.version(source, point)
        except DataNotAvailableError:
            raise
        except TimeTravelError:
            raise DataNotAvailableError() from None
    return _version_at_moment(execution, source, moment, before=before)


def _version_at_moment(execution: Execution, table: TableEntry, moment: dt.datetime, *, before: bool) -> int:
    tables = execution.tables
    history = tables.history(table)
    try:
        version = timetravel.version_at(history, moment, before=before, name=table.name, horizon=tables.horizon(table))
    except TimeTravelError:
        raise DataNotAvailableError() from None
    version = tables.committed(table, version)
    tables.check_available(table, history, version)
    return version


def _clone_location(execution: Execution, source: TableEntry, table_id: str, location: str | None) -> str:
    if location is not None:
        if source.managed:
            raise SqlCompilationError("LOCATION is only allowed when cloning an external table.")
        return external_location(execution.tables, location)
    if source.managed:
        return execution.managed_location(table_id)
    return execution.external_clone_location(table_id)


def _write_clone(
    execution: Execution,
    name: str,
    source: TableEntry,
    version: int,
    *,
    deep: bool,
    location: str | None = None,
) -> ClonedTable:
    """Write a new clone's Delta log (and, deep, its files) at a fresh location."""
    table_id = uuid.uuid4().hex
    folder = _clone_location(execution, source, table_id, location)
    storage = execution.storage
    if storage.exists(folder):
        if execution.delta.table(folder).exists():
            raise InvalidLocationError(f"Location '{location or folder}' already holds a Delta table.")
        if storage.has_entries(folder) or storage.is_file(folder):
            raise InvalidLocationError(f"Location '{location or folder}' is not empty; a clone needs an empty folder.")
        execution.work.writes_new_table_in(folder, made=False)
    else:
        execution.work.writes_new_table_in(folder, made=True)
    parameters: dict[str, object] = {
        "source": source.qualified,
        "sourceVersion": version,
        "isShallow": str(not deep).lower(),
    }
    if deep:
        _deep_clone(execution, source, version, folder, parameters, new_table=True)
    else:
        _shallow_clone(execution, source, version, folder, parameters)
    return ClonedTable(table_id, name, source, version, CloneKind.DEEP if deep else CloneKind.SHALLOW, folder, source.managed)


def _shallow_clone(execution: Execution, source: TableEntry, version: int, folder: str, parameters: dict[str, object]) -> None:
    """Commit the source version's files, where they are, as the clone's first version, as Delta's SHALLOW CLONE would.

    For a source of up to 50 files the version's checksum lists them
    (:meth:`TableLog.listed_add_actions`), and they are committed through
    Delta's transaction without a Spark job, with the metrics Delta's CLONE
    reports; Delta's command reconstructs the version's state first (about
    1.5 s a table, warm).
    """
    log = execution.delta.table(source.location)
    adds = log.listed_add_actions(version)
    if adds is None:
        # A source of many files: Delta's own command lists them in the JVM, where
        # naming each through py4j would take longer than the command.
        with execution.work.delta(parameters=parameters):
            statements.shallow_clone(execution.spark, folder, source.location, version)
        return
    counts = {
        "sourceTableSize": sum(int(add.get("size") or 0) for add in adds),
        "sourceNumOfFiles": len(adds),
        "numRemovedFiles": 0,
        "numCopiedFiles": 0,
        "removedFilesSize": 0,
        "copiedFilesSize": 0,
    }
    execution.storage.mkdirs(folder)
    with execution.work.delta(parameters=parameters, metrics=counts):
        transaction.commit_clone(
            execution.delta,
            folder,
            source=source.location,
            source_version=version,
            files=transaction.shallow_files(execution.delta, source.location, adds),
            new_table=log.new_table_actions(version),
        )


def _deep_clone(
    execution: Execution,
    source: TableEntry,
    version: int,
    folder: str,
    parameters: dict[str, object],
    *,
    new_table: bool,
) -> None:
    """Copy the files a deep clone lacks, then commit them with the counts DESCRIBE HISTORY shows."""
    copy = deep_clone.copy_files(
        execution.delta, execution.storage, source=source.location, version=version, target=folder, new_table=new_table
    )
    snapshot = execution.delta.table(source.location).snapshot(version)
    counts = deep_clone.metrics(copy, source_size=snapshot.size, source_files=snapshot.num_files)
    with execution.work.delta(parameters=parameters, metrics=counts):
        deep_clone.commit(execution.delta, copy, source=source.location, version=version, target=folder, new_table=new_table)


def _register(execution: Execution, schema: SchemaEntry, cloned: ClonedTable) -> TableEntry:
    """Enter a written clone in the catalog, with the parameters set on its source itself.

    Values the source only inherits from its schema or database are not
    copied: the clone inherits from its own container instead.
    """
    catalog = execution.catalog
    entry = catalog.objects.create_table(
        schema,
        cloned.name,
        kind=TableKind.MANAGED if cloned.managed else TableKind.EXTERNAL,
        location=cloned.location,
        now=execution.now(),
        table_id=cloned.table_id,
        owns_folder=True,
        source_id=cloned.source.id,
        source_version=cloned.version,
        clone_kind=cloned.kind,
    )
    for key, value in catalog.parameters.of(cloned.source.id).items():
        catalog.parameters.set_parameter(entry.id, key, value)
    return entry


def _refresh_deep_clone(execution: Execution, target: TableEntry, source: TableEntry, version: int) -> DataFrame:
    """Re-clone into an existing deep clone of the same source: copy only what is new.

    Like Delta's repeated DEEP CLONE, this is a new version of the same table,
    not a new table.
    """
    parameters: dict[str, object] = {"source": source.qualified, "sourceVersion": version, "isShallow": "false"}
    _deep_clone(execution, source, version, target.location, parameters, new_table=False)
    with execution.work.records():
        execution.catalog.objects.set_lineage(target, source_version=version)
    return results.status(execution.spark, f"Table {target.name} successfully created.")


def _run_clone_hooks(event: CloneEvent) -> None:
    for hook in registry.CLONE_HOOKS:
        hook(event)


# Schemas and databases -------------------------------------------------------------


def _clone_container(execution: Execution, kind: ObjectKind) -> DataFrame:
    expression = execution.expression
    clone = expression.args["clone"]
    point = timetravel.point_of(clone.this)
    if point is not None and point.kind is PointKind.VERSION:
        raise SqlCompilationError(f"VERSION is not a point in time for a {kind.lower()}; use TIMESTAMP, OFFSET or STATEMENT.")
    moment = execution.tables.moment_of(point) if point is not None else execution.started_at
    before = point.before if point is not None else False
    catalog = execution.catalog
    session = execution.session

    def existed(created_at: dt.datetime) -> bool:
        return created_at < moment or (not before and created_at == moment)

    if kind is ObjectKind.DATABASE:
        source_db = require_database(execution, database_name(clone.this))
        if not existed(source_db.created_at):
            raise ObjectNotFoundError(source_db.name)
        target_name = database_name(expression.this)
        sources = [s for s in catalog.objects.schemas(source_db) if existed(s.created_at)]
        targets = [(target_name, s.name) for s in sources]
    else:
        source_db_name, source_schema_name = schema_name(clone.this, database=session.database)
        source_schema = require_schema(execution, source_db_name, source_schema_name)
        if not existed(source_schema.created_at):
            raise ObjectNotFoundError(f"{source_db_name}.{source_schema_name}")
        target_db, target_schema = schema_name(expression.this, database=session.database)
        require_database(execution, target_db)
        sources = [source_schema]
        targets = [(target_db, target_schema)]

    label = targets[0][1] if kind is ObjectKind.SCHEMA else target_name
    if expression.args.get("exists"):
        taken = catalog.objects.schema(*targets[0]) if kind is ObjectKind.SCHEMA else catalog.objects.database(target_name)
        if taken is not None:
            return results.status(execution.spark, f"{label} already exists, statement succeeded.")

    # Write every table's log first; the catalog then takes them all in one transaction.
    written: list[tuple[int, ClonedTable]] = []
    for index, schema in enumerate(sources):
        for table in catalog.objects.tables(schema):
            if not existed(table.created_at):
                continue
            version = _version_at_moment(execution, table, moment, before=before)
            written.append((index, _write_clone(execution, table.name, table, version, deep=False)))
    with execution.work.records():
        if kind is ObjectKind.DATABASE:
            database = _replace_database(execution, target_name, expression)
        else:
            database = require_database(execution, targets[0][0])
        schema_pairs: list[tuple[SchemaEntry, SchemaEntry]] = []
        for (_, schema_label), source_schema_entry in zip(targets, sources, strict=True):
            new_schema = _replace_schema(execution, database, schema_label, expression if kind is ObjectKind.SCHEMA else None)
            for key, value in catalog.parameters.of(source_schema_entry.id).items():
                catalog.parameters.set_parameter(new_schema.id, key, value)
            schema_pairs.append((source_schema_entry, new_schema))
        if kind is ObjectKind.DATABASE:
            for key, value in catalog.parameters.of(source_db.id).items():
                catalog.parameters.set_parameter(database.id, key, value)
        pairs = [(cloned.source.id, _register(execution, schema_pairs[index][1], cloned).id) for index, cloned in written]
        _run_clone_hooks(CloneEvent(catalog, execution.now(), pairs, schema_pairs, existed))
    if kind is ObjectKind.SCHEMA:
        session.database, session.schema = targets[0]
    else:
        session.database, session.schema = target_name, "PUBLIC" if any(s.name == "PUBLIC" for s in sources) else None
    return results.status(execution.spark, f"{kind.capitalize()} {label} successfully created.")


def _replace_database(execution: Execution, name: str, expression: exp.Expression) -> DatabaseEntry:
    catalog = execution.catalog
    existing = catalog.objects.database(name)
    if existing is not None:
        if not expression.args.get("replace"):
            raise ObjectExistsError(name)
        catalog.objects.drop_database(existing, execution.now())
    return catalog.objects.create_database(name, execution.now())


def _replace_schema(execution: Execution, database: DatabaseEntry, name: str, expression: exp.Expression | None) -> SchemaEntry:
    catalog = execution.catalog
    existing = catalog.objects.schema(database.name, name)
    if existing is not None:
        if expression is None or not expression.args.get("replace"):
            raise ObjectExistsError(name)
        catalog.objects.drop_schema(existing, execution.now())
    return catalog.objects.create_schema(database, name, execution.now())


registry.SLOTS.clone = create_clone
