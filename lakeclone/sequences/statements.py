"""CREATE, DROP and SHOW SEQUENCE.

A sequence lives in the catalog. Values are handed out in blocks under
SQLite's write lock (:meth:`SequenceStore.reserve_sequence_values`), so two sessions
never get the same value.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from lakeclone.catalog.entries import ObjectKind
from lakeclone.engine import registry, results
from lakeclone.engine.objects import make_room, require_schema, value_of
from lakeclone.errors import SqlCompilationError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from lakeclone.catalog.entries import SequenceEntry
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
    with execution.work.records():
        schema = require_schema(execution, name.database, name.schema)
        held = make_room(execution, ObjectKind.SEQUENCE, name)
        if held is not None:
            return held
        execution.catalog.sequences.create_sequence(
            schema, name.name, start=start, increment=increment, now=execution.now(), comment=comment
        )
    return results.status(execution.spark, f"Sequence {name.name} successfully created.")


def _integer(node: exp.Expression, option: str) -> int:
    negative = isinstance(node, exp.Neg)
    literal = node.this if negative else node
    text = str(literal.this) if isinstance(literal, exp.Literal) and not literal.is_string else ""
    if not re.fullmatch(rf"\d{{1,{MAX_DIGITS}}}", text):
        raise SqlCompilationError(f"{option} must be an integer of at most {MAX_DIGITS} digits")
    value = int(text)
    return -value if negative else value


def _show_row(execution: Execution, sequence: SequenceEntry) -> tuple[Any, ...]:
    """SHOW SEQUENCES' row."""
    q = sequence
    return (q.created_at, q.name, q.database, q.schema, q.next_value, q.increment, q.comment)


registry.schema_object(
    registry.SchemaObject(
        ObjectKind.SEQUENCE,
        "SEQUENCES",
        columns=SHOW_SCHEMA,
        row=_show_row,
        create=create_sequence,
    )
)
