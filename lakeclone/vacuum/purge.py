"""The purge of dropped tables whose UNDROP window has passed."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from lakeclone.catalog.db import Recording
from lakeclone.delta.log import LOG_FOLDER
from lakeclone.storage import join
from lakeclone.vacuum.plan import _clones, execute, plan

if TYPE_CHECKING:
    from lakeclone.catalog.store import Catalog, TableEntry
    from lakeclone.delta.log import Delta
    from lakeclone.engine.executor import Execution
    from lakeclone.storage import Storage


def purge_expired(
    catalog: Catalog,
    delta: Delta,
    storage: Storage,
    now: dt.datetime,
    *,
    durable: Recording,
) -> list[TableEntry]:
    """Delete the files of dropped tables whose UNDROP window has closed.

    Files a live clone still references stay, and the table stays unpurged
    until they are gone, so a later purge frees them once no clone needs them.
    External tables lose only their catalog entry: their files are never ours
    to delete. A purged table never comes back, even when the schema or
    database around it is undropped.

    Args:
        durable: the statement's durable writes: each purge is recorded at once,
            since its files are gone whatever the statement does next.

    Returns:
        The tables fully purged by this call.
    """
    purged = []
    for table, dropped in catalog.objects.unpurged_tables():
        if dropped is None or catalog.parameters.undroppable(table, dropped, now):
            continue
        if table.managed and storage.exists(table.location):
            decisions = plan(catalog, delta, storage, table, horizon=now, now=now, reasons=[_clones])
            execute(storage, decisions)
            if any(not d.delete for d in decisions.decisions):
                # Keep what clones read; the table's own log goes, so nothing else reads it.
                storage.delete(join(table.location, LOG_FOLDER), recursive=True)
                continue
            storage.delete(table.location, recursive=True)
        with durable():
            catalog.objects.mark_purged(table, now)
        purged.append(table)
    return purged


def purge_after_statement(execution: Execution) -> None:
    purge_expired(execution.catalog, execution.delta, execution.storage, execution.started_at, durable=execution.work.durable)
