"""CREATE, DROP and SHOW SEQUENCE.

A sequence lives in the catalog. Values are handed out in blocks under
SQLite's write lock (:meth:`Catalog.reserve_sequence_values`), so two sessions
never get the same value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.catalog.entries import SequenceEntry
from lakeclone.engine import registry, results
from lakeclone.engine.objects import require_schema, value_of
from lakeclone.engine.show import scope_schemas
from lakeclone.errors import ObjectExistsError, SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.engine.executor import Execution

SHOW_SCHEMA = (
    "created_on TIMESTAMP, name STRING, database_name STRING, schema_name STRING, "
    "next_value BIGINT, interval BIGINT, comment STRING"
)

# Sequence values are 64-bit integers.
MAX_DIGITS = 18


def create_sequence(execution: Execution) -> DataFrame:
    """``CREATE [OR REPLACE] SEQUENCE [IF NOT EXISTS] s [START [WITH] n] [INCREMENT [BY] n]``."""
    expression = execution.expression
    name = execution.tables.name(expression.this)
    start, increment, comment = 1, 1, ""
    properties = expression.args.get("properties")
    for prop in properties.expressions if properties else []:
        if isinstance(prop, exp.SequenceProperties):
            unsupported = [k for k, v in prop.args.items() if v and k not in ("start", "increment")]
            if unsupported:
                raise SqlCompilationError(f"unsupported sequence option {unsupported[0].upper()}")
            if prop.args.get("start") is not None:
                start = _integer(prop.args["start"], "START")
            if prop.args.get("increment") is not None:
                increment = _integer(prop.args["increment"], "INCREMENT")
        elif isinstance(prop, exp.SchemaCommentProperty):
            comment = value_of(prop.this)
        else:
            raise SqlCompilationError(f"unsupported sequence option {prop.sql(dialect='snowflake')}")
    if increment == 0:
        raise SqlCompilationError("Sequence increment must not be zero.")
    catalog = execution.catalog
    with execution.work.records():
        schema = require_schema(execution, name.database, name.schema)
        existing = catalog.sequence(name.database, name.schema, name.name)
        if existing is not None:
            if expression.args.get("exists"):
                return results.status(execution.spark, f"{name.name} already exists, statement succeeded.")
            if not expression.args.get("replace"):
                raise ObjectExistsError(name.name)
            catalog.drop_sequence(existing, execution.now())
        catalog.create_sequence(schema, name.name, start=start, increment=increment, now=execution.now(), comment=comment)
    return results.status(execution.spark, f"Sequence {name.name} successfully created.")


def _integer(node: exp.Expression, option: str) -> int:
    negative = isinstance(node, exp.Neg)
    literal = node.this if negative else node
    text = str(literal.this) if isinstance(literal, exp.Literal) and not literal.is_string else ""
    if not re.fullmatch(rf"\d{{1,{MAX_DIGITS}}}", text):
        raise SqlCompilationError(f"{option} must be an integer of at most {MAX_DIGITS} digits")
    value = int(text)
    return -value if negative else value


def drop_sequence(execution: Execution, target: exp.Table) -> tuple[str, str, SequenceEntry | None]:
    """Drop a sequence inside DROP's transaction: (its name for messages, its label, the entry)."""
    name = execution.tables.name(target)
    entry = execution.catalog.sequence(name.database, name.schema, name.name)
    if entry is not None:
        execution.catalog.drop_sequence(entry, execution.now())
    return str(name), name.name, entry


def show_sequences(execution: Execution, like: re.Pattern[str] | None) -> DataFrame:
    """``SHOW SEQUENCES [LIKE 'p'] [IN {SCHEMA s | DATABASE d}]``."""
    catalog = execution.catalog
    data = [
        (q.created_at, q.name, q.database, q.schema, q.next_value, q.increment, q.comment)
        for schema in scope_schemas(execution)
        for q in catalog.sequences(schema)
        if like is None or like.match(q.name)
    ]
    return results.rows(execution.spark, SHOW_SCHEMA, data)


registry.CREATORS["SEQUENCE"] = create_sequence
registry.DROPPERS["SEQUENCE"] = drop_sequence
registry.SHOWS["SEQUENCES"] = show_sequences
