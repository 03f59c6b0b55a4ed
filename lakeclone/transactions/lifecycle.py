"""BEGIN, COMMIT and ROLLBACK, and the recovery of a transaction whose session died.

A transaction's statements commit to Delta as they run, each table held by the
transaction's lock (see :mod:`lakeclone.transactions.locks`), so the session
sees its own writes while every other session reads the version committed
before the transaction took the lock.

- COMMIT is one SQLite transaction: the locks end (every session now reads the
  transaction's last versions), the streams its DML consumed move, and its
  intermediate versions are hidden from time travel.
- ROLLBACK restores each table it wrote to the version it started from (Delta's
  RESTORE, one commit each), hides the versions in between, and then ends
  the locks the same way; no session ever read those versions.
- A session that dies with a transaction open left it uncommitted: whoever
  finds it (the next ``connect()``, or a writer waiting on its lock) takes it
  over and rolls it back. A crash during COMMIT leaves the transaction either
  committed or open, never half of each, since COMMIT is one SQLite commit.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING

from lakeclone.catalog.db import Recording
from lakeclone.catalog.entries import HiddenOutcome, HiddenVersions, TransactionEntry
from lakeclone.delta import statements
from lakeclone.delta.commits import CommitMetadata, committing, microseconds
from lakeclone.engine import registry
from lakeclone.engine.context import OpenTransaction

if TYPE_CHECKING:
    from lakeclone.engine.executor import Executor

LOG = logging.getLogger(__name__)


def begin(executor: Executor, name: str | None, *, recording: Recording | None = None) -> OpenTransaction:
    """Open a transaction in the executor's session, pinning where its stream reads stop."""
    catalog = executor.catalog
    transaction = OpenTransaction(uuid.uuid4().hex, name, executor.lake.now())
    tables = executor.tables()
    # Repeatable read for streams: each stream's changes stop at the version committed now.
    for table_id in catalog.streams.streamed_table_ids():
        entry = catalog.objects.table_by_id(table_id)
        if entry is not None and entry.dropped_at is None:
            transaction.stream_points[table_id] = tables.current_version(entry)
    with (recording or catalog.transaction)():
        catalog.transactions.begin_transaction(
            TransactionEntry(transaction.id, executor.session.id, name, transaction.started_at, catalog.queries.tick())
        )
    executor.context.transaction = transaction
    return transaction


def commit(executor: Executor, *, recording: Recording | None = None) -> None:
    """Make the session's open transaction visible to every session, in one catalog transaction."""
    transaction = executor.context.transaction
    assert transaction is not None
    catalog = executor.catalog
    hidden = []
    for lock in catalog.transactions.transaction_locks(transaction.id):
        entry = catalog.objects.table_by_id(lock.table_id)
        assert entry is not None and lock.base_version is not None
        log = executor.delta.table(entry.location)
        if log.exists():
            latest = log.version()
            hidden.append(
                HiddenVersions(entry.id, lock.base_version + 1, latest - 1, lock.base_version, HiddenOutcome.INTERMEDIATE)
            )
    now = executor.lake.now()
    with (recording or catalog.transaction)():
        for versions in hidden:
            catalog.transactions.hide_versions(versions)
        for on_commit in registry.TRANSACTION_COMMITS:
            on_commit(catalog, transaction, now)
        catalog.transactions.end_transaction(transaction.id)
    executor.context.transaction = None


def roll_back(executor: Executor, transaction_id: str, query_id: str, *, recording: Recording | None = None) -> None:
    """Undo a transaction: each table it wrote goes back to the version it started from."""
    catalog = executor.catalog
    spark = executor.lake.spark
    hidden = []
    for lock in catalog.transactions.transaction_locks(transaction_id):
        entry = catalog.objects.table_by_id(lock.table_id)
        assert entry is not None and lock.base_version is not None
        log = executor.delta.table(entry.location)
        if not log.exists() or log.version() == lock.base_version:
            continue
        metadata = CommitMetadata(
            query_id=query_id,
            tick=catalog.queries.tick(),
            clock_us=microseconds(executor.lake.now()),
            parameters={"rolledBackTransaction": transaction_id},
            query_tag=executor.query_tag,
        )
        with committing(spark, metadata):
            statements.restore(spark, entry.location, lock.base_version)
        restored = log.version()
        hidden.append(HiddenVersions(entry.id, lock.base_version + 1, restored - 1, lock.base_version, HiddenOutcome.ROLLED_BACK))
    with (recording or catalog.transaction)():
        for versions in hidden:
            catalog.transactions.hide_versions(versions)
        for on_rollback in registry.TRANSACTION_ROLLBACKS:
            on_rollback(catalog, transaction_id)
        catalog.transactions.end_transaction(transaction_id)


def recover_sessions(executor: Executor, session_ids: Iterable[str]) -> None:
    """Clear what dead sessions hold: their statements' locks end, their transactions roll back."""
    catalog = executor.catalog
    dead = set(session_ids)
    with catalog.recovering():
        for session_id in dead:
            catalog.transactions.remove_session_statement_locks(session_id)
    for transaction in catalog.transactions.open_transactions():
        if transaction.session_id in dead:
            recover_transaction(executor, transaction)


def recover_transaction(executor: Executor, transaction: TransactionEntry) -> None:
    """Take over a dead session's transaction (so that one session recovers it) and roll it back."""
    catalog = executor.catalog
    now = executor.lake.now()
    with catalog.recovering():
        current = catalog.transactions.open_transaction(transaction.id)
        if current is None or current.session_id == executor.session.id or catalog.sessions.is_alive(current.session_id, now):
            return
        catalog.transactions.adopt_transaction(transaction.id, executor.session.id)
    LOG.warning("rolling back transaction %s, left open by a session that ended", transaction.id)
    roll_back(executor, transaction.id, f"recover-{transaction.id}", recording=catalog.recovering)


def recover(executor: Executor) -> None:
    """On ``connect()``: roll back the transactions of sessions that are gone."""
    catalog = executor.catalog
    sessions = {t.session_id for t in catalog.transactions.open_transactions()} | catalog.transactions.locking_sessions()
    now = executor.lake.now()
    dead = {s for s in sessions if s != executor.session.id and not catalog.sessions.is_alive(s, now)}
    if dead:
        recover_sessions(executor, dead)
