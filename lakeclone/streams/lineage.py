"""Each row of a view with its lineage: the base table rows it was built from.

:func:`with_lineage` rewrites an expanded view query (see
:mod:`lakeclone.streams.view_plan`) so that it returns, after the view's own
columns, two more:

- ``__LC_RID``: the row's composite id. Each SELECT builds it from its FROM
  items' ids in order, ``(id1,id2,…)``, where a base table's id is the row's
  row tracking id and a subquery's is its own composite id; each branch of a
  UNION ALL prefixes its rows' ids with its position (``0.``, ``1.``). A view
  of projections, filters, inner joins and UNION ALL builds each row from one
  combination of base rows, so the id is unique, and it is stable: the same
  base rows give the same id at any version.
- ``__LC_TOUCHED``: whether any of those base rows is marked, in its source,
  as one the interval changed.

Each base table's rows come from a source the caller gives (a frame of the
table at some version, with ``__LC_ROW_ID`` and ``__LC_TOUCHED``), so one
rewrite serves the old versions, the new ones and the appended rows alike.
``SELECT *`` (and ``t.*``, with EXCLUDE, REPLACE or RENAME) is spelled out
column by column, so the two columns a FROM item carries never reach its
reader's ``*``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone.errors import SqlCompilationError
from lakeclone.streams.view_plan import placeholder_index

if TYPE_CHECKING:
    from lakeclone.catalog.entries import ViewEntry

RID = "__LC_RID"
TOUCHED = "__LC_TOUCHED"
ROW_ID = "__LC_ROW_ID"


@dataclass(frozen=True)
class Source:
    """The rows standing for one base table: a reference Spark resolves, and the table's columns in order.

    The reference's rows have ``columns``, then ``__LC_ROW_ID`` and ``__LC_TOUCHED``.
    """

    reference: exp.Table
    columns: tuple[str, ...]


@dataclass(frozen=True)
class _Item:
    """One FROM item of a SELECT, rewritten: its alias, its columns (what ``*`` reads), its id and touched flag."""

    alias: str
    columns: tuple[str, ...]
    rid: exp.Expression
    touched: exp.Expression


def with_lineage(
    query: exp.Query, sources: Sequence[Source], columns_of: Callable[[exp.Query], list[str]], view: ViewEntry
) -> exp.Query:
    """``query`` returning ``__LC_RID`` and ``__LC_TOUCHED`` after its own columns.

    Args:
        query: an expanded view query, base tables as placeholders.
        sources: what stands for base table ``n``, by index.
        columns_of: the output column names of a (rewritten) query, as Spark names them.
        view: the view, for messages.
    """
    return _Rewriter(sources, columns_of, view).query(query.copy(), "")


class _Rewriter:
    def __init__(self, sources: Sequence[Source], columns_of: Callable[[exp.Query], list[str]], view: ViewEntry) -> None:
        self._sources = sources
        self._columns_of = columns_of
        self._view = view
        self._aliases = 0

    def query(self, node: exp.Query, prefix: str) -> exp.Query:
        if isinstance(node, exp.Union):
            # Only UNION ALL gets here (view_plan refuses the rest); its branches line up by position.
            node.set("this", self.query(node.this, f"{prefix}0."))
            node.set("expression", self.query(node.expression, f"{prefix}1."))
            node.set("order", None)
            return node
        if isinstance(node, exp.Subquery):
            node.set("this", self.query(node.this, prefix))
            return node
        assert isinstance(node, exp.Select), type(node)
        return self._select(node, prefix)

    def _select(self, select: exp.Select, prefix: str) -> exp.Select:
        joins = select.args.get("joins") or []
        from_ = select.args.get("from_")
        positions = ([from_] if from_ is not None else []) + list(joins)
        items = [self._item(position) for position in positions]
        expressions: list[exp.Expr] = []
        for expression in select.expressions:
            star = _star(expression)
            if star is None:
                expressions.append(expression)
                continue
            if any(join.args.get("using") for join in joins):
                raise SqlCompilationError(
                    f"View {self._view.qualified} cannot be streamed: it uses SELECT * over a join with USING; "
                    "name the columns it selects."
                )
            qualifier = expression.table if isinstance(expression, exp.Column) else ""
            chosen = [item for item in items if not qualifier or item.alias == qualifier]
            expressions.extend(self._expand_star(star, chosen))
        pieces: list[exp.Expression] = [exp.Literal.string(f"{prefix}(")]
        for position, item in enumerate(items):
            if position:
                pieces.append(exp.Literal.string(","))
            pieces.append(exp.cast(item.rid, exp.DataType.Type.TEXT))
        pieces.append(exp.Literal.string(")"))
        touched: exp.Expr = exp.false()
        for item in items:
            touched = item.touched if isinstance(touched, exp.Boolean) else exp.or_(touched, item.touched)
        expressions.append(exp.alias_(exp.Concat(expressions=pieces), exp.to_identifier(RID, quoted=True)))
        expressions.append(exp.alias_(exp.paren(touched), exp.to_identifier(TOUCHED, quoted=True)))
        select.set("expressions", expressions)
        select.set("order", None)
        return select

    def _item(self, position: exp.From | exp.Join) -> _Item:
        """Rewrite one FROM item in place: a base table becomes its source; a subquery gains the two columns."""
        relation = position.this
        alias = relation.args.get("alias")
        if alias is None:
            self._aliases += 1
            alias = exp.TableAlias(this=exp.to_identifier(f"__LC_S{self._aliases}", quoted=True))
            relation.set("alias", alias)
        extra = [exp.to_identifier(RID, quoted=True), exp.to_identifier(TOUCHED, quoted=True)]
        index = placeholder_index(relation) if isinstance(relation, exp.Table) else None
        if index is not None:
            source = self._sources[index]
            columns = tuple(c.name for c in alias.columns) or source.columns
            if alias.columns:
                extra[0] = exp.to_identifier(ROW_ID, quoted=True)
                alias.set("columns", [*alias.columns, *extra])
            replacement = source.reference.copy()
            replacement.set("alias", alias)
            relation.replace(replacement)
            rid_column = ROW_ID
        else:
            assert isinstance(relation, exp.Subquery), type(relation)
            inner = self.query(relation.this, "")
            relation.set("this", inner)
            if alias.columns:
                columns = tuple(c.name for c in alias.columns)
                alias.set("columns", [*alias.columns, *extra])
            else:
                columns = tuple(self._columns_of(inner)[:-2])
            rid_column = RID
        name = alias.name
        return _Item(
            name,
            columns,
            exp.column(rid_column, table=exp.to_identifier(name, quoted=True), quoted=True),
            exp.column(TOUCHED, table=exp.to_identifier(name, quoted=True), quoted=True),
        )

    def _expand_star(self, star: exp.Star, items: Sequence[_Item]) -> list[exp.Expr]:
        """A star's columns, one by one, qualified by their FROM item, with Snowflake's EXCLUDE, REPLACE and RENAME."""
        if star.args.get("ilike"):
            raise SqlCompilationError(f"View {self._view.qualified} cannot be streamed: it uses SELECT * ILIKE.")
        excluded = {c.name.upper() for c in star.args.get("except_") or []}
        replaced = {a.alias.upper(): a.this for a in star.args.get("replace") or []}
        renamed = {a.this.name.upper(): a.alias for a in star.args.get("rename") or []}
        expanded: list[exp.Expr] = []
        for item in items:
            for column in item.columns:
                key = column.upper()
                if key in excluded:
                    continue
                reference = exp.column(column, table=exp.to_identifier(item.alias, quoted=True), quoted=True)
                if key in replaced:
                    expanded.append(exp.alias_(replaced[key].copy(), exp.to_identifier(column, quoted=True)))
                elif key in renamed:
                    expanded.append(exp.alias_(reference, exp.to_identifier(renamed[key], quoted=True)))
                else:
                    expanded.append(reference)
        return expanded


def _star(expression: exp.Expression) -> exp.Star | None:
    """The star of ``*`` or ``t.*``; None for any other projection."""
    if isinstance(expression, exp.Star):
        return expression
    if isinstance(expression, exp.Column) and isinstance(expression.this, exp.Star):
        return expression.this
    return None
