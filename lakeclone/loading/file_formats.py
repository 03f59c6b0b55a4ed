"""CREATE, DROP, SHOW and DESCRIBE FILE FORMAT: file format options kept under a name, for stages and COPYs to name.

A stage or a COPY that names one (``FILE_FORMAT = (FORMAT_NAME = 'f')``)
reads with its options as they are when the COPY runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.stages import FileFormatEntry
from lakeclone.engine import registry, results
from lakeclone.engine.objects import require_schema, value_of
from lakeclone.engine.show import scope_schemas
from lakeclone.errors import ObjectExistsError
from lakeclone.loading import formats
from lakeclone.loading.stages import require_file_format

if TYPE_CHECKING:
    import re

    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

SHOW_SCHEMA = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, type STRING, owner STRING, "
    "comment STRING, format_options STRING"
)
DESCRIBE_SCHEMA = "property STRING, property_type STRING, property_value STRING, property_default STRING"


def create_file_format(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] FILE FORMAT [IF NOT EXISTS] f [TYPE = CSV | JSON | PARQUET] [<option> = …] [COMMENT = '…']``."""
    expression = execution.expression
    name = execution.tables.name(expression.this)
    properties = expression.args.get("properties")
    options = list(properties.expressions) if properties else []
    comment = next((value_of(p.this) for p in options if isinstance(p, exp.SchemaCommentProperty)), "")
    file_format = formats.from_properties(formats.FileFormat(), options)
    catalog = execution.catalog
    with execution.work.records():
        schema = require_schema(execution, name.database, name.schema)
        existing = catalog.file_format(name.database, name.schema, name.name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name.name)
            catalog.drop_file_format(existing, execution.now())
        catalog.create_file_format(schema, name.name, options=file_format.options(), comment=comment, now=execution.now())
    return results.status(execution.spark, f"File format {name.name} successfully created.")


def drop_file_format(execution: Execution, target: exp.Table) -> tuple[str, str, FileFormatEntry | None]:
    """Drop a file format inside DROP's transaction: (its name for messages, its label, the entry)."""
    name = execution.tables.name(target)
    entry = execution.catalog.file_format(name.database, name.schema, name.name)
    if entry is not None:
        execution.catalog.drop_file_format(entry, execution.now())
    return str(name), name.name, entry


def show_file_formats(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW FILE FORMATS [LIKE 'p'] [IN {SCHEMA s | DATABASE d}]``."""
    catalog = execution.catalog
    data = [
        (
            entry.created_at,
            entry.name,
            entry.database,
            entry.schema,
            entry.options.get("TYPE", "CSV"),
            catalog.owner("FILE FORMAT", entry.id) or "",
            entry.comment,
            ", ".join(f"{key} = {value}" for key, value in entry.options.items()),
        )
        for schema in scope_schemas(execution)
        for entry in catalog.file_formats(schema)
        if like is None or like.match(entry.name)
    ]
    return results.rows(execution.spark, SHOW_SCHEMA, data)


def describe_file_format(execution: Execution) -> DataFrame:
    """``DESCRIBE FILE FORMAT f``: each option, its value and its default."""
    entry = require_file_format(execution.tables, execution.expression.this)
    defaults = formats.FileFormat().options()
    data = [(option, "String", value, defaults.get(option, "")) for option, value in entry.options.items()]
    return results.rows(execution.spark, DESCRIBE_SCHEMA, data)


registry.CREATORS["FILE FORMAT"] = create_file_format
registry.DROPPERS["FILE FORMAT"] = drop_file_format
registry.SHOWS["FILE FORMATS"] = show_file_formats
registry.DESCRIBERS["FILE FORMAT"] = describe_file_format
