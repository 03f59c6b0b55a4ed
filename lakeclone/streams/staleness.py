"""When a stream goes stale: its offset falls outside what its source's retention keeps.

The rule is Snowflake's. A stream must be consumed within its source table's
``DATA_RETENTION_TIME_IN_DAYS``; while that is under 14 days, an unconsumed
stream extends it up to ``MAX_DATA_EXTENSION_TIME_IN_DAYS`` (default 14).
So a stream goes stale that long after its offset was last set (when it was
created or consumed): that moment is its ``STALE_AFTER``. A stream whose
source table was dropped or replaced is stale at once. VACUUM keeps the files
a stream's offset needs until then (:mod:`lakeclone.streams.vacuum`).

A stream on a view has an offset on each table the view reads, and goes
stale with the first of them; dropping or replacing the view, or any of its
tables, makes it stale at once.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lakeclone.catalog.entries import SourceKind
from lakeclone.catalog.parameters import RETENTION

if TYPE_CHECKING:
    from lakeclone.catalog.entries import StreamEntry, TableEntry
    from lakeclone.catalog.store import Catalog

MAX_EXTENSION = "MAX_DATA_EXTENSION_TIME_IN_DAYS"
# Retention shorter than this is extended for unconsumed streams.
EXTENDED_BELOW_DAYS = 14


def consume_within(catalog: Catalog, table: TableEntry) -> dt.timedelta:
    """How long after its offset was set a stream on ``table`` may go unconsumed."""
    retention = int(catalog.parameters.parameter(table, RETENTION)[0])
    if retention >= EXTENDED_BELOW_DAYS:
        return dt.timedelta(days=retention)
    return dt.timedelta(days=max(retention, int(catalog.parameters.parameter(table, MAX_EXTENSION)[0])))


@dataclass(frozen=True)
class Staleness:
    """A stream's staleness at one moment.

    Attributes:
        stale_after: when it goes (or went) stale if not consumed; None once its source is gone.
        reason: why it is stale now, or None.
    """

    stale_after: dt.datetime | None
    reason: str | None

    @property
    def stale(self) -> bool:
        return self.reason is not None


def staleness(catalog: Catalog, stream: StreamEntry, now: dt.datetime) -> Staleness:
    """Whether ``stream`` is stale at ``now``, and when it goes stale."""
    if stream.source_kind is SourceKind.VIEW:
        view = catalog.views.view_by_id(stream.source_id)
        current = catalog.views.view(view.database, view.schema, view.name) if view is not None else None
        if view is None or current is None or current.id != view.id:
            name = view.qualified if view is not None else stream.source_id
            return Staleness(None, f"its view {name} was dropped or replaced")
    deadlines = []
    for table_id in stream.offsets:
        table = catalog.objects.table_by_id(table_id)
        if (
            table is None
            or table.dropped_at is not None
            or catalog.objects.table(table.database, table.schema, table.name) != table
        ):
            name = table.qualified if table is not None else table_id
            return Staleness(None, f"its base table {name} was dropped or replaced")
        deadlines.append(stream.offset_at + consume_within(catalog, table))
    stale_after = min(deadlines)
    if now > stale_after:
        since = f"{stale_after:%Y-%m-%d %H:%M:%S} UTC"
        return Staleness(stale_after, f"its offset is outside the data retention period since {since}")
    return Staleness(stale_after, None)
