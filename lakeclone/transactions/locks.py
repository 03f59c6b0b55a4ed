"""Table locks: what keeps a transaction's writes to itself until COMMIT.

Before each Delta commit a statement makes to a table, its session locks the
table in the catalog. An autocommit statement's lock lasts the statement and
shares the table with other autocommit statements (Delta's optimistic
concurrency settles their races); a transaction's lock lasts until COMMIT or
ROLLBACK and shares the table with no one, and it records the version
committed when it was taken, which every other session reads meanwhile (see
:meth:`lakeclone.engine.tables.Tables.current_version`). A writer that finds
the table locked waits, up to the Lake's ``lock_timeout``; a lock whose session
has died is cleared first (a dead transaction is rolled back).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from lakeclone.catalog.entries import TableLock
from lakeclone.errors import LockTimeoutError
from lakeclone.transactions import lifecycle

if TYPE_CHECKING:
    from lakeclone.catalog.entries import TableEntry
    from lakeclone.engine.executor import Execution

_POLL_SECONDS = 0.05


def lock_target(execution: Execution, target: str | None) -> None:
    """Before a Delta commit to ``target``: hold the table for the statement, or for its transaction."""
    if target is None:
        return
    entry = execution.catalog.objects.live_table_at(target)
    if entry is None:
        return  # a table the statement is creating: no one else can write it yet
    acquire(execution, entry)


def acquire(execution: Execution, entry: TableEntry) -> None:
    """Lock ``entry`` for this statement (autocommit) or this session's transaction, waiting for other sessions."""
    catalog = execution.catalog
    session_id = execution.executor.session.id
    transaction = execution.session.transaction
    deadline = time.monotonic() + execution.lake.lock_timeout
    while True:
        dead_sessions: set[str] = set()
        holder: TableLock | None = None
        with execution.work.coordinates():
            locks = catalog.transactions.table_locks(entry.id)
            if any(_mine(execution, lock) for lock in locks):
                return
            for lock in locks:
                if not catalog.sessions.is_alive(lock.session_id, execution.lake.now()):
                    dead_sessions.add(lock.session_id)
                elif transaction is not None or lock.transaction_id is not None:
                    holder = lock
            if not dead_sessions and holder is None:
                base = execution.delta.table(entry.location).version() if transaction is not None else None
                catalog.transactions.add_lock(
                    TableLock(entry.id, session_id, transaction.id if transaction else None, execution.query_id, base)
                )
                break
        if dead_sessions:
            lifecycle.recover_sessions(execution.executor, dead_sessions)
            continue
        assert holder is not None
        if time.monotonic() > deadline:
            raise LockTimeoutError(_timeout_message(execution, entry, holder))
        time.sleep(_POLL_SECONDS)
    if transaction is None:
        query_id = execution.query_id
        execution.work.compensate(f"unlock {entry.name}", lambda: _release(execution, query_id))


def _mine(execution: Execution, lock: TableLock) -> bool:
    transaction = execution.session.transaction
    if transaction is not None:
        return lock.transaction_id == transaction.id
    return lock.transaction_id is None and lock.query_id == execution.query_id


def _timeout_message(execution: Execution, entry: TableEntry, holder: TableLock) -> str:
    who = f"transaction '{holder.transaction_id}'" if holder.transaction_id else f"statement '{holder.query_id}'"
    return (
        f"Statement '{execution.query_id}' waited {execution.lake.lock_timeout:g} s (LOCK_TIMEOUT) for a lock on "
        f"table '{entry.name}' held by {who} of another session, and was aborted."
    )


def _release(execution: Execution, query_id: str) -> None:
    with execution.work.durable():
        execution.catalog.transactions.remove_statement_locks(query_id)


def release(execution: Execution) -> None:
    """The statement finished: its autocommit locks end (inside the catalog transaction that records it)."""
    execution.catalog.transactions.remove_statement_locks(execution.query_id)
