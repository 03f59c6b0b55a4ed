"""Binding lsql expressions to table versions and compiling them to Spark SQL."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar

from sqlglot import exp

from lakeclone import timetravel
from lakeclone.engine import registry
from lakeclone.engine.functions import check_functions
from lakeclone.engine.subscripts import read_subscripts
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.engine.tables import Tables

SPARK = "spark"

# What a table reference may carry besides its name; anything else parses but
# lakeclone does not run it, and saying so beats ignoring it.
_TABLE_ARGS = {"this", "db", "catalog", "alias", "when", "version", "joins", "laterals", "pivots", "sample"}
_UNSUPPORTED_TABLE_ARGS = {"changes": "CHANGES", "system_time": "FOR SYSTEM_TIME", "partition": "PARTITION"}

# A statement or query: sqlglot's exp.Query is a mixin of exp.Expr, not an exp.Expression.
Bound = TypeVar("Bound", bound=exp.Expr)


def bind_tables(expression: Bound, tables: Tables) -> Bound:
    """A copy of ``expression`` whose table references read pinned Delta versions.

    Each reference becomes ``delta.`<location>` VERSION AS OF n`` for the
    table at its time-travel point (or the version the statement reads now),
    aliased to the name the query used, so that ``t.col`` keeps resolving. CTE
    names are left alone. The session functions answer from lakeclone's
    session and the Lake's clock, not from Spark's.
    """
    bound = expression.copy()
    bind_session_functions(bound, tables)
    bind_catalog_functions(bound, tables)
    # Found before anything is replaced: what a table function or a relation binds to is no reference to bind.
    references = relation_references(bound)
    read_subscripts(bound, tables, references)  # before the names are bound: it reads their columns' types
    calls = table_function_calls(bound)
    staged = staged_references(bound)
    for table in bound.find_all(exp.Table):
        if isinstance(table.this, exp.Identifier):
            check_table_clauses(table, allowed=registry.TABLE_CLAUSES.keys())
    for table in staged:
        table.replace(carry_clauses(table, _bound_files(table, tables)))
    if staged:
        name_positional_columns(bound)
    for node, call, function in calls:
        node.replace(carry_clauses(node, function.bind(tables, call), alias=node.args.get("alias")))
    for table in references:
        table.replace(carry_clauses(table, _bound_relation(table, tables)))
    return bound


def staged_references(expression: exp.Expr) -> list[exp.Table]:
    """The references in ``expression`` to staged files: ``@stage[/path]``."""
    return [table for table in expression.find_all(exp.Table) if isinstance(table.this, exp.Var) and table.name.startswith("@")]


def positional_columns(expression: exp.Expr) -> list[exp.Parameter]:
    """Snowflake's positional columns in ``expression``: ``$1``, ``t.$2`` (the fields of staged files)."""
    return [node for node in expression.find_all(exp.Parameter) if isinstance(node.this, exp.Literal) and node.this.is_int]


def name_positional_columns(expression: exp.Expr) -> None:
    """Replace, in place, ``$1``, ``t.$2`` by the columns `$1`, `$2` staged files are bound with."""
    for node in positional_columns(expression):
        name = exp.to_identifier(f"${node.this.name}", quoted=True)
        if isinstance(node.parent, exp.Column) and node.arg_key == "this":
            node.replace(name)
        else:
            node.replace(exp.column(name))


def _bound_files(table: exp.Table, tables: Tables) -> exp.Expression:
    bind = registry.SLOTS.staged_files
    if bind is None:
        raise SqlCompilationError(f"Reading staged files ({table.name}) is not supported.")
    return bind(tables, table)


def bind_session_functions(expression: exp.Expr, tables: Tables) -> None:
    """Replace, in place, the session functions in ``expression`` by their values for the statement.

    CURRENT_DATABASE(), CURRENT_SCHEMA(), CURRENT_ROLE() and CURRENT_USER() answer from lakeclone's session,
    CURRENT_DATE and CURRENT_TIMESTAMP from the Lake's clock, not Spark's.
    """
    session_functions = (
        exp.CurrentDatabase,
        exp.CurrentSchema,
        exp.CurrentTimestamp,
        exp.CurrentDate,
        exp.CurrentRole,
        exp.CurrentUser,
    )
    for node in list(expression.find_all(*session_functions)):
        value = _session_value(node, tables)
        if isinstance(node.parent, exp.Select) and node.arg_key == "expressions":
            # Snowflake names such a column after the call: CURRENT_DATABASE().
            value = exp.alias_(value, exp.to_identifier(node.sql(dialect="snowflake").upper(), quoted=True))
        node.replace(value)


def bind_catalog_functions(expression: exp.Expr, tables: Tables) -> None:
    """Replace each call of a function lakeclone answers from the catalog (GET_DDL) with its value."""
    for call in list(expression.find_all(exp.Anonymous)):
        function = registry.SCALAR_FUNCTIONS.get(call.name.upper())
        if function is None:
            continue
        value: exp.Expr = function(tables, call)
        if isinstance(call.parent, exp.Select) and call.arg_key == "expressions":
            # Snowflake names such a column after the call: GET_DDL('TABLE', 'T').
            value = exp.alias_(value, exp.to_identifier(call.sql(dialect="snowflake").upper(), quoted=True))
        call.replace(value)


def relation_references(expression: exp.Expr) -> list[exp.Table]:
    """The references in ``expression`` that name a table, view or other relation: not CTE names nor table functions."""
    ctes = {cte.alias_or_name for cte in expression.find_all(exp.CTE)}
    return [
        table
        for table in expression.find_all(exp.Table)
        if isinstance(table.this, exp.Identifier) and (table.db or table.catalog or table.name not in ctes)
    ]


def table_function_calls(
    expression: exp.Expr,
) -> list[tuple[exp.Table | exp.TableFromRows, exp.Anonymous, registry.TableFunction]]:
    """Each call in ``expression`` of a table function lakeclone binds: (the node in a table's place, the call, the function).

    Either spelling: ``f(...)``, or ``TABLE(f(...))`` and ``TABLE(INFORMATION_SCHEMA.f(...))``.
    """
    calls: list[tuple[exp.Table | exp.TableFromRows, exp.Anonymous, registry.TableFunction]] = []
    for node in expression.find_all(exp.Table, exp.TableFromRows):
        assert isinstance(node, (exp.Table, exp.TableFromRows))  # what find_all was asked for
        call = node.this.expression if isinstance(node, exp.TableFromRows) and isinstance(node.this, exp.Dot) else node.this
        if isinstance(call, exp.Anonymous) and call.name.upper() in registry.TABLE_FUNCTIONS:
            calls.append((node, call, registry.TABLE_FUNCTIONS[call.name.upper()]))
    return calls


def read_references(expression: exp.Expr) -> list[exp.Table]:
    """Every relation ``expression`` reads by name: those it names, and those its table functions read (TABLE_CHANGES')."""
    read = [table for _, call, function in table_function_calls(expression) for table in function.reads(call)]
    return [*relation_references(expression), *read]


def protected(
    tables: Tables, name: QualifiedName, relation: exp.Expression, predicates: Sequence[exp.Expression] = ()
) -> exp.Expression:
    """``relation``, bound for what ``name`` names, read through the policies that protect it (see registry.PROTECTORS).

    Every binding of a relation goes through here: a table's name, a stream's,
    a view's, and what a table function reads. ``predicates`` are the
    conditions the statement itself puts on the relation's rows (see
    :func:`own_predicates`).
    """
    for protect in registry.PROTECTORS:
        guarded = protect(tables, name, relation, predicates)
        if guarded is not relation:
            tables.protected.append(name)
        relation = guarded
    return relation


APPLIED_INSIDE = "lakeclone_applied_inside"
"""The mark (in a predicate's ``meta``) of one of :func:`own_predicates` a protector applies inside the relation.

It applies it exactly as written, to the same values (a column the policies
pass through unmasked): the statement need not apply it a second time.
"""


def own_predicates(table: exp.Table) -> list[exp.Expression]:
    """The conjuncts of the WHERE clause of a SELECT that reads ``table`` and nothing else.

    Each is a condition every row the SELECT keeps meets, whatever else the
    statement does with them. None when the SELECT joins, or ``table``
    carries a clause (a sample, a pivot) that changes its rows before the
    WHERE sees them.
    """
    select = table.parent.parent if isinstance(table.parent, exp.From) else None
    if not isinstance(select, exp.Select) or select.args.get("joins") or select.args.get("laterals"):
        return []
    if any(table.args.get(key) for key in ("joins", "laterals", "pivots", "sample")):
        return []
    where = select.args.get("where")
    if not isinstance(where, exp.Where):
        return []
    condition = where.this
    conjuncts = condition.flatten() if isinstance(condition, exp.And) else [condition]
    return [c for c in conjuncts if isinstance(c, exp.Expression)]


def _bound_relation(table: exp.Table, tables: Tables) -> exp.Expression:
    """A table reference bound, then read through the policies that protect it."""
    predicates = own_predicates(table)
    bound = protected(tables, tables.name(table), _bound_name(table, tables), predicates)
    select = table.parent.parent if table.parent is not None else None
    if isinstance(select, exp.Select) and any(predicate.meta.get(APPLIED_INSIDE) for predicate in predicates):
        _without_applied(select, predicates)
    return bound


def _without_applied(select: exp.Select, predicates: list[exp.Expression]) -> None:
    """``select``'s WHERE without the conjuncts a protector applied inside its relation (Spark would filter twice)."""
    kept = [predicate for predicate in predicates if not predicate.meta.get(APPLIED_INSIDE)]
    select.set("where", exp.Where(this=exp.and_(*(p.copy() for p in kept))) if kept else None)


def _bound_name(table: exp.Table, tables: Tables) -> exp.Expression:
    """A table reference bound: a table at its pinned version, else what a feature resolves the name to."""
    alias = table.args.get("alias") or exp.TableAlias(this=exp.to_identifier(table.name))
    name = tables.name(table)
    entry = tables.catalog.objects.table(name.database, name.schema, name.name)
    if entry is not None:
        for clause, bind in registry.TABLE_CLAUSES.items():
            if table.args.get(clause):
                return bind(tables, table, entry)
        version = tables.version(entry, timetravel.point_of(table))
        return tables.reference(entry, version, alias)
    for clause in registry.TABLE_CLAUSES:
        if table.args.get(clause):
            label = _UNSUPPORTED_TABLE_ARGS.get(clause, clause.upper())
            raise SqlCompilationError(f"{label} is supported on tables only, and {name} is no table.")
    for resolve in registry.RELATIONS:
        relation = resolve(tables, table, name)
        if relation is not None:
            return relation
    raise ObjectNotFoundError(str(name))


def carry_clauses(
    table: exp.Table | exp.TableFromRows, replacement: exp.Expression, *, alias: exp.Expression | None = None
) -> exp.Expression:
    """``replacement`` with the joins, laterals, pivots and sample written after ``table`` (and ``alias``, if given)."""
    for key in ("joins", "laterals", "pivots", "sample"):
        if table.args.get(key):
            replacement.set(key, table.args[key])
    if alias is not None:
        replacement.set("alias", alias)
    return replacement


def check_table_clauses(table: exp.Table, *, allowed: Iterable[str] = ()) -> None:
    """Refuse the clauses of a table reference that lakeclone parses but does not run."""
    for key, value in table.args.items():
        if value and key not in _TABLE_ARGS and key not in allowed:
            clause = _UNSUPPORTED_TABLE_ARGS.get(key, key.upper())
            raise SqlCompilationError(f"{clause} on a table reference is not supported by lakeclone.")


def _session_value(node: exp.Expr, tables: Tables) -> exp.Expr:
    if isinstance(node, exp.CurrentDatabase):
        return exp.Literal.string(tables.session.database) if tables.session.database else exp.null()
    if isinstance(node, exp.CurrentSchema):
        return exp.Literal.string(tables.session.schema) if tables.session.schema else exp.null()
    if isinstance(node, exp.CurrentRole):
        return exp.Literal.string(tables.session.role)
    if isinstance(node, exp.CurrentUser):
        return exp.Literal.string(tables.session.user)
    moment = tables.now.astimezone(dt.timezone.utc)
    if isinstance(node, exp.CurrentDate):
        return exp.cast(exp.Literal.string(moment.date().isoformat()), exp.DataType.Type.DATE)
    return exp.cast(exp.Literal.string(moment.strftime("%Y-%m-%d %H:%M:%S.%f")), exp.DataType.Type.TIMESTAMP)


# Snowflake query forms that sqlglot parses but Spark has no counterpart for.
# Refusing them by name beats Spark's "syntax error at or near ..." about text
# the user never wrote.
_UNSUPPORTED_FORMS: tuple[tuple[type[exp.Expression], Callable[[exp.Expression], bool], str], ...] = (
    (exp.Connect, lambda _: True, "CONNECT BY"),
    (exp.MatchRecognize, lambda _: True, "MATCH_RECOGNIZE"),
    (exp.Join, lambda join: join.text("method").upper() == "ASOF", "ASOF JOIN"),
    (exp.Explode, lambda node: isinstance(node.this, exp.Kwarg), "FLATTEN"),
    (exp.Generator, lambda _: True, "GENERATOR"),
)


def check_query_forms(expression: exp.Expr) -> None:
    """Refuse the query forms lakeclone parses but cannot run on Spark."""
    for kind, matches, name in _UNSUPPORTED_FORMS:
        if any(matches(node) for node in expression.find_all(kind)):
            raise SqlCompilationError(f"{name} is not supported by lakeclone.")


def to_spark(expression: exp.Expr) -> str:
    """Spark SQL text for an lsql expression.

    Raises:
        SqlCompilationError: it uses a form lakeclone cannot run, or calls a function no statement may call.
    """
    check_query_forms(expression)
    check_functions(expression)
    return _spark_forms(expression.copy()).sql(dialect=SPARK)


# The units below a day that DATEADD takes, as Spark's TIMESTAMPADD names them.
_TIME_UNITS = {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}

# The units of a day and above: the place of their count among MAKE_INTERVAL's arguments
# (years, months, weeks, days), and what one of them counts there.
_DATE_UNITS = {"YEAR": (0, 1), "QUARTER": (1, 3), "MONTH": (1, 1), "WEEK": (2, 1), "DAY": (3, 1)}


def _spark_forms(expression: exp.Expr) -> exp.Expr:
    """Rewrite the Snowflake forms sqlglot keeps that Spark cannot parse or reads differently.

    sqlglot's Snowflake parser turns ``x NOT IN (SELECT ...)`` into
    ``x <> ALL (SELECT ...)``, which Spark has no syntax for. ``SAMPLE``
    becomes a filter or an ordering by ``rand()`` (see :func:`_sampled`).
    """
    # A holder, so that the root itself can be rewritten (an UPDATE's SET value that is one PARSE_JSON call).
    holder = exp.Paren(this=expression)
    for identifier in holder.find_all(exp.Identifier):
        # Spark reads `$` in no unquoted name; Snowflake's METADATA$ACTION needs quoting there.
        if "$" in identifier.name:
            identifier.set("quoted", True)
    for node in list(holder.find_all(exp.NEQ)):
        quantified = node.expression
        if isinstance(quantified, exp.All) and isinstance(quantified.this, exp.Query):
            node.replace(exp.not_(exp.In(this=node.this, query=exp.Subquery(this=quantified.this))))
    for values in list(holder.find_all(exp.Values)):
        if isinstance(values.parent, (exp.From, exp.Join)):
            _name_values_columns(values)
    for constructed in list(holder.find_all(exp.Struct)):
        # Snowflake's OBJECT_CONSTRUCT (and {'k': v}) makes an OBJECT, a VARIANT; sqlglot writes Spark's STRUCT.
        constructed.replace(exp.Anonymous(this="to_variant_object", expressions=[constructed.copy()]))
    for parsed in list(holder.find_all(exp.ParseJSON)):
        # sqlglot writes PARSE_JSON(x) as x for Spark, whose older versions had no VARIANT.
        function = "try_parse_json" if parsed.args.get("safe") else "parse_json"
        parsed.replace(exp.Anonymous(this=function, expressions=[parsed.this]))
    for extract in list(holder.find_all(exp.JSONExtract)):
        if extract.args.get("variant_extract") and isinstance(extract.expression, exp.JSONPath):
            # Snowflake's v:a.b[0] reads a VARIANT; Spark's get_json_object, sqlglot's spelling, reads JSON text.
            path = exp.Literal.string(_variant_path(extract.expression))
            extract.replace(exp.Anonymous(this="variant_get", expressions=[extract.this, path]))
    for added in list(holder.find_all(exp.DateAdd)):
        unit = added.text("unit").upper()
        if unit == "NANOSECOND":
            raise SqlCompilationError(
                "DATEADD by NANOSECOND is not supported by lakeclone: Spark's timestamps hold microseconds."
            )
        if unit in _TIME_UNITS:
            # sqlglot writes DATEADD(MINUTE, n, ts) as Spark's DATE_ADD(ts, n): n days, and a DATE.
            added.replace(exp.Anonymous(this="timestampadd", expressions=[exp.var(unit), added.expression, added.this]))
        elif unit in _DATE_UNITS:
            # sqlglot writes DATEADD(DAY, n, ts) as DATE_ADD(ts, n) and DATEADD(MONTH, …) as ADD_MONTHS, both a
            # DATE. Adding an interval keeps the type, as Snowflake does: a DATE stays a DATE, a TIMESTAMP its time.
            place, per_unit = _DATE_UNITS[unit]
            count = exp.cast(added.expression, exp.DataType.build("INT"))
            parts: list[exp.Expression] = [exp.Literal.number(0)] * 7
            parts[place] = count if per_unit == 1 else exp.Mul(this=count, expression=exp.Literal.number(per_unit))
            start = added.this
            if isinstance(start, exp.Literal) and start.is_string:
                # Snowflake reads a text start as a TIMESTAMP_NTZ; Spark would add to it as text and return text.
                start = exp.cast(start, exp.DataType.build("TIMESTAMP_NTZ"))
            interval = exp.Anonymous(this="make_interval", expressions=parts)
            added.replace(exp.paren(exp.Add(this=start, expression=interval)))
    for sample in list(holder.find_all(exp.TableSample)):
        source = sample.parent
        if isinstance(source, (exp.Table, exp.Subquery)) and sample.arg_key == "sample":
            source.replace(_sampled(source, sample))
    rewritten: exp.Expr = holder.this
    return rewritten


def _name_values_columns(values: exp.Values) -> None:
    """A VALUES table's columns named as Snowflake names them, COLUMN1, COLUMN2, …, and ``$n`` read as COLUMNn.

    Spark names them col1, col2, …; a column list the query gives
    (``AS t(a, b)``) stands. Staged files' ``$n`` are bound before this.
    """
    alias = values.args.get("alias")
    if isinstance(alias, exp.TableAlias) and alias.columns:
        return
    first = values.expressions[0] if values.expressions else None
    width = len(first.expressions) if isinstance(first, exp.Tuple) else 1
    name = alias.this.copy() if isinstance(alias, exp.TableAlias) and alias.this else exp.to_identifier("LC_VALUES")
    values.set("alias", exp.TableAlias(this=name, columns=[exp.to_identifier(f"COLUMN{i}") for i in range(1, width + 1)]))
    select = values.find_ancestor(exp.Select)
    if select is None:
        return
    for node in positional_columns(select):
        if node.find_ancestor(exp.Select) is not select:
            continue
        column = exp.to_identifier(f"COLUMN{node.this.name}")
        if isinstance(node.parent, exp.Column) and node.arg_key == "this":
            node.replace(column)
        else:
            node.replace(exp.column(column))


def _variant_path(path: exp.JSONPath) -> str:
    """A JSON path as Spark's ``variant_get`` reads it: ``$.a['b c'][0]``."""
    text = ""
    for part in path.expressions:
        if isinstance(part, exp.JSONPathRoot):
            text += "$"
        elif isinstance(part, exp.JSONPathKey) and str(part.this).isidentifier():
            text += f".{part.this}"
        elif isinstance(part, exp.JSONPathKey):
            text += "['" + str(part.this).replace("\\", "\\\\").replace("'", "\\'") + "']"
        elif isinstance(part, exp.JSONPathSubscript):
            text += f"[{part.this}]"
        else:
            raise SqlCompilationError(f"unsupported path {path.sql(dialect='snowflake')}")
    return text


def _sampled(source: exp.Table | exp.Subquery, sample: exp.TableSample) -> exp.Subquery:
    """``source SAMPLE (...)`` as a subquery Spark runs with Snowflake's meaning.

    ``SAMPLE (p)`` keeps each row with probability p percent; ``SAMPLE (n ROWS)``
    keeps exactly n rows (or all, when fewer), chosen at random. Spark's own
    ``TABLESAMPLE (n ROWS)`` is a plain LIMIT, and its TABLESAMPLE does not
    apply to every source (a ``delta.`path``` with ``VERSION AS OF``), so the
    rows are drawn with ``rand()`` instead: ``SEED``/``REPEATABLE`` seeds it.
    ``SYSTEM``/``BLOCK`` sampling draws rows too, which Snowflake allows it to
    approximate.
    """
    if sample.args.get("bucket_numerator") or sample.args.get("bucket_field"):
        raise SqlCompilationError("SAMPLE (BUCKET ...) is not supported by lakeclone.")
    seed = sample.args.get("seed")
    draw = exp.Anonymous(this="rand", expressions=[seed.copy()] if seed else [])
    alias = source.args.get("alias")
    inner = source.copy()
    inner.set("sample", None)
    inner.set("alias", None)
    pivots = inner.args.get("pivots")
    inner.set("pivots", None)
    rows = exp.select("*").from_(inner if isinstance(inner, exp.Table) else inner.subquery("LC_SAMPLED"))
    percent, size = sample.args.get("percent"), sample.args.get("size")
    if percent is not None:
        if percent.is_number and not 0 <= float(percent.name) <= 100:
            raise SqlCompilationError(f"invalid sample probability {percent.name}: it must be between 0 and 100")
        rows = rows.where(exp.LT(this=draw, expression=exp.Div(this=percent.copy(), expression=exp.Literal.number(100))))
    elif size is not None:
        rows = rows.order_by(draw).limit(size.copy())
    else:
        raise SqlCompilationError(f"invalid SAMPLE clause {sample.sql(dialect='snowflake')}")
    sampled = exp.Subquery(this=rows, alias=alias.copy() if alias else None)
    if pivots:
        sampled.set("pivots", pivots)
    return sampled


def spark_sql(expression: exp.Expr, tables: Tables) -> str:
    """Spark SQL text for a query, its tables bound to pinned versions and read from the files those list."""
    if isinstance(expression, exp.Query):
        expression = named_as_snowflake(expression)
    return to_spark(read_listed_files(bind_tables(expression, tables), tables))


def named_as_snowflake(query: exp.Query) -> exp.Query:
    """``query`` with each result column that has no name of its own named as Snowflake names it.

    Snowflake names such a column after its expression, upper-cased
    (``COUNT(*)``, ``A + 1``); Spark after its own plan (``count(1)``). Only
    the first SELECT of a set operation names its columns.
    """
    first = _first_select(query)
    if first is None or all(isinstance(e, _NAMED) for e in first.expressions):
        return query
    query = query.copy()
    first = _first_select(query)
    assert first is not None
    first.set(
        "expressions",
        [
            e if isinstance(e, _NAMED) else exp.alias_(e, exp.to_identifier(e.sql(dialect="snowflake").upper(), quoted=True))
            for e in first.expressions
        ],
    )
    return query


# Result columns named by what they are: an alias, a column (its name), a star (the columns').
_NAMED = (exp.Alias, exp.Column, exp.Star)


def _first_select(query: exp.Expr) -> exp.Select | None:
    """The SELECT whose columns name a query's result: the first of a set operation's, inside any parentheses."""
    while isinstance(query, (exp.SetOperation, exp.Subquery)):
        query = query.this
    return query if isinstance(query, exp.Select) else None


def read_listed_files(bound: Bound, tables: Tables) -> Bound:
    """``bound`` with each pinned version whose checksum lists its files read from that list (see ``TableLog.listed_frame``).

    The last step before Spark: policies and caches keyed by a reference's
    text see ``delta.`<location>` VERSION AS OF n`` up to here.
    """
    views: dict[tuple[str, int], exp.Table | None] = {}  # one per version, however often the statement names it
    for table in list(bound.find_all(exp.Table)):
        version = table.args.get("version")
        if table.db != "delta" or not isinstance(version, exp.Version) or not version.expression.is_int:
            continue
        key = (table.name, int(version.expression.name))
        if key not in views:
            frame = tables.delta.table(key[0]).listed_frame(key[1])
            views[key] = None if frame is None else tables.bind_frame(frame, None)
        view = views[key]
        if view is not None:
            table.set("this", view.this.copy())
            table.set("db", None)
            table.set("version", None)
    return bound
