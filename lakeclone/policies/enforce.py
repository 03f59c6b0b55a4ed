"""Policies compiled into the query: a protected relation is read through a subquery that masks and filters.

Where the binder puts a table (at its pinned version), a view or a stream's
changes in a statement, a relation with policies becomes::

    (SELECT <mask>(col, cond…) AS col, …, other FROM <relation> AS LC_PROTECTED WHERE <row policy>) AS alias

with each policy's body inlined, its arguments replaced by the columns they
read, and CURRENT_ROLE(), CURRENT_USER() and IS_ROLE_IN_SESSION() bound to
the session. Spark evaluates it in the plan, row by row in its own engine; a
relation without policies binds exactly as before. Tables a policy body reads
(a mapping table) are bound in the policy's own schema, with the policy
owner's rights: the querying role needs no privilege on them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from sqlglot import exp
from sqlglot.optimizer.simplify import simplify

from lakeclone.access.guard import GUARD, require_definer_reads
from lakeclone.catalog.entries import ObjectKind
from lakeclone.catalog.policies import OBJECT_LEVEL, PolicyEntry
from lakeclone.dialect import parse
from lakeclone.engine.compiler import APPLIED_INSIDE, bind_tables, read_listed_files, to_spark
from lakeclone.engine.context import SessionContext
from lakeclone.engine.privileges import Definer
from lakeclone.engine.schema import column_named
from lakeclone.errors import SqlCompilationError
from lakeclone.policies.model import Protection, column_types, protection, type_family

if TYPE_CHECKING:
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.engine.tables import Tables

INNER = "LC_PROTECTED"

_Key = TypeVar("_Key")
_Value = TypeVar("_Value")

# Columns a stream's changes carry besides the table's: they pass through unmasked.
_METADATA_PREFIX = "METADATA$"


@functools.lru_cache(maxsize=256)
def _parsed_body(text: str) -> exp.Expression:
    [statement] = parse(f"SELECT {text}")
    select = statement.expression
    assert isinstance(select, exp.Select)
    body: exp.Expression = select.expressions[0]
    return body


def _protected_object(catalog: Catalog, name: QualifiedName) -> tuple[str, ObjectKind] | None:
    """(object id, kind) of what ``name`` reads whose policies apply: a table, a view, or a stream's source."""
    table = catalog.objects.table(name.database, name.schema, name.name)
    if table is not None:
        return table.id, ObjectKind.TABLE
    view = catalog.views.view(name.database, name.schema, name.name)
    if view is not None:
        return view.id, ObjectKind.VIEW
    stream = catalog.streams.stream(name.database, name.schema, name.name)
    if stream is not None:
        return stream.source_id, ObjectKind.STREAM
    return None


def protect(
    tables: Tables, name: QualifiedName, relation: exp.Expression, predicates: Sequence[exp.Expression] = ()
) -> exp.Expression:
    """``relation`` (the binding of ``name``) read through its policies; itself when nothing protects it.

    ``predicates`` are the conditions the statement puts on the relation's rows: on a table, those that cannot
    fail go ahead of the row policy (see :func:`_ahead_of_the_policy`).
    """
    catalog = tables.catalog
    found = _protected_object(catalog, name)
    if found is None:
        return relation
    object_id, kind = found
    if kind is ObjectKind.STREAM:
        _refuse_protected_view_tables(tables, name)
    if not catalog.policies.has_policies(object_id):
        return relation
    columns = _columns(tables, kind, object_id, relation)
    protection_ = protection(catalog, object_id, column_types(columns))
    if not protection_:
        return relation
    # Only a table's columns are its stored values: a view's or a stream's may be expressions that fail, which a
    # predicate evaluated ahead of the policy would compute for the rows it hides.
    return _wrapped(tables, relation, columns, protection_, predicates if kind is ObjectKind.TABLE else ())


def _refuse_protected_view_tables(tables: Tables, name: QualifiedName) -> None:
    """Refuse a stream on a view whose tables have policies: its changes are built from their raw rows.

    The view's own policies apply to the stream like any view's; those of the
    tables under it would have to be applied inside the stream's change
    computation, which lakeclone does not do yet, and reading the raw rows
    instead would show what the policies hide.
    """
    from lakeclone.views.expand import base_tables

    catalog = tables.catalog
    stream = catalog.streams.stream(name.database, name.schema, name.name)
    view = catalog.views.view_by_id(stream.source_id) if stream is not None else None
    if view is None:
        return
    for table in base_tables(tables, view):
        if catalog.policies.has_policies(table.id):
            raise SqlCompilationError(
                f"Stream {name} reads view {view.qualified}, whose table {table.qualified} has masking or row access "
                "policies: lakeclone does not apply a view's table policies to a stream on the view."
            )


def _columns(tables: Tables, kind: ObjectKind, object_id: str, relation: exp.Expression) -> list[tuple[str, str]]:
    """(name, Spark type) of each column ``relation`` gives, in order.

    A table at a pinned version: from that version's metadata in its Delta log
    (no Spark analysis). Anything else (a view, a stream's changes): Spark's
    analysis of the relation.
    """
    version = relation.args.get("version") if kind is ObjectKind.TABLE and isinstance(relation, exp.Table) else None
    entry = tables.catalog.objects.table_by_id(object_id) if version is not None else None
    if version is not None and entry is not None:
        schema = tables.log(entry).schema(int(version.expression.name))
        return [(field.name, field.dataType.simpleString()) for field in schema.fields]
    probe = exp.select("*").from_(_without_clauses(relation)).limit(0)
    schema = tables.spark.sql(to_spark(probe)).schema
    return [(field.name, field.dataType.simpleString()) for field in schema.fields]


def _without_clauses(relation: exp.Expression) -> exp.Expression:
    bare = relation.copy()
    for key in ("joins", "laterals", "pivots", "sample"):
        bare.set(key, None)
    return bare


def _wrapped(
    tables: Tables,
    relation: exp.Expression,
    typed_columns: list[tuple[str, str]],
    protection_: Protection,
    predicates: Sequence[exp.Expression],
) -> exp.Subquery:
    columns = [c for c, _ in typed_columns]
    alias = relation.args.get("alias")
    inner = _without_clauses(relation)
    inner_alias = exp.TableAlias(this=exp.to_identifier(INNER))
    if isinstance(alias, exp.TableAlias) and alias.columns:
        inner_alias.set("columns", [c.copy() for c in alias.columns])
    inner.set("alias", inner_alias)
    by_upper = {c.upper(): c for c in columns}
    values: dict[str, exp.Expression] = {}
    for column in columns:
        mask = protection_.masks.get(column.upper())
        if mask is None or column.upper().startswith(_METADATA_PREFIX):
            values[column] = _column(column)
            continue
        arguments = [_column(by_upper.get(name.upper(), name)) for name in mask.using or (column,)]
        tags = {**protection_.tags.get(OBJECT_LEVEL, {}), **_column_tags(protection_, column)}
        body = _inlined(tables, mask.policy, arguments, tags)
        returns = mask.policy.return_type or mask.policy.signature[0][1]
        values[column] = exp.Cast(this=body, to=exp.DataType.build(returns, dialect="snowflake"))
    passed = {c: kind for c, kind in typed_columns if isinstance(values[c], exp.Column)}
    condition: exp.Expression | None = None
    if protection_.row_filter is not None:
        row_filter = protection_.row_filter
        arguments = [_column(by_upper.get(name.upper(), name)) for name in row_filter.columns]
        condition = _inlined(tables, row_filter.policy, arguments, protection_.tags.get(OBJECT_LEVEL, {}))
        text = to_spark(condition)
        if _always_true(condition, text):
            condition = None  # the session passes the policy whatever the row (an administrator's clause): no filter at all
        elif _reads_tables(condition):
            # A table at its pinned version, or a stream's or table function's changes bound as a frame.
            visible = _visible_condition(tables, inner, arguments, condition, text) if isinstance(inner, exp.Table) else None
            if visible is not None:
                condition = visible
            else:
                values = {column: _ahead_of_later_predicates(value) for column, value in values.items()}
    select = exp.select(*(_named(value, column) for column, value in values.items())).from_(inner)
    if condition is not None:
        renamed = isinstance(alias, exp.TableAlias) and bool(alias.columns)
        ahead = [] if renamed else _ahead_of_the_policy(predicates, alias.name if alias else "", passed)
        select = select.where(exp.and_(*ahead, condition))
    outer_alias = exp.TableAlias(this=alias.this.copy()) if isinstance(alias, exp.TableAlias) and alias.this else None
    return exp.Subquery(this=select, alias=outer_alias)


# A comparison Spark makes without a cast that can fail when one side is a column and the other a literal of its kind.
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)


def _ahead_of_the_policy(predicates: Sequence[exp.Expression], alias: str, passed: Mapping[str, str]) -> list[exp.Expression]:
    """The statement's ``predicates`` that may be evaluated before the row policy, on the policy's inner columns.

    Spark evaluates a filter's conditions in order and stops at the first
    that fails: with the row policy first, a point lookup evaluates the policy
    on every row of each file it reads. A predicate evaluated first sees the
    rows the policy hides, so only those that tell nothing of them go first:
    a comparison (or an IN list) of a column the policies pass through as it
    is (``passed``: name -> Spark type) with literals of the column's
    kind, which can neither fail nor be true of a masked value. Each one
    moved is marked (compiler.APPLIED_INSIDE): it is applied inside to the very
    values the statement reads, so the statement need not apply it again after
    the policy. ``alias`` is the name the statement reads the relation by.
    """
    ahead: list[exp.Expression] = []
    for predicate in predicates:
        column = _compared_column(predicate)
        if column is None or column.args.get("db") or (column.table and column.table.upper() != alias.upper()):
            continue
        name = column_named(passed, column)
        if name is None or not _literals_of_kind(predicate, column, type_family(passed[name])):
            continue
        moved = predicate.copy()
        next(moved.find_all(exp.Column)).replace(_column(name))
        ahead.append(moved)
        predicate.meta[APPLIED_INSIDE] = True
    return ahead


def _compared_column(predicate: exp.Expression) -> exp.Column | None:
    """The one column of ``column <op> literal``, ``literal <op> column`` or ``column IN (literal, …)``; else None."""
    if isinstance(predicate, _COMPARISONS):
        sides = (predicate.this, predicate.expression)
    elif isinstance(predicate, exp.In) and not any(predicate.args.get(k) for k in ("query", "unnest", "field")):
        sides = (predicate.this, *predicate.expressions)
    else:
        return None
    columns = [side for side in sides if isinstance(side, exp.Column)]
    if len(columns) != 1 or not isinstance(columns[0].this, exp.Identifier) or len(sides) < 2:
        return None
    return columns[0]


def _literals_of_kind(predicate: exp.Expression, column: exp.Column, family: str) -> bool:
    """Whether every operand of ``predicate`` but ``column`` is a literal Spark compares with a ``family`` column safely.

    Safely: without casting the column to a type some value of it does not
    fit. A string column is compared with a string as it is; an integer or
    decimal one with an integer in a type wide enough for both (a fraction
    would make Spark cast a wide decimal column to more digits than 38 allow);
    a floating-point one with any number, as a double.
    """
    for operand in (predicate.this, *(predicate.expressions if isinstance(predicate, exp.In) else [predicate.expression])):
        if operand is column:
            continue
        literal = operand.this if isinstance(operand, exp.Neg) else operand
        if not isinstance(literal, exp.Literal):
            return False
        if family == "string":
            safe = literal.is_string and operand is literal
        elif family == "number":
            safe = literal.is_number and literal.name.isdigit()
        else:
            safe = family == "float" and literal.is_number
        if not safe:
            return False
    return True


def _named(value: exp.Expression, column: str) -> exp.Expr:
    """``value`` as the column ``column``: a column passed through keeps its own name."""
    if isinstance(value, exp.Column) and value.name == column:
        return value
    return exp.alias_(value, exp.to_identifier(column, quoted=True))


def _ahead_of_later_predicates(value: exp.Expression) -> exp.Expression:
    """``value``, in a form Spark cannot move a statement's predicates below.

    A row policy reading a mapping table that lets too many values through
    for literals (see :func:`_visible_condition`) is inlined as a subquery,
    which Spark turns into a semi-join; it would then push the statement's
    predicates below the join, where they see, and can name in an error, the
    rows the policy hides. Spark pushes no predicate through a projection
    with a nondeterministic column (and merges no filter into a
    nondeterministic one), so every column of the protected relation becomes
    ``IF(MONOTONICALLY_INCREASING_ID() >= 0, value, value)``: the same value,
    nullability and type, in a projection above the policy's join. The cost,
    on this one path, is that the statement's predicates no longer skip files.
    """
    barrier = exp.GTE(this=exp.Anonymous(this="MONOTONICALLY_INCREASING_ID"), expression=exp.Literal.number(0))
    return exp.If(this=barrier, true=value, false=value.copy())


_CACHE_SIZE = 256


def _cached(cache: dict[_Key, _Value], key: _Key, compute: Callable[[], _Value]) -> _Value:
    """``cache[key]``, computed on a miss; the oldest entry goes when the cache holds _CACHE_SIZE."""
    if key not in cache:
        if len(cache) >= _CACHE_SIZE:
            cache.pop(next(iter(cache)))
        cache[key] = compute()
    return cache[key]


# Whether a bound policy condition folds to TRUE, by its Spark SQL text: sqlglot's simplifier takes milliseconds.
_FOLDS_TO_TRUE: dict[str, bool] = {}


def _always_true(condition: exp.Expression, text: str) -> bool:
    """Whether a bound policy condition (``text`` in Spark SQL) is TRUE for every row: its session values decide it."""

    def folds() -> bool:
        simplified = simplify(condition.copy())
        return isinstance(simplified, exp.Boolean) and simplified.this is True

    return _cached(_FOLDS_TO_TRUE, text, folds)


def _reads_tables(condition: exp.Expression) -> bool:
    return condition.find(exp.Query, exp.Exists, exp.Subquery) is not None


# Largest number of argument values a row policy that reads tables is turned into, as literals.
VISIBLE_TUPLES_LIMIT = 10_000

# Visible argument values of row policies that read tables, by (relation, arguments, bound condition): see
# _visible_condition.
_VISIBLE: dict[tuple[str, str, str], list[tuple[Any, ...]] | None] = {}


def _visible_condition(
    tables: Tables, relation: exp.Table, arguments: list[exp.Column], condition: exp.Expression, text: str
) -> exp.Expression | None:
    """A row policy that reads tables (a mapping table), as a condition of literals on its arguments.

    A row policy's result depends only on its arguments' values, the
    session's values and the tables its body reads. Those are all fixed in
    the bound condition's ``text`` (tables at pinned versions, session functions
    as literals), so the argument values it lets through, computed once over
    the relation at its pinned version, stand for it while none of them
    changes: queries then filter by literals instead of joining the mapping
    table again. None when more than VISIBLE_TUPLES_LIMIT values pass (the
    condition is then inlined, see :func:`_ahead_of_later_predicates`).

    Literals also keep the policy ahead of the user's predicate: Spark pushes
    a filter below a semi-join (the inlined subquery), so a predicate that
    raises an error would see the rows the policy hides, and name their
    values; a filter of literals it keeps in front. A stream's or a table
    function's changes (a frame, ``relation`` without a version) are
    computed for the statement, uncached.
    """
    if relation.args.get("version") is None:
        # Changes bound as a frame for this statement alone: no other statement reads them again.
        values = _visible_values(tables, relation, arguments, condition)
        return None if values is None else _literal_condition(arguments, values)
    key = (to_spark(relation), ", ".join(to_spark(argument) for argument in arguments), text)
    values_ = _cached(_VISIBLE, key, lambda: _visible_values(tables, relation, arguments, condition))
    return None if values_ is None else _literal_condition(arguments, values_)


def _visible_values(
    tables: Tables, relation: exp.Table, arguments: list[exp.Column], condition: exp.Expression
) -> list[tuple[Any, ...]] | None:
    """The distinct values of ``arguments`` in ``relation``'s rows ``condition`` lets through; None past the limit."""
    visible = exp.select(*arguments).distinct().from_(relation.copy()).where(condition).limit(VISIBLE_TUPLES_LIMIT + 1)
    # Read as the statement reads its tables: from a version's listed files where it can, without Delta's state.
    values = [tuple(row) for row in tables.spark.sql(to_spark(read_listed_files(visible, tables))).collect()]
    return values if len(values) <= VISIBLE_TUPLES_LIMIT else None


def _literal_condition(columns: list[exp.Column], values: list[tuple[Any, ...]]) -> exp.Expression:
    """Rows whose ``columns`` equal one of ``values`` (NULL equal to NULL): an IN list for one column without NULLs."""
    if not values:
        return exp.false()
    if len(columns) == 1 and all(row[0] is not None for row in values):
        return exp.In(this=columns[0].copy(), expressions=[exp.convert(row[0]) for row in values])
    matches: list[exp.Expression] = []
    for row in values:
        equal: list[exp.Expression] = [
            exp.NullSafeEQ(this=column.copy(), expression=exp.convert(value)) for column, value in zip(columns, row, strict=True)
        ]
        matches.append(functools.reduce(lambda a, b: exp.And(this=a, expression=b), equal))
    return exp.Paren(this=functools.reduce(lambda a, b: exp.Or(this=a, expression=b), matches))


def _column(name: str) -> exp.Column:
    return exp.column(exp.to_identifier(name, quoted=True), table=exp.to_identifier(INNER))


def _column_tags(protection_: Protection, column: str) -> Mapping[str, str]:
    for tagged, values in protection_.tags.items():
        if tagged.upper() == column.upper():
            return values
    return {}


def _inlined(tables: Tables, policy: PolicyEntry, arguments: list[exp.Column], tags: Mapping[str, str]) -> exp.Expression:
    """``policy``'s body with its arguments replaced by ``arguments`` and bound for this session.

    ``tags`` are the tag values SYSTEM$GET_TAG_ON_CURRENT_COLUMN reads (qualified tag name -> value).
    """
    if len(arguments) != len(policy.signature):
        raise SqlCompilationError(
            f"Policy {policy.qualified} takes {len(policy.signature)} arguments, but {len(arguments)} columns are given."
        )
    assert policy.body is not None
    # Held in a parenthesis so that a body that is one node (``-> val``) is replaced like any part of one.
    holder = exp.Paren(this=_parsed_body(policy.body).copy())
    values = {name.upper(): argument for (name, _), argument in zip(policy.signature, arguments, strict=True)}
    for node in list(holder.find_all(exp.Column)):
        if not node.table and node.name.upper() in values:
            node.replace(values[node.name.upper()].copy())
    roles = sorted(GUARD.roles(tables.catalog, tables.session.role))
    for call in list(holder.find_all(exp.Anonymous)):
        function = call.name.upper()
        if function == "IS_ROLE_IN_SESSION" and len(call.expressions) == 1:
            call.replace(exp.In(this=call.expressions[0].copy(), expressions=[exp.Literal.string(r) for r in roles]))
        elif function == "INVOKER_ROLE" and not call.expressions:
            call.replace(exp.Literal.string(tables.session.role))
        elif function == "SYSTEM$GET_TAG_ON_CURRENT_COLUMN" and len(call.expressions) == 1:
            call.replace(_tag_value(call.expressions[0], tags))
    if policy.qualified in tables.relations:
        raise SqlCompilationError(f"Policy {policy.qualified} reads a table it protects: {' -> '.join(tables.relations)}.")
    body: exp.Expression = holder.this
    scope = tables.nested(SessionContext(policy.database, policy.schema), policy.qualified)
    owner = tables.catalog.access.owner(policy.kind.object_kind, policy.id)
    require_definer_reads(scope, body, Definer(policy.qualified, owner, policy.kind.value.lower()))
    return bind_tables(body, scope)


def _tag_value(name: exp.Expression, tags: Mapping[str, str]) -> exp.Expression:
    """SYSTEM$GET_TAG_ON_CURRENT_COLUMN('tag'): the tag's value on the column being masked, else NULL."""
    wanted = name.name.upper()
    for qualified, value in tags.items():
        if qualified.upper() == wanted or qualified.upper().endswith("." + wanted):
            return exp.Literal.string(value)
    return exp.null()


def target_filter(tables: Tables, entry: TableEntry, version: int, alias: str) -> exp.Expression | None:
    """The rows of an UPDATE's or DELETE's target its row access policy lets the role touch (Snowflake's rule).

    A policy body without subqueries is inlined on the target's columns. One
    with a subquery (a mapping table), which Delta's UPDATE and DELETE cannot
    evaluate, becomes the argument values it lets through (see
    :func:`_visible_condition`), as literals.
    """
    catalog = tables.catalog
    if not catalog.policies.has_policies(entry.id):
        return None
    found = protection(catalog, entry.id)
    row_filter = found.row_filter
    if row_filter is None:
        return None
    tags = found.tags.get(OBJECT_LEVEL, {})
    on_target = [exp.column(exp.to_identifier(c, quoted=True), table=exp.to_identifier(alias)) for c in row_filter.columns]
    body = _inlined(tables, row_filter.policy, on_target, tags)
    if _always_true(body, to_spark(body)):
        return None
    if not _reads_tables(body):
        return body
    inner = [_column(c) for c in row_filter.columns]
    relation = tables.reference(entry, version, exp.TableAlias(this=exp.to_identifier(INNER)))
    condition = _inlined(tables, row_filter.policy, inner, tags)
    visible = _visible_condition(tables, relation, inner, condition, to_spark(condition))
    if visible is None:
        raise SqlCompilationError(
            f"Row access policy {row_filter.policy.qualified} lets more than {VISIBLE_TUPLES_LIMIT} values of "
            f"{', '.join(row_filter.columns)} through; lakeclone cannot narrow an UPDATE or DELETE of {entry.name} to them."
        )
    # The literals name the inner alias's columns; the target's are under its own alias.
    for column in visible.find_all(exp.Column):
        column.set("table", exp.to_identifier(alias))
    return visible
