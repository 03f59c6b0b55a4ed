"""Querying a view: its stored definition, parsed and bound in the view's own schema, in the place of its name.

A view's definition names tables (and other views) as its author wrote
them; unqualified names resolve in the view's database and schema, whatever
the session's are, as in Snowflake. Session functions (CURRENT_DATABASE(),
CURRENT_TIMESTAMP) still answer for the statement's session. A time-travel
point on a view applies to every table it reads that has no point of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from lakeclone import timetravel
from lakeclone.dialect import parse
from lakeclone.engine import registry
from lakeclone.engine.compiler import bind_tables, relation_references
from lakeclone.engine.context import SessionContext
from lakeclone.errors import ObjectNotFoundError, SqlCompilationError
from lakeclone.timetravel import PointKind

if TYPE_CHECKING:
    from lakeclone.catalog.entries import TableEntry, ViewEntry
    from lakeclone.catalog.names import QualifiedName
    from lakeclone.catalog.store import Catalog
    from lakeclone.engine.tables import Tables


def view_definition(catalog: Catalog, name: QualifiedName) -> tuple[ViewEntry, exp.Query] | None:
    """The live view ``name`` and its query, parsed; None when no view has that name."""
    view = catalog.views.view(name.database, name.schema, name.name)
    if view is None:
        return None
    return view, parse_definition(view.definition)


def parse_definition(text: str) -> exp.Query:
    """A view's stored query as a syntax tree, identifiers normalized as in any statement."""
    [statement] = parse(text)
    query = statement.expression
    # CREATE VIEW stored the text only once it had parsed as a query.
    assert isinstance(query, exp.Query)
    return query


def definition_scope(tables: Tables, view: ViewEntry) -> Tables:
    """Lookups for ``view``'s definition: names resolve in the view's schema.

    Raises:
        SqlCompilationError: ``view`` is already being expanded around this
            binding: its definition refers to itself, directly or through other views.
    """
    if view.qualified in tables.relations:
        cycle = [*tables.relations[tables.relations.index(view.qualified) :], view.qualified]
        raise SqlCompilationError(f"View definition for '{view.qualified}' refers to itself: {' -> '.join(cycle)}.")
    return tables.nested(SessionContext(view.database, view.schema), view.qualified)


def bind_view(tables: Tables, reference: exp.Table, name: QualifiedName) -> exp.Expression | None:
    """A view reference bound: ``(<definition, bound>) AS alias(<the view's columns>)``; None when ``name`` is no view.

    The reference's own alias, and its own column aliases if it has some,
    win over the view's name and recorded columns.
    """
    found = view_definition(tables.catalog, name)
    if found is None:
        return None
    view, query = found
    scope = definition_scope(tables, view)
    _pass_point(query, reference)
    alias = reference.args.get("alias")
    alias = alias.copy() if alias is not None else exp.TableAlias(this=reference.this.copy())
    if not alias.columns:
        alias.set("columns", [exp.to_identifier(column, quoted=True) for column in view.columns])
    return exp.Subquery(this=bind_tables(query, scope), alias=alias)


def _pass_point(query: exp.Query, reference: exp.Table) -> None:
    """Give the time-travel point written on a view reference to each relation ``query`` reads without one.

    A relation that is a view passes it on in turn. A point written inside
    the definition is part of it and stays.
    """
    point = timetravel.point_of(reference)
    if point is None:
        return
    if point.kind is PointKind.VERSION:
        # Versions number one table's history; the tables under a view share none.
        raise SqlCompilationError("VERSION is not a point in time for a view; use TIMESTAMP, OFFSET or STATEMENT.")
    for table in relation_references(query):
        if timetravel.point_of(table) is None:
            for key in ("when", "version"):
                if reference.args.get(key) is not None:
                    table.set(key, reference.args[key].copy())


def base_tables(tables: Tables, view: ViewEntry) -> list[TableEntry]:
    """The live tables ``view`` reads, directly or through the views it reads: each once, in the order first named.

    Raises:
        ObjectNotFoundError: the view names a table or view that no longer exists.
        SqlCompilationError: the view refers to itself through other views.
    """
    found: dict[str, TableEntry] = {}
    _collect_tables(tables, view, found)
    return list(found.values())


def _collect_tables(tables: Tables, view: ViewEntry, found: dict[str, TableEntry]) -> None:
    scope = definition_scope(tables, view)
    catalog = tables.catalog
    for reference in relation_references(parse_definition(view.definition)):
        name = scope.name(reference)
        table = catalog.objects.table(name.database, name.schema, name.name)
        if table is not None:
            found.setdefault(table.id, table)
            continue
        inner = catalog.views.view(name.database, name.schema, name.name)
        if inner is None:
            raise ObjectNotFoundError(str(name))
        _collect_tables(scope, inner, found)


def view_query(tables: Tables, view: ViewEntry) -> tuple[Tables, exp.Expr]:
    """``view``'s query, and the lookups its names resolve with: what reading the view needs is read from them."""
    return definition_scope(tables, view), parse_definition(view.definition)


registry.RELATIONS.append(bind_view)
registry.SLOTS.view_query = view_query
