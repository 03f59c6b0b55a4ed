"""Views: CREATE/DROP/SHOW/DESCRIBE/ALTER VIEW, querying them, and how schema clones carry them.

What other features (streams) call:

- :func:`view_definition` (catalog, qualified name) -> (ViewEntry, parsed query) or None;
- :func:`parse_definition` (a view's stored text) -> its query, parsed as any statement is;
- :func:`definition_scope` (tables, view) -> lookups for the view's definition, in its own schema;
- :func:`base_tables` (tables, view) -> the tables a view reads, through nested views too;
- :func:`require_view` (execution, reference) -> the live view a statement names.
"""

from lakeclone.views import clones, expand, statements
from lakeclone.views.expand import base_tables, definition_scope, parse_definition, view_definition
from lakeclone.views.statements import require_view

__all__ = [
    "base_tables",
    "clones",
    "definition_scope",
    "expand",
    "parse_definition",
    "require_view",
    "statements",
    "view_definition",
]
