"""Views travel with the schemas and databases they live in when those are cloned."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.engine import registry

if TYPE_CHECKING:
    from lakeclone.engine.registry import CloneEvent


def clone_views(event: CloneEvent) -> None:
    """Give each cloned schema a copy of the source's views, with the parameters set on them.

    A copy keeps its definition's text, so its unqualified names resolve in
    the clone and read the cloned tables; qualified names keep naming what
    they named. Views have no history: a clone at a past point takes the
    views that existed then, with their definitions as they are now.
    """
    catalog = event.catalog
    cloned: dict[str, str] = {}
    for source, target in event.schemas:
        for view in catalog.views.in_schema(source):
            if not event.existed(view.created_at):
                continue
            clone = catalog.views.create_view(target, view.name, definition=view.definition, columns=view.columns, now=event.now)
            for key, value in catalog.parameters.of(view.id).items():
                catalog.parameters.set_parameter(clone.id, key, value)
            cloned[view.id] = clone.id
    event.remapped["view"] = cloned


registry.CLONE_HOOKS.append(clone_views)
