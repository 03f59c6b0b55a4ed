"""What the session's role sees, as SHOW lists it: the one filter INFORMATION_SCHEMA, SHOW COLUMNS and GET_DDL apply."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.engine import registry

if TYPE_CHECKING:
    from lakeclone.catalog.entries import SchemaObjectEntry
    from lakeclone.engine.tables import Tables


def visible_keys(tables: Tables, listing: str) -> set[tuple[str, ...]] | None:
    """The keys of the objects ``SHOW <listing>`` would list to the session's role; None when it sees all."""
    authorizer = registry.SLOTS.authorizer
    found = authorizer.visible(tables.catalog, tables.session.role, listing) if authorizer is not None else None
    return None if found is None else found[1]


def sees(visible: set[tuple[str, ...]] | None, entry: SchemaObjectEntry) -> bool:
    """Whether an object (a table, a view, a stream) is among ``visible`` (None: the role sees all)."""
    return visible is None or (entry.database, entry.schema, entry.name) in visible
