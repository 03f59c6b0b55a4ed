"""Views: CREATE/DROP/SHOW/DESCRIBE/ALTER VIEW, querying them, and how schema clones carry them.

What other features (streams) call:

- :func:`view_definition` (catalog, qualified name) -> (ViewEntry, parsed query) or None;
- :func:`base_tables` (tables, view) -> the tables a view reads, through nested views too.
"""

from lakeclone.views import clones, expand, statements
from lakeclone.views.expand import base_tables, view_definition

__all__ = ["base_tables", "clones", "expand", "statements", "view_definition"]
