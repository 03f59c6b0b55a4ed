"""CREATE ... CLONE for tables, schemas and databases.

A clone's version 0 is a ``CLONE`` commit naming the source, the source
version and whether it is shallow, as Delta records it. Zero-copy clones
reference the source's files by absolute URI; deep clones copy them. Schema
and database clones take every table at one moment (the statement's start
unless AT|BEFORE says otherwise), so they are consistent even while other
sessions write.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.names import database_name, schema_name
from lakeclone.catalog.store import DatabaseEntry, SchemaEntry, TableEntry
from lakeclone.clones.files import copied, referenced
from lakeclone.delta.log import DeltaLog, Snapshot
from lakeclone.engine import results, timetravel
from lakeclone.engine.constraints import copy_definitions
from lakeclone.engine.objects import location_of, properties_of, require_database, require_schema
from lakeclone.engine.sequences import clone_sequences
from lakeclone.errors import (
    DataNotAvailableError,
    ObjectExistsError,
    ObjectNotFoundError,
    SqlCompilationError,
    TimeTravelError,
)

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

SHALLOW, DEEP = "SHALLOW", "DEEP"
EXTERNAL_CLONES = "external"


@dataclass(frozen=True)
class ClonedTable:
    """A clone whose Delta log is written but which the catalog does not know yet."""

    table_id: str
    name: str
    source: TableEntry
    version: int
    kind: str
    location: str
    managed: bool


def create_clone(execution: Execution) -> DataFrame:
    kind = str(execution.expression.args.get("kind") or "").upper()
    if kind == "TABLE":
        return _clone_table(execution)
    if kind in ("SCHEMA", "DATABASE"):
        return _clone_container(execution, kind)
    raise SqlCompilationError(f"CLONE is not supported for {kind}")


# Tables ------------------------------------------------------------------------


def _clone_table(execution: Execution) -> DataFrame:
    expression = execution.expression
    clone = expression.args["clone"]
    deep = bool(clone.args.get("deep"))
    target = execution.tables.name(expression.this)
    schema = require_schema(execution, target.database, target.schema)
    settings = properties_of(expression, "TABLE")
    source = execution.tables.entry(clone.this)
    version = _version(execution, source, timetravel.point_of(clone.this))
    snapshot = _snapshot(source, version)

    catalog = execution.catalog
    existing = catalog.table(target.database, target.schema, target.name)
    if existing is not None:
        if expression.args.get("exists"):
            return results.status(execution.spark, f"{target.name} already exists, statement succeeded.")
        if not expression.args.get("replace"):
            raise ObjectExistsError(target.name)
        if deep and existing.clone_kind == DEEP and existing.source_id == source.id:
            return _refresh_deep_clone(execution, existing, source, snapshot)

    location_text = location_of(expression)
    cloned = _write_clone(
        execution, target.name, source, snapshot, deep=deep, location=location_text
    )
    try:
        with catalog.transaction():
            current = catalog.table(target.database, target.schema, target.name)
            if current is not None:
                if not expression.args.get("replace"):
                    raise ObjectExistsError(target.name)
                catalog.drop_table(current, execution.now())
            entry = _register(execution, schema, cloned)
            for key, value in settings.items():
                catalog.set_parameter(entry.id, key, value)
            # Defaults, constraints, clustering key: same sequences and referenced tables as the source.
            copy_definitions(catalog, [(source.id, entry.id)], now=execution.now())
    except BaseException:
        _discard([cloned])
        raise
    return results.status(execution.spark, f"Table {target.name} successfully created.")


def _version(execution: Execution, source: TableEntry, point: timetravel.Point | None) -> int:
    """The source version a clone takes, with the messages Snowflake gives for clones.

    A point before the source existed names no object; a point whose data is
    outside retention (or whose files are gone) is "Data is not available."
    """
    tables = execution.tables
    log = DeltaLog(source.location)
    if point is not None and point.kind == timetravel.VERSION:
        try:
            return tables.version_at(source, log, point)
        except TimeTravelError as error:
            if "Cannot time travel" in str(error):
                raise
            raise DataNotAvailableError() from None
    moment = tables.moment_of(point) if point is not None else execution.started_at
    before = point.before if point is not None else False
    if moment < source.created_at or (before and moment == source.created_at):
        raise ObjectNotFoundError(source.qualified)
    return _version_at_moment(execution, source, moment, before=before)


def _snapshot(source: TableEntry, version: int) -> Snapshot:
    snapshot = DeltaLog(source.location).snapshot(version, stats=True)
    if any(not os.path.exists(f.local_path) for f in snapshot.files):
        raise DataNotAvailableError()
    return snapshot


def _write_clone(
    execution: Execution,
    name: str,
    source: TableEntry,
    snapshot: Snapshot,
    *,
    deep: bool,
    location: str | None = None,
) -> ClonedTable:
    """Write a new clone's Delta log (and, deep, its files) at a fresh location."""
    table_id = uuid.uuid4().hex
    managed = source.managed
    if location is not None:
        if managed:
            raise SqlCompilationError("LOCATION is only allowed when cloning an external table.")
        folder = os.path.abspath(location)
    elif managed:
        folder = execution.managed_location(table_id)
    else:
        folder = str(execution.lake.warehouse / EXTERNAL_CLONES / table_id)
    log = DeltaLog(folder)
    if log.exists():
        raise SqlCompilationError(f"Location '{folder}' already holds a Delta table.")
    now = execution.now()
    copies = copied_bytes = 0
    try:
        if deep:
            adds, copies, copied_bytes = copied(snapshot.files, folder, now=now)
        else:
            adds = referenced(snapshot.files)
        log.create(
            snapshot.schema_json,
            name=name,
            configuration=snapshot.configuration,
            adds=adds,
            info=execution.commit_info(
                "CLONE",
                parameters=_clone_parameters(source, snapshot, deep=deep),
                metrics=_clone_metrics(snapshot, copies, copied_bytes),
            ),
        )
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return ClonedTable(table_id, name, source, snapshot.version, DEEP if deep else SHALLOW, folder, managed)


def _clone_parameters(source: TableEntry, snapshot: Snapshot, *, deep: bool) -> dict[str, object]:
    return {
        "source": source.qualified,
        "sourceVersion": snapshot.version,
        "isShallow": str(not deep).lower(),
    }


def _clone_metrics(snapshot: Snapshot, copies: int, copied_bytes: int) -> dict[str, int]:
    return {
        "sourceTableSize": snapshot.size,
        "sourceNumOfFiles": len(snapshot.files),
        "numCopiedFiles": copies,
        "copiedFilesSize": copied_bytes,
        "numRemovedFiles": 0,
        "removedFilesSize": 0,
        "numAddedFiles": len(snapshot.files),
        "numRemovedBytes": 0,
        "numAddedBytes": snapshot.size,
        "numOutputRows": snapshot.num_records,
    }


def _register(execution: Execution, schema: SchemaEntry, cloned: ClonedTable) -> TableEntry:
    """Enter a written clone in the catalog, with the parameters set on its source itself.

    Values the source only inherits from its schema or database are not
    copied: the clone inherits from its own container instead.
    """
    catalog = execution.catalog
    entry = catalog.create_table(
        schema,
        cloned.name,
        kind="MANAGED" if cloned.managed else "EXTERNAL",
        location=cloned.location,
        now=execution.now(),
        table_id=cloned.table_id,
        source_id=cloned.source.id,
        source_version=cloned.version,
        clone_kind=cloned.kind,
    )
    for key, value in catalog.parameters(cloned.source.id).items():
        catalog.set_parameter(entry.id, key, value)
    return entry


def _refresh_deep_clone(
    execution: Execution, target: TableEntry, source: TableEntry, snapshot: Snapshot
) -> DataFrame:
    """Re-clone into an existing deep clone of the same source: copy only what is new.

    Like Delta's repeated DEEP CLONE, this is a new version of the same table,
    not a new table.
    """
    log = DeltaLog(target.location)
    current = log.snapshot()
    adds, copies, copied_bytes = copied(
        snapshot.files, target.location, now=execution.now(), present=current.files
    )
    wanted = {f.local_path for f in adds}
    unchanged = {f.local_path for f in current.files} & wanted
    removes = [f for f in current.files if f.local_path not in wanted]
    new_adds = [f for f in adds if f.local_path not in unchanged]
    parameters = _clone_parameters(source, snapshot, deep=True)
    metrics = _clone_metrics(snapshot, copies, copied_bytes)
    metrics.update(
        numRemovedFiles=len(removes),
        removedFilesSize=sum(f.size for f in removes),
        numAddedFiles=len(new_adds),
        numAddedBytes=sum(f.size for f in new_adds),
        numRemovedBytes=sum(f.size for f in removes),
    )
    log.commit(
        current,
        adds=new_adds,
        removes=removes,
        info=execution.commit_info("CLONE", parameters=parameters, metrics=metrics),
    )
    with execution.catalog.transaction():
        execution.catalog.set_lineage(target, source_version=snapshot.version)
    return results.status(execution.spark, f"Table {target.name} successfully created.")


# Schemas and databases -------------------------------------------------------------


def _clone_container(execution: Execution, kind: str) -> DataFrame:
    expression = execution.expression
    clone = expression.args["clone"]
    point = timetravel.point_of(clone.this)
    if point is not None and point.kind == timetravel.VERSION:
        raise SqlCompilationError(f"VERSION is not a point in time for a {kind.lower()}; use TIMESTAMP, OFFSET or STATEMENT.")
    moment = execution.tables.moment_of(point) if point is not None else execution.started_at
    before = point.before if point is not None else False
    catalog = execution.catalog
    session = execution.session

    def existed(created_at: dt.datetime) -> bool:
        return created_at < moment or (not before and created_at == moment)

    if kind == "DATABASE":
        source_db = require_database(execution, database_name(clone.this))
        if not existed(source_db.created_at):
            raise ObjectNotFoundError(source_db.name)
        target_name = database_name(expression.this)
        sources = [s for s in catalog.schemas(source_db) if existed(s.created_at)]
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

    if expression.args.get("exists"):
        label = targets[0][1] if kind == "SCHEMA" else target_name
        taken = catalog.schema(*targets[0]) if kind == "SCHEMA" else catalog.database(target_name)
        if taken is not None:
            return results.status(execution.spark, f"{label} already exists, statement succeeded.")

    # Write every table's log first; the catalog then takes them all in one transaction.
    written: list[tuple[int, ClonedTable]] = []
    try:
        for index, schema in enumerate(sources):
            for table in catalog.tables(schema):
                if not existed(table.created_at):
                    continue
                version = _version_at_moment(execution, table, moment, before=before)
                snapshot = _snapshot(table, version)
                written.append((index, _write_clone(execution, table.name, table, snapshot, deep=False)))
        with catalog.transaction():
            if kind == "DATABASE":
                database = _replace_database(execution, target_name, expression)
            else:
                database = require_database(execution, targets[0][0])
            new_schemas = []
            sequence_map: dict[str, str] = {}
            for (_, schema_label), source_schema_entry in zip(targets, sources):
                new_schema = _replace_schema(execution, database, schema_label, expression if kind == "SCHEMA" else None)
                for key, value in catalog.parameters(source_schema_entry.id).items():
                    catalog.set_parameter(new_schema.id, key, value)
                new_schemas.append(new_schema)
                sequence_map.update(
                    clone_sequences(catalog, source_schema_entry, new_schema, now=execution.now(), existed=existed)
                )
            if kind == "DATABASE":
                for key, value in catalog.parameters(source_db.id).items():
                    catalog.set_parameter(database.id, key, value)
            pairs = [(cloned.source.id, _register(execution, new_schemas[index], cloned).id) for index, cloned in written]
            # Defaults and foreign keys follow sequences and tables cloned along; others keep the source's.
            copy_definitions(catalog, pairs, now=execution.now(), sequence_map=sequence_map)
    except BaseException:
        _discard([c for _, c in written])
        raise
    label = targets[0][1] if kind == "SCHEMA" else target_name
    if kind == "SCHEMA":
        session.database, session.schema = targets[0]
    else:
        session.database, session.schema = target_name, "PUBLIC" if any(s.name == "PUBLIC" for s in sources) else None
    return results.status(execution.spark, f"{kind.capitalize()} {label} successfully created.")


def _version_at_moment(execution: Execution, table: TableEntry, moment: dt.datetime, *, before: bool) -> int:
    horizon = execution.started_at - execution.catalog.retention(table)
    try:
        return timetravel.version_at(
            DeltaLog(table.location).history(), moment, before=before, name=table.name, horizon=horizon
        )
    except TimeTravelError:
        raise DataNotAvailableError() from None


def _replace_database(execution: Execution, name: str, expression: exp.Expression) -> DatabaseEntry:
    catalog = execution.catalog
    existing = catalog.database(name)
    if existing is not None:
        if not expression.args.get("replace"):
            raise ObjectExistsError(name)
        catalog.drop_database(existing, execution.now())
    return catalog.create_database(name, execution.now())


def _replace_schema(
    execution: Execution, database: DatabaseEntry, name: str, expression: exp.Expression | None
) -> SchemaEntry:
    catalog = execution.catalog
    existing = catalog.schema(database.name, name)
    if existing is not None:
        if expression is None or not expression.args.get("replace"):
            raise ObjectExistsError(name)
        catalog.drop_schema(existing, execution.now())
    return catalog.create_schema(database, name, execution.now())


def _discard(clones: list[ClonedTable]) -> None:
    for cloned in clones:
        shutil.rmtree(cloned.location, ignore_errors=True)

