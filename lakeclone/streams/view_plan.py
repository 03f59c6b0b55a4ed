"""What a stream on a view reads: the view's query expanded down to its base tables, once it is known streamable.

A stream on a view returns the change of the view's rows. lakeclone finds it
by evaluating the view at two sets of versions with each row's lineage (see
:mod:`lakeclone.streams.lineage`), which holds only when each row of the view
comes from exactly one combination of base table rows, and the same rows
always give the same row. So a view a stream reads may use projections,
filters, inner and cross joins and UNION ALL, over tables, over views doing
the same and over subqueries in FROM doing the same (WITH included). Anything
that groups or merges rows (GROUP BY, aggregates, DISTINCT, UNION, INTERSECT,
EXCEPT), depends on other rows (window functions, QUALIFY, LIMIT, subqueries
outside FROM), pads rows (outer joins) or is not deterministic (RANDOM,
UUID_STRING, CURRENT_TIMESTAMP, SEQ4, SAMPLE, …) is refused, naming it.

ORDER BY is accepted and ignored: without LIMIT it changes no row of the
view, and a stream's rows have no order (Snowflake accepts it too).

The expanded query names each base table by a placeholder,
``__LC_TABLE_<n>`` (the n-th of :attr:`ViewPlan.tables`), aliased as the
definition aliased it, so that the caller decides which rows (which version,
which extra columns) stand for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone import views
from lakeclone.engine.compiler import bind_session_functions, carry_clauses, relation_references
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError

if TYPE_CHECKING:
    from lakeclone.catalog.entries import TableEntry, ViewEntry
    from lakeclone.engine.tables import Tables

PLACEHOLDER = "__LC_TABLE_"

# Functions whose value changes from one evaluation to the next, by sqlglot's
# class name, with the name Snowflake users write.
_NON_DETERMINISTIC = {
    "Rand": "RANDOM",
    "Randn": "RANDN",
    "Uuid": "UUID_STRING",
    "CurrentTimestamp": "CURRENT_TIMESTAMP",
    "CurrentTime": "CURRENT_TIME",
    "CurrentDate": "CURRENT_DATE",
    "CurrentDatetime": "CURRENT_DATETIME",
    "Localtime": "LOCALTIME",
    "Localtimestamp": "LOCALTIMESTAMP",
    "Seq1": "SEQ1",
    "Seq2": "SEQ2",
    "Seq4": "SEQ4",
    "Seq8": "SEQ8",
    "Randstr": "RANDSTR",
    "Uniform": "UNIFORM",
    "Normal": "NORMAL",
    "Zipf": "ZIPF",
}
_NON_DETERMINISTIC_CLASSES: tuple[type[exp.Expr], ...] = tuple(
    kind for kind in (getattr(exp, name, None) for name in _NON_DETERMINISTIC) if isinstance(kind, type)
)
# The same, when sqlglot leaves the call unparsed.
_NON_DETERMINISTIC_NAMES = {
    *_NON_DETERMINISTIC.values(),
    "RANDOM",
    "GETDATE",
    "SYSDATE",
    "SYSTIMESTAMP",
    "UUID",
}

_ALLOWED_JOIN_KINDS = {"", "INNER", "CROSS"}


@dataclass(frozen=True)
class ViewPlan:
    """A view's query expanded to its base tables.

    Attributes:
        query: the expanded query; base table ``n`` appears as ``__LC_TABLE_<n>``.
        tables: the live base tables, each once, in the order first named.
        columns: the view's column names, as recorded at CREATE VIEW.
    """

    view: ViewEntry
    query: exp.Query
    tables: tuple[TableEntry, ...]
    columns: tuple[str, ...]


def expand(tables: Tables, view: ViewEntry) -> ViewPlan:
    """``view``'s query with nested views, WITH and subqueries expanded, checked streamable.

    Raises:
        SqlCompilationError: the view (or a view it reads) uses something a
            stream cannot follow; the message names it and the view.
        ObjectNotFoundError: it names a table or view that does not exist.
    """
    found: dict[str, TableEntry] = {}
    query = _expand(tables, view, found)
    return ViewPlan(view, query, tuple(found.values()), view.columns)


def placeholder_index(table: exp.Table) -> int | None:
    """The base table index a placeholder reference stands for; None for any other reference."""
    if isinstance(table.this, exp.Identifier) and table.name.startswith(PLACEHOLDER):
        return int(table.name[len(PLACEHOLDER) :])
    return None


def _expand(tables: Tables, view: ViewEntry, found: dict[str, TableEntry]) -> exp.Query:
    query = inline_ctes(views.parse_definition(view.definition), view)
    check_streamable(query, view)
    scope = views.definition_scope(tables, view)
    bind_session_functions(query, scope)
    catalog = tables.catalog
    for reference in relation_references(query):
        name = scope.name(reference)
        alias = reference.args.get("alias")
        alias = alias.copy() if alias is not None else exp.TableAlias(this=exp.to_identifier(name.name, quoted=True))
        table = catalog.objects.table(name.database, name.schema, name.name)
        replacement: exp.Expression
        if table is not None:
            found.setdefault(table.id, table)
            index = list(found).index(table.id)
            replacement = exp.Table(this=exp.to_identifier(f"{PLACEHOLDER}{index}", quoted=True), alias=alias)
        else:
            inner = catalog.views.view(name.database, name.schema, name.name)
            if inner is None:
                if catalog.streams.stream(name.database, name.schema, name.name) is not None:
                    raise _refused(view, f"the stream {name}")
                raise ObjectNotFoundError(str(name))
            if not alias.columns:
                alias.set("columns", [exp.to_identifier(column, quoted=True) for column in inner.columns])
            replacement = exp.Subquery(this=_expand(scope, inner, found), alias=alias)
        reference.replace(carry_clauses(reference, replacement))
    return query


def inline_ctes(query: exp.Query, view: ViewEntry) -> exp.Query:
    """``query`` with each WITH's CTEs put in the place of their names, as FROM subqueries.

    Innermost WITHs first, so that a CTE shadowing an outer one's name wins
    inside its own WITH.
    """
    query = query.copy()
    for with_ in reversed(list(query.find_all(exp.With))):
        if with_.args.get("recursive"):
            raise _refused(view, "WITH RECURSIVE")
        owner, key = with_.parent, with_.arg_key
        assert owner is not None and key is not None
        owner.set(key, None)
        ctes = list(with_.expressions)
        for position, cte in enumerate(ctes):
            name = cte.alias_or_name
            for scope in (owner, *(later.this for later in ctes[position + 1 :])):
                for table in list(scope.find_all(exp.Table)):
                    if isinstance(table.this, exp.Identifier) and not table.db and not table.catalog and table.name == name:
                        alias = table.args.get("alias")
                        alias = alias.copy() if alias is not None else exp.TableAlias(this=exp.to_identifier(name))
                        if not alias.columns and cte.args.get("alias") is not None and cte.args["alias"].columns:
                            alias.set("columns", [c.copy() for c in cte.args["alias"].columns])
                        table.replace(carry_clauses(table, exp.Subquery(this=cte.this.copy(), alias=alias)))
    return query


def check_streamable(query: exp.Query, view: ViewEntry) -> None:
    """Refuse, naming it, the first thing in ``query`` (one view's definition) a stream cannot follow."""
    for node in query.walk():
        construct = _construct(node)
        if construct is not None:
            raise _refused(view, construct)


def _construct(node: exp.Expr) -> str | None:
    """What ``node`` is, when it is something a stream on a view cannot follow."""
    if isinstance(node, exp.Select):
        for key, name in (
            ("distinct", "DISTINCT"),
            ("group", "GROUP BY"),
            ("having", "HAVING"),
            ("qualify", "QUALIFY"),
            ("offset", "OFFSET"),
            ("laterals", "LATERAL"),
            ("windows", "window functions"),
            ("connect", "CONNECT BY"),
            ("match", "MATCH_RECOGNIZE"),
        ):
            if node.args.get(key):
                return name
        limit = node.args.get("limit")
        if limit is not None:
            return "FETCH" if isinstance(limit, exp.Fetch) else "LIMIT (or TOP)"
    if isinstance(node, exp.SetOperation):
        if not isinstance(node, exp.Union):
            return "INTERSECT" if isinstance(node, exp.Intersect) else "EXCEPT (or MINUS)"
        if node.args.get("distinct"):
            return "UNION without ALL"
        if node.args.get("limit") or node.args.get("offset"):
            return "LIMIT (or OFFSET)"
    if isinstance(node, (exp.Select, exp.SetOperation)) and not _in_from(node):
        return "a subquery outside FROM (correlated or not)"
    if isinstance(node, exp.Window):
        return "window functions"
    if isinstance(node, exp.AggFunc):
        return f"the aggregate function {node.sql_name()}"
    if isinstance(node, _NON_DETERMINISTIC_CLASSES):
        return f"the non-deterministic function {_NON_DETERMINISTIC[type(node).__name__]}"
    if isinstance(node, exp.Anonymous) and node.name.upper() in _NON_DETERMINISTIC_NAMES:
        return f"the non-deterministic function {node.name.upper()}"
    if isinstance(node, exp.Join):
        return _join_construct(node)
    if isinstance(node, exp.Lateral):
        return "LATERAL"
    if isinstance(node, exp.Values):
        return "VALUES"
    if isinstance(node, (exp.Table, exp.Subquery)):
        return _relation_construct(node)
    return None


def _join_construct(join: exp.Join) -> str | None:
    side = join.text("side").upper()
    if side:
        return f"{side} OUTER JOIN"
    kind = join.text("kind").upper()
    if kind not in _ALLOWED_JOIN_KINDS:
        return f"{kind} JOIN"
    method = join.text("method").upper()
    if method == "NATURAL":
        return "NATURAL JOIN (name the columns with USING or ON)"
    if method:
        return f"{method} JOIN"
    return None


def _relation_construct(node: exp.Table | exp.Subquery) -> str | None:
    if node.args.get("pivots"):
        return "PIVOT (or UNPIVOT)"
    if node.args.get("sample"):
        return "SAMPLE (its rows are chosen at random)"
    if isinstance(node, exp.Subquery):
        if not isinstance(node.this, exp.Query):
            return "a parenthesized join"
        return None
    if not isinstance(node.this, exp.Identifier):
        return "a table function"
    if node.args.get("joins"):
        return "a parenthesized join"
    if node.args.get("when") or node.args.get("version"):
        return "time travel (AT or BEFORE) in its definition"
    if node.args.get("changes"):
        return "CHANGES"
    return None


def _in_from(query: exp.Expr) -> bool:
    """Whether a query is the view's own, a branch of an allowed set operation, or a subquery in FROM or a join."""
    parent = query.parent
    if parent is None:
        return True
    if isinstance(parent, exp.SetOperation) and query.arg_key in ("this", "expression"):
        return _in_from(parent)
    if isinstance(parent, exp.Subquery) and query.arg_key == "this":
        holder = parent.parent
        if holder is None:
            return True
        if isinstance(holder, (exp.From, exp.Join)) and parent.arg_key == "this":
            return True
        if isinstance(holder, exp.SetOperation) and parent.arg_key in ("this", "expression"):
            return _in_from(holder)
    return False


def _refused(view: ViewEntry, construct: str) -> SqlCompilationError:
    return SqlCompilationError(
        f"View {view.qualified} cannot be streamed: it uses {construct}. A stream on a view follows "
        "projections, filters, inner and cross joins and UNION ALL over tables, views and subqueries in FROM."
    )
