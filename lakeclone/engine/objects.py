"""Looking up the catalog objects a statement names, and reading CREATE options."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog import parameters as params
from lakeclone.catalog.store import DatabaseEntry, SchemaEntry
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.engine.executor import Execution

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


def properties_of(expression: exp.Expression, level: str) -> dict[str, str]:
    """Parameters given in CREATE ... (``DATA_RETENTION_TIME_IN_DAYS = 1 COMMENT = 'x'``)."""
    properties = expression.args.get("properties")
    settings: dict[str, str] = {}
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.SchemaCommentProperty):
            settings["COMMENT"] = value_of(prop.this)
        elif type(prop) is exp.Property:
            parameter = params.lookup(prop.name, level)
            settings[parameter.key] = parameter.normalize(value_of(prop.args["value"]))
        elif not isinstance(prop, (exp.ExternalProperty, exp.LocationProperty, exp.ClusterProperty)):
            raise SqlCompilationError(f"unsupported table option {prop.sql(dialect='snowflake')}")
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
    """The text of an option's value: a literal, a boolean, or a name."""
    if isinstance(node, exp.Literal):
        return str(node.this)
    text = node.name
    # Snowflake's parser keeps LOCATION = '<path>' as a Var with its quotes on.
    if isinstance(node, exp.Var) and len(text) >= 2 and text[0] == text[-1] == "'":
        return text[1:-1].replace("''", "'")
    if isinstance(node, exp.Boolean):
        return "true" if node.this else "false"
    return node.name or node.sql(dialect="snowflake")


def store_parameters(execution: Execution, object_id: str, settings: dict[str, str]) -> None:
    for key, value in settings.items():
        execution.catalog.set_parameter(object_id, key, value)
