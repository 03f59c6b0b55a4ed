"""VACUUM keeps every file a live, not yet stale stream still needs: ``stream DB.S.NAME``.

A standard stream reads the files its offset's version read (the old side of
its changes) and the current ones (kept anyway); an append-only stream reads
every file the commits after its offset wrote. Streams on the table's clones
count too, since a shallow clone's versions read the source's files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lakeclone.catalog.entries import StreamMode
from lakeclone.streams.staleness import staleness
from lakeclone.vacuum.plan import Reason, ReasonKind, protecting_clones

if TYPE_CHECKING:
    from lakeclone.vacuum.plan import PlanContext


def stream_offsets(context: PlanContext, candidates: set[str]) -> dict[str, Reason]:
    reasons: dict[str, Reason] = {}
    catalog, delta = context.catalog, context.delta
    for table in (context.table, *protecting_clones(catalog, context.table, context.now)):
        log = delta.table(table.location)
        for stream in catalog.streams.streams_on(table.id):
            if staleness(catalog, stream, context.now).stale:
                continue
            version = stream.offsets[table.id]
            needed = {uri for f in log.files(version) for uri in f.uris}
            if stream.mode is StreamMode.APPEND_ONLY:
                needed |= set(log.referenced_after(version))
            reason = Reason(ReasonKind.STREAM, stream.qualified)
            for uri in needed & candidates:
                reasons.setdefault(uri, reason)
    return reasons
