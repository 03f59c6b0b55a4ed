"""Looking up the catalog objects a statement names, reading CREATE options, and checking LOCATIONs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.entries import DatabaseEntry, ObjectKind, SchemaEntry
from lakeclone.engine import registry
from lakeclone.errors import InvalidLocationError, ObjectExistsError, ObjectNotFoundError, SqlCompilationError
from lakeclone.storage import is_within

if TYPE_CHECKING:
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.engine.executor import Execution
    from lakeclone.engine.tables import Tables


def require_database(execution: Execution, name: str) -> DatabaseEntry:
    database = execution.catalog.database(name)
    if database is None:
        raise ObjectNotFoundError(name, "Database")
    return database


def require_schema(execution: Execution, database: str, name: str) -> SchemaEntry:
    require_database(execution, database)
    schema = execution.catalog.schema(database, name)
    if schema is None:
        raise ObjectNotFoundError(f"{database}.{name}", "Schema")
    return schema


def require_free_name(execution: Execution, name: QualifiedName, kind: str = "TABLE") -> None:
    """Refuse ``name`` to an object of ``kind`` when an object of another kind holds it.

    Tables, views and streams share one namespace per schema (a query reads
    each by its name alike); each kind's own statement handles a name its
    kind already holds (OR REPLACE, IF NOT EXISTS).

    Raises:
        ObjectExistsError: a table, view or stream other than a ``kind`` holds the name.
    """
    catalog = execution.catalog
    if kind != "TABLE" and catalog.table(name.database, name.schema, name.name) is not None:
        raise ObjectExistsError(name.name)
    if any(taken(catalog, name) for other, taken in registry.NAME_TAKEN.items() if other != kind):
        raise ObjectExistsError(name.name)


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
            execution.catalog.unset_parameter(object_id, key)
        else:
            execution.catalog.set_parameter(object_id, key, value)
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
    for table in tables.catalog.table_locations():
        if _overlap(location, table.location) or _overlap(location, storage.real(table.location)):
            raise InvalidLocationError(f"Location '{text}' overlaps the folder of table {table.qualified} ({table.location}).")
    return location


def _overlap(one: str, other: str) -> bool:
    return is_within(one, other) or is_within(other, one)
