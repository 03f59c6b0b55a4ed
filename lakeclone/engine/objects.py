"""Looking up the catalog objects a statement names, reading CREATE options, and checking LOCATIONs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import DatabaseEntry, ObjectKind, SchemaEntry, SchemaObjectEntry
from lakeclone.engine import registry, results
from lakeclone.errors import (
    InvalidLocationError,
    ObjectExistsError,
    ObjectNotFoundError,
    SqlCompilationError,
    UnsupportedStatementError,
)
from lakeclone.storage import is_within

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.names import QualifiedName
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables


Entry = TypeVar("Entry", bound=SchemaObjectEntry)


def require_database(execution: Execution, name: str) -> DatabaseEntry:
    database = execution.catalog.objects.database(name)
    if database is None:
        raise ObjectNotFoundError(name, "Database")
    return database


def require_schema(execution: Execution, database: str, name: str) -> SchemaEntry:
    require_database(execution, database)
    schema = execution.catalog.objects.schema(database, name)
    if schema is None:
        raise ObjectNotFoundError(f"{database}.{name}", "Schema")
    return schema


def require_free_name(execution: Execution, name: QualifiedName, kind: ObjectKind = ObjectKind.TABLE) -> None:
    """Refuse ``name`` to an object of ``kind`` when an object of another kind holds it.

    Tables, views and streams share one namespace per schema (a query reads
    each by its name alike); each kind's own statement handles a name its
    kind already holds (OR REPLACE, IF NOT EXISTS).

    Raises:
        ObjectExistsError: a table, view or stream other than a ``kind`` holds the name.
    """
    sharing = [ObjectKind.TABLE, *(other.kind for other in registry.SCHEMA_OBJECTS.values() if other.shares_table_names)]
    if any(other is not kind and execution.catalog.schema_objects.named(other, name) is not None for other in sharing):
        raise ObjectExistsError(name.name)


def schema_object(execution: Execution, kind: ObjectKind | None) -> registry.SchemaObject:
    """The record of the kind of schema object a statement names; UnsupportedStatementError for a kind with none."""
    record = registry.SCHEMA_OBJECTS.get(kind) if kind is not None else None
    if record is None:
        raise UnsupportedStatementError(execution.sql)
    return record


def require_object(execution: Execution, kind: ObjectKind, target: exp.Table, entry_type: type[Entry]) -> Entry:
    """The live object of ``kind`` a statement names (an ``entry_type``), or ObjectNotFoundError."""
    name = execution.tables.name(target)
    entry = execution.catalog.schema_objects.named(schema_object(execution, kind).kind, name)
    if entry is None:
        raise ObjectNotFoundError(str(name))
    assert isinstance(entry, entry_type), f"a {kind.value} is kept as {type(entry).__name__}"
    return entry


def drop_object(execution: Execution, kind: ObjectKind | None, target: exp.Table) -> tuple[str, str, object | None]:
    """``DROP <kind> x`` inside DROP's records: (the name for messages, its label, the dropped object or None)."""
    kind = schema_object(execution, kind).kind
    name = execution.tables.name(target)
    entry = execution.catalog.schema_objects.named(kind, name)
    if entry is not None:
        execution.catalog.schema_objects.drop(kind, entry.id, execution.now())
    return str(name), name.name, entry


def make_room(execution: Execution, kind: ObjectKind, name: QualifiedName) -> DataFrame | None:
    """``CREATE [OR REPLACE] <kind> [IF NOT EXISTS] name``'s rule for an object of the kind already there.

    Called inside the statement's records, just before it creates the object,
    so that what it finds is what the catalog holds then.

    Returns:
        IF NOT EXISTS' status when the name is held (the statement returns it
        and creates nothing), else None: the name was free, or OR REPLACE
        dropped what held it.

    Raises:
        ObjectExistsError: the name is held and the statement says neither.
    """
    schema_object(execution, kind)
    current = execution.catalog.schema_objects.named(kind, name)
    if current is None:
        return None
    if execution.expression.args.get("exists"):
        return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
    if not execution.expression.args.get("replace"):
        raise ObjectExistsError(name.name)
    execution.catalog.schema_objects.drop(kind, current.id, execution.now())
    return None


# CREATE options that are not parameters, each read by the code that needs it.
OPTION_NODES = (
    exp.ExternalProperty,
    exp.LocationProperty,
    exp.ClusterProperty,
    exp.TransientProperty,
    exp.CopyGrantsProperty,  # a clone's, read by access control
)


def properties_of(expression: exp.Expression, level: ObjectKind) -> dict[str, str]:
    """Parameters given in CREATE ... (``DATA_RETENTION_TIME_IN_DAYS = 1 COMMENT = 'x'``)."""
    properties = expression.args.get("properties")
    settings: dict[str, str] = {}
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            settings["COMMENT"] = value_of(prop.this)
        elif type(prop) is exp.Property:
            parameter = params.lookup(prop.name, level)
            settings[parameter.key] = parameter.normalize(value_of(prop.args["value"]))
        elif isinstance(prop, exp.TransientProperty):
            raise SqlCompilationError(f"TRANSIENT {level.value.lower()}s are not supported by lakeclone.")
        elif not isinstance(prop, OPTION_NODES):
            raise SqlCompilationError(f"unsupported {level.value.lower()} option {prop.sql(dialect='snowflake')}")
    return settings


def is_external(expression: exp.Expression) -> bool:
    properties = expression.args.get("properties")
    return bool(properties and any(isinstance(p, exp.ExternalProperty) for p in properties.expressions))


def location_of(expression: exp.Expression) -> str | None:
    properties = expression.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.LocationProperty):
            return value_of(prop.this)
    return None


def value_of(node: exp.Expression) -> str:
    """The text of an option's value: a literal (possibly negative), a boolean, or a name."""
    if isinstance(node, exp.Neg):
        return "-" + value_of(node.this)
    if isinstance(node, exp.Literal):
        return str(node.this)
    text = node.name
    # Snowflake's parser keeps LOCATION = '<path>' as a Var with its quotes on.
    if isinstance(node, exp.Var) and len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return node.name or node.sql(dialect="snowflake")


def store_parameters(execution: Execution, kind: ObjectKind, object_id: str, settings: Mapping[str, str | None]) -> None:
    """Set (or, for None, unset) parameters on an object, then run the features' hooks on the keys that have one."""
    for key, value in settings.items():
        if value is None:
            execution.catalog.parameters.unset_parameter(object_id, key)
        else:
            execution.catalog.parameters.set_parameter(object_id, key, value)
    for key, value in settings.items():
        hook = registry.PARAMETER_HOOKS.get(key)
        if hook is not None:
            hook(execution, kind, object_id, value)


def external_location(tables: Tables, text: str, *, what: str = "an external table") -> str:
    """A LOCATION (or a stage's URL), qualified, once it is known to be safe for a new table (or stage).

    A table's folder may not be the warehouse or lie inside it, may not hold
    the warehouse, and may not contain, or lie inside, any other table's
    folder (a live, dropped or purged table's: a purged table's folder can
    still hold files a clone reads). Folders are compared where their files
    really are, symbolic links followed, and the table keeps that real
    location: a link cannot lead a new table into another's folder.

    Raises:
        InvalidLocationError: the location is relative or overlaps what it may not.
    """
    storage = tables.storage
    location = storage.real(storage.qualify(text))
    warehouse = tables.location
    if _overlap(location, warehouse) or _overlap(location, storage.real(warehouse)):
        raise InvalidLocationError(f"Location '{text}' overlaps the warehouse ({warehouse}): {what} must live outside it.")
    for table in tables.catalog.objects.table_locations():
        if _overlap(location, table.location) or _overlap(location, storage.real(table.location)):
            raise InvalidLocationError(f"Location '{text}' overlaps the folder of table {table.qualified} ({table.location}).")
    return location


def _overlap(one: str, other: str) -> bool:
    return is_within(one, other) or is_within(other, one)
