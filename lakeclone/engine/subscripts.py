"""Subscripts of semi-structured values read as Snowflake reads them: ``v['key']``, ``v[0]``, ``a[5]``.

In Snowflake a subscript of a VARIANT, an OBJECT or an ARRAY is a VARIANT,
and NULL where the key or the index is not there. Spark subscripts no VARIANT
at all ("Can't extract a value from …"), and its ANSI mode raises for an
array index past the end. Spark answers Snowflake's way through
``variant_get(v, '$.key')`` for a VARIANT and ``get(a, i)`` for an array, but
only for an operand of that type: a STRUCT or a MAP, which a table written by
Spark may hold, it subscripts natively. So each subscript is rewritten only
where its operand's type is known before Spark analyses the statement: a
column of a table the query reads (its type at the version the statement
pins), a semi-structured value built in the query (``PARSE_JSON``, ``v:path``,
``ARRAY_CONSTRUCT``, ``OBJECT_CONSTRUCT``, a cast), or a subscript rewritten
before it. Any other subscript stays as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING

from pyspark.sql.types import ArrayType, VariantType
from sqlglot import exp

from lakeclone import timetravel
from lakeclone.engine import registry
from lakeclone.engine.schema import column_named

if TYPE_CHECKING:
    from pyspark.sql.types import DataType

    from lakeclone.engine.tables import Tables


class _Shape(Enum):
    """What a subscript's operand is, as far as the rewrite needs to know."""

    VARIANT = "VARIANT"  # a VARIANT (an OBJECT is one): subscripted by a path
    ARRAY = "ARRAY"  # a Spark array: subscripted by get(), NULL past its ends


def read_subscripts(expression: exp.Expr, tables: Tables, references: Sequence[exp.Table]) -> None:
    """Rewrite, in place, each subscript in ``expression`` whose operand's shape is known (see the module's docstring).

    ``references`` are the relations ``expression`` names (see :func:`lakeclone.engine.compiler.relation_references`):
    a column is typed only from one of them, not from a CTE that takes a table's name.
    """
    # Deepest first, so that the subscript of a subscript sees its operand rewritten: v['a'][0].
    brackets = sorted(expression.find_all(exp.Bracket), key=lambda node: node.depth, reverse=True)
    if not brackets:
        return
    for bracket in brackets:
        if len(bracket.expressions) != 1:
            continue
        shape = _shape(bracket.this, tables, references)
        index = bracket.expressions[0]
        if shape is _Shape.ARRAY and not (isinstance(index, exp.Literal) and index.is_string):
            bracket.replace(exp.Anonymous(this="get", expressions=[bracket.this, index]))
        elif shape is _Shape.VARIANT and isinstance(index, exp.Literal):
            path = exp.Literal.string(_path(index))
            bracket.replace(exp.Anonymous(this="variant_get", expressions=[bracket.this, path]))


def _path(index: exp.Literal) -> str:
    """A subscript's literal as a path ``variant_get`` reads: ``$[0]``, ``$['key']``."""
    if index.is_int:
        return f"$[{index.name}]"
    return "$['" + index.name.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _shape(operand: exp.Expression, tables: Tables, references: Sequence[exp.Table]) -> _Shape | None:
    if isinstance(operand, (exp.ParseJSON, exp.Struct)):
        return _Shape.VARIANT  # OBJECT_CONSTRUCT ({'k': v}) makes an OBJECT, a VARIANT
    if isinstance(operand, exp.JSONExtract) and operand.args.get("variant_extract"):
        return _Shape.VARIANT
    if isinstance(operand, exp.Anonymous) and operand.name.lower() == "variant_get":
        return _Shape.VARIANT  # a subscript rewritten before this one
    if isinstance(operand, exp.Array):
        return _Shape.ARRAY
    if isinstance(operand, exp.Cast):
        return _Shape.VARIANT if operand.to.is_type(exp.DataType.Type.VARIANT, exp.DataType.Type.OBJECT) else None
    if isinstance(operand, exp.Column):
        kind = _column_type(operand, tables, references)
        if isinstance(kind, VariantType):
            return _Shape.VARIANT
        if isinstance(kind, ArrayType):
            return _Shape.ARRAY
    return None


def _column_type(column: exp.Column, tables: Tables, references: Sequence[exp.Table]) -> DataType | None:
    """The Spark type of the table column ``column`` names, in the SELECT it is in; None when it is not one."""
    select = column.find_ancestor(exp.Select)
    if select is None or column.args.get("db"):
        return None
    from_ = select.args.get("from_")
    sources = [from_.this] if isinstance(from_, exp.From) else []
    sources += [join.this for join in select.args.get("joins") or []]
    found: list[DataType] = []
    for source in sources:
        if not any(source is reference for reference in references):
            continue
        if column.table and column.table.upper() != source.alias_or_name.upper():
            continue
        kind = _table_column_type(source, column, tables)
        if kind is not None:
            found.append(kind)
    return found[0] if len(found) == 1 else None


def _table_column_type(source: exp.Table, column: exp.Column, tables: Tables) -> DataType | None:
    """The type of ``column`` in the table ``source`` names, at the version the statement reads; None if it has none."""
    if any(source.args.get(clause) for clause in registry.TABLE_CLAUSES):
        return None
    name = tables.name(source)
    entry = tables.catalog.objects.table(name.database, name.schema, name.name)
    if entry is None:
        return None  # a view, a stream, a CTE: its columns are no stored ones
    schema = tables.log(entry).schema(tables.version(entry, timetravel.point_of(source)))
    by_name = {field.name: field.dataType for field in schema.fields}
    named = column_named(by_name, column)
    return by_name[named] if named is not None else None
