"""What clones carry of streams: change tracking on a cloned table, and a cloned schema's streams.

A clone of a tracked table is tracked from its first version when it was
cloned at a point tracking covers (the clone's log then has Delta's row
tracking and change data feed); a clone of an earlier point starts untracked,
with CHANGE_TRACKING off, until a stream or ALTER turns it on. A stream in a
cloned schema or database is cloned with it: its offset is the clone point,
so it starts with no unconsumed changes, and it tracks the cloned table when
its table was cloned along, else the table it tracked. A stream on a view
follows the view's copy, with an offset on each table the view reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.streams import tracking

if TYPE_CHECKING:
    from lakeclone.engine.registry import CloneEvent

# A clone's first version: Delta's CLONE commit.
CLONE_VERSION = 0


def clone_streams(event: CloneEvent) -> None:
    catalog = event.catalog
    cloned = dict(event.tables)
    # A view's stream follows the view's copy in the clone (views' own hook ran first).
    sources = {**cloned, **event.remapped.get("view", {})}
    for source_id, clone_id in event.tables:
        interval = tracking.current(catalog, source_id)
        clone = catalog.objects.table_by_id(clone_id)
        if interval is None or clone is None:
            continue
        if clone.source_version is not None and clone.source_version >= interval.since_version:
            catalog.streams.start_tracking(clone_id, CLONE_VERSION)
        else:
            catalog.parameters.unset_parameter(clone_id, tracking.CHANGE_TRACKING)
    for source_schema, new_schema in event.schemas:
        for stream in catalog.streams.in_schema(source_schema):
            if not event.existed(stream.created_at):
                continue
            offsets = {}
            for table_id, version in stream.offsets.items():
                if table_id in cloned:
                    offsets[cloned[table_id]] = CLONE_VERSION
                else:
                    offsets[table_id] = version
            catalog.streams.create_stream(
                new_schema,
                stream.name,
                source_kind=stream.source_kind,
                source_id=sources.get(stream.source_id, stream.source_id),
                mode=stream.mode,
                offsets=offsets,
                initial_rows=False,
                comment=stream.comment,
                now=event.now,
            )
