"""CREATE, DROP, SHOW and DESCRIBE FILE FORMAT: file format options kept under a name, for stages and COPYs to name.

A stage or a COPY that names one (``FILE_FORMAT = (FORMAT_NAME = 'f')``)
reads with its options as they are when the COPY runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry, results
from lakeclone.engine.objects import make_room, require_schema, value_of
from lakeclone.loading import formats
from lakeclone.loading.stages import require_file_format

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.stages import FileFormatEntry
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
    with execution.work.records():
        schema = require_schema(execution, name.database, name.schema)
        held = make_room(execution, ObjectKind.FILE_FORMAT, name)
        if held is not None:
            return held
        execution.catalog.stages.create_file_format(
            schema, name.name, options=file_format.options(), comment=comment, now=execution.now()
        )
    return results.status(execution.spark, f"File format {name.name} successfully created.")


def _show_row(execution: Execution, entry: FileFormatEntry) -> tuple[Any, ...]:
    """SHOW FILE FORMATS' row."""
    return (
        entry.created_at,
        entry.name,
        entry.database,
        entry.schema,
        entry.options.get("TYPE", "CSV"),
        execution.catalog.access.owner(ObjectKind.FILE_FORMAT, entry.id) or "",
        entry.comment,
        ", ".join(f"{key} = {value}" for key, value in entry.options.items()),
    )


def describe_file_format(execution: Execution) -> DataFrame:
    """``DESCRIBE FILE FORMAT f``: each option, its value and its default."""
    entry = require_file_format(execution.tables, execution.expression.this)
    defaults = formats.FileFormat().options()
    data = [(option, "String", value, defaults.get(option, "")) for option, value in entry.options.items()]
    return results.rows(execution.spark, DESCRIBE_SCHEMA, data)


registry.schema_object(
    registry.SchemaObject(
        ObjectKind.FILE_FORMAT,
        "FILE FORMATS",
        columns=SHOW_SCHEMA,
        row=_show_row,
        create=create_file_format,
    )
)
registry.DESCRIBERS["FILE FORMAT"] = describe_file_format
