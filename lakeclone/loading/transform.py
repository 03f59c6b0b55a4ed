"""``COPY INTO t [(columns)] FROM (SELECT … FROM @stage[/path] [alias])``: Snowflake's transformations during a load.

The query picks, reorders, casts and computes the loaded values from the
files' fields (``$1``, ``t.$2``, ``$1:name`` of a JSON record, the
``METADATA$…`` columns), one result column per column loaded, as Snowflake's
COPY does. It is one simple SELECT from one stage: no WHERE, GROUP BY,
ORDER BY, LIMIT, DISTINCT, join, aggregate, window or subquery (Snowflake's
rule), and it reads nothing but the files the COPY loads.

Each value is then checked against its column as an untransformed load's are
(:mod:`lakeclone.loading.read`), so ``ON_ERROR`` decides what a bad one costs.
An explicit cast in the query that fails (``$1::INT`` of ``'abc'``) is such an
error too, with Snowflake's message, rather than a failure of the statement:
the query runs with each cast as a ``TRY_CAST`` and reports where one gave NULL
for a value that was there. A function that fails on its input
(``TO_DATE('x')``) still fails the statement, whatever ``ON_ERROR`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.engine.compiler import bind_session_functions, name_positional_columns, to_spark
from lakeclone.errors import SqlCompilationError
from lakeclone.loading import read
from lakeclone.loading.query import MALFORMED, columns_read, staged_frame

if TYPE_CHECKING:
    from lakeclone.engine.tables import Tables
    from lakeclone.loading.formats import FileFormat
    from lakeclone.loading.stages import Location
    from lakeclone.storage import FileInfo

_SIMPLE = "COPY statement only supports simple SELECT from stage statements for import"

# What a transformation's SELECT may not have, by sqlglot's name for the clause.
_CLAUSES = {
    "with_": "WITH",
    "distinct": "DISTINCT",
    "joins": "a join",
    "laterals": "LATERAL",
    "where": "WHERE",
    "group": "GROUP BY",
    "having": "HAVING",
    "qualify": "QUALIFY",
    "windows": "WINDOW",
    "order": "ORDER BY",
    "limit": "LIMIT",
    "offset": "OFFSET",
    "sample": "SAMPLE",
    "pivots": "PIVOT",
}

# Snowflake's message for a value an explicit cast cannot take, by the kind of type cast to.
_CAST_FAILURES = (
    (exp.DataType.NUMERIC_TYPES, "Numeric value '%s' is not recognized"),
    ({exp.DataType.Type.DATE}, "Date '%s' is not recognized"),
    ({exp.DataType.Type.TIME}, "Time '%s' is not recognized"),
    (exp.DataType.TEMPORAL_TYPES, "Timestamp '%s' is not recognized"),
    ({exp.DataType.Type.BOOLEAN}, "Boolean value '%s' is not recognized"),
)


@dataclass(frozen=True)
class Transformation:
    """A COPY's query over the files it loads.

    Attributes:
        query: the SELECT, as written.
        source: its FROM: ``@stage[/path]``, with any ``(FILE_FORMAT => …, PATTERN => …)``.
    """

    query: exp.Select
    source: exp.Table

    @property
    def width(self) -> int:
        """How many columns it loads."""
        return len(self.query.expressions)

    def rows(
        self, tables: Tables, location: Location, files: dict[str, FileInfo], file_format: FileFormat
    ) -> read.Transformation:
        """The query over the files a COPY loads (of ``files``, by URI), as a load checks them."""

        def transformed(uris: list[str]) -> read.Transformed:
            fields, metadata = columns_read(self.query, file_format)
            frame = staged_frame(tables, location, [files[uri] for uri in uris], file_format, fields, metadata, loading=True)
            view = tables.bind_frame(frame, self.source.args.get("alias"))
            text, casts = self._compiled(tables, view)
            values = [f"`v{i}`" for i in range(self.width)]
            errors = [f"`e{i}`" if cast else None for i, cast in enumerate(casts)]
            return read.Transformed(tables.spark.sql(text), values, errors, MALFORMED if file_format.type == "JSON" else None)

        return transformed

    def _compiled(self, tables: Tables, view: exp.Table) -> tuple[str, list[bool]]:
        """Spark SQL for the query over ``view``, and which of its values has explicit casts.

        Its columns: each value (``v0`` …), the first error of its casts
        (``e0`` …, where it has any) and the row's own columns.
        """
        query = self.query.copy()
        bind_session_functions(query, tables)
        name_positional_columns(query)
        outputs: list[exp.Expr] = []
        casts = []
        for index, projection in enumerate(query.expressions):
            value = projection.this if isinstance(projection, exp.Alias) else projection
            value, failures = _casts_tried(value.copy())
            outputs.append(exp.alias_(value, f"v{index}"))
            if failures:
                outputs.append(exp.alias_(exp.Coalesce(this=failures[0], expressions=failures[1:]), f"e{index}"))
            casts.append(bool(failures))
        own = [exp.column(name, quoted=True) for name in (read.FILE, read.BLANK, MALFORMED)]
        return to_spark(exp.select(*outputs, *own).from_(view)), casts


def transformation_of(expression: exp.Copy) -> Transformation | None:
    """The COPY's transformation, if it loads the result of a query.

    Raises:
        SqlCompilationError: the query is more than a simple SELECT of values from one stage's files.
    """
    sources = expression.args.get("files") or []
    if len(sources) != 1 or not isinstance(sources[0], exp.Subquery):
        return None
    query = sources[0].this
    if not isinstance(query, exp.Select):
        raise SqlCompilationError(f"{_SIMPLE}: one SELECT, not a set operation.")
    for clause, name in _CLAUSES.items():
        if query.args.get(clause):
            raise SqlCompilationError(f"{_SIMPLE}: {name} is not supported in a COPY transformation.")
    source = query.args["from_"].this if query.args.get("from_") else None
    if not (isinstance(source, exp.Table) and isinstance(source.this, exp.Var) and source.name.startswith("@")):
        raise SqlCompilationError(f"{_SIMPLE}: it reads the files of one stage, FROM @stage[/path].")
    for projection in query.expressions:
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)):
            raise SqlCompilationError(f"{_SIMPLE}: name each value loaded ($1, $2 …), not *.")
        if projection.find(exp.Query, exp.Table, exp.AggFunc, exp.Window) is not None:
            raise SqlCompilationError(
                f"{_SIMPLE}: a loaded value is computed from its record's fields alone (no subquery, aggregate or window)."
            )
    return Transformation(query, source)


def _casts_tried(value: exp.Expression) -> tuple[exp.Expression, list[exp.Expression]]:
    """``value`` with each explicit cast a TRY_CAST, and, innermost first, the error each reports where it gave NULL."""
    holder = exp.Paren(this=value)
    failures: list[exp.Expression] = []
    # Deepest first: a cast's check reads its operand with the casts inside it already tried.
    for cast in reversed(list(holder.find_all(exp.Cast))):
        if isinstance(cast, exp.TryCast):
            continue
        operand, to = cast.this, cast.args["to"]
        tried = _try_cast(operand.copy(), to.copy())
        present = exp.Not(this=exp.Is(this=operand.copy(), expression=exp.Null()))
        failed = exp.and_(present, exp.Is(this=tried, expression=exp.Null()))
        shown = exp.cast(operand.copy(), exp.DataType.build("STRING"))
        message = exp.Anonymous(this="format_string", expressions=[exp.Literal.string(_cast_failure(to)), shown])
        failures.append(exp.Case(ifs=[exp.If(this=failed, true=message)]))
        cast.replace(_try_cast(operand, to))
    return holder.this, failures


def _try_cast(operand: exp.Expression, to: exp.DataType) -> exp.TryCast:
    # As Snowflake's parser builds one: sqlglot writes a TRY_CAST without these flags for Spark as a plain CAST.
    return exp.TryCast(this=operand, to=to, safe=True, requires_string=True)


def _cast_failure(to: exp.DataType) -> str:
    for kinds, message in _CAST_FAILURES:
        if to.is_type(*kinds):
            return message
    return f"Value '%s' cannot be cast to {to.sql(dialect='snowflake')}"
