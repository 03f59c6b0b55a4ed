"""Open transactions, the tables their sessions hold locked, and the versions no session reads.

A table's committed version is the catalog's to name while a transaction
writes it: the transaction's lock holds the version committed when it was
taken, and every other session reads that one until COMMIT or ROLLBACK ends
the lock in one SQLite transaction. Each table's lock epoch counts the
transaction locks taken and ended on it, so that a reader can tell whether a
lock came and went while it looked at the table's log.
"""

from __future__ import annotations

import sqlite3

from lakeclone.catalog.db import Store, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import HiddenOutcome, HiddenVersions, TableLock, TransactionEntry


class TransactionStore(Store):
    """Transactions, table locks and hidden versions."""

    # Transactions -----------------------------------------------------------

    def begin_transaction(self, entry: TransactionEntry) -> None:
        self._db.execute(
            "INSERT INTO transactions (id, session_id, name, started_at, started_tick) VALUES (?, ?, ?, ?, ?)",
            (entry.id, entry.session_id, entry.name, timestamp_text(entry.started_at), entry.started_tick),
        )

    def open_transactions(self) -> list[TransactionEntry]:
        rows = self._db.execute("SELECT * FROM transactions ORDER BY started_tick").fetchall()
        return [_transaction(r) for r in rows]

    def open_transaction(self, transaction_id: str) -> TransactionEntry | None:
        row = self._db.execute("SELECT * FROM transactions WHERE id = ?", (transaction_id,)).fetchone()
        return _transaction(row) if row else None

    def adopt_transaction(self, transaction_id: str, session_id: str) -> None:
        """A live session takes over a dead one's transaction, and its locks, to roll it back."""
        self._db.execute("UPDATE transactions SET session_id = ? WHERE id = ?", (session_id, transaction_id))
        self._db.execute("UPDATE table_locks SET session_id = ? WHERE transaction_id = ?", (session_id, transaction_id))

    def locking_sessions(self) -> set[str]:
        """The sessions holding any table lock."""
        return {str(r[0]) for r in self._db.execute("SELECT DISTINCT session_id FROM table_locks").fetchall()}

    def end_transaction(self, transaction_id: str) -> None:
        """Drop the transaction and its locks; every table it held moves to a new epoch."""
        for lock in self.transaction_locks(transaction_id):
            self._bump_epoch(lock.table_id)
        self._db.execute("DELETE FROM table_locks WHERE transaction_id = ?", (transaction_id,))
        self._db.execute("DELETE FROM transactions WHERE id = ?", (transaction_id,))

    # Locks -------------------------------------------------------------------

    def table_locks(self, table_id: str) -> list[TableLock]:
        rows = self._db.execute("SELECT * FROM table_locks WHERE table_id = ?", (table_id,)).fetchall()
        return [_lock(r) for r in rows]

    def transaction_locks(self, transaction_id: str) -> list[TableLock]:
        rows = self._db.execute("SELECT * FROM table_locks WHERE transaction_id = ? ORDER BY rowid", (transaction_id,)).fetchall()
        return [_lock(r) for r in rows]

    def transaction_lock(self, table_id: str) -> tuple[int, TableLock | None]:
        """The table's lock epoch and the transaction lock on it, if any, read together."""
        # One statement reads one snapshot, without taking the write lock.
        row = self._db.execute(
            "SELECT COALESCE((SELECT epoch FROM table_lock_epochs WHERE table_id = :t), 0) AS epoch, l.* "
            "FROM (SELECT 1) LEFT JOIN table_locks l ON l.table_id = :t AND l.transaction_id IS NOT NULL",
            {"t": table_id},
        ).fetchone()
        return int(row["epoch"]), (_lock(row) if row["table_id"] is not None else None)

    def lock_epoch(self, table_id: str) -> int:
        row = self._db.execute("SELECT epoch FROM table_lock_epochs WHERE table_id = ?", (table_id,)).fetchone()
        return int(row[0]) if row else 0

    def add_lock(self, lock: TableLock) -> None:
        """Record a lock; the caller checked, in the same SQLite transaction, that nothing conflicts."""
        self._db.execute(
            "INSERT INTO table_locks (table_id, session_id, transaction_id, query_id, base_version) VALUES (?, ?, ?, ?, ?)",
            (lock.table_id, lock.session_id, lock.transaction_id, lock.query_id, lock.base_version),
        )
        if lock.transaction_id is not None:
            self._bump_epoch(lock.table_id)

    def remove_statement_locks(self, query_id: str) -> None:
        self._db.execute("DELETE FROM table_locks WHERE query_id = ? AND transaction_id IS NULL", (query_id,))

    def remove_session_statement_locks(self, session_id: str) -> None:
        """A dead session's autocommit locks (its transactions are rolled back separately)."""
        self._db.execute("DELETE FROM table_locks WHERE session_id = ? AND transaction_id IS NULL", (session_id,))

    def _bump_epoch(self, table_id: str) -> None:
        self._db.execute(
            "INSERT INTO table_lock_epochs (table_id, epoch) VALUES (?, 1) ON CONFLICT(table_id) DO UPDATE SET epoch = epoch + 1",
            (table_id,),
        )

    # Hidden versions ---------------------------------------------------------

    def hide_versions(self, hidden: HiddenVersions) -> None:
        if hidden.last_version < hidden.first_version:
            return
        self._db.execute(
            "INSERT OR REPLACE INTO hidden_versions (table_id, first_version, last_version, base_version, outcome) "
            "VALUES (?, ?, ?, ?, ?)",
            (hidden.table_id, hidden.first_version, hidden.last_version, hidden.base_version, hidden.outcome.value),
        )

    def hidden_versions(self, table_id: str) -> list[HiddenVersions]:
        rows = self._db.execute("SELECT * FROM hidden_versions WHERE table_id = ? ORDER BY first_version", (table_id,)).fetchall()
        return [
            HiddenVersions(
                r["table_id"],
                int(r["first_version"]),
                int(r["last_version"]),
                int(r["base_version"]),
                HiddenOutcome(r["outcome"]),
            )
            for r in rows
        ]


def _transaction(row: sqlite3.Row) -> TransactionEntry:
    return TransactionEntry(
        row["id"], row["session_id"], row["name"], parse_timestamp(row["started_at"]), int(row["started_tick"])
    )


def _lock(row: sqlite3.Row) -> TableLock:
    base = row["base_version"]
    return TableLock(
        row["table_id"], row["session_id"], row["transaction_id"], row["query_id"], None if base is None else int(base)
    )
