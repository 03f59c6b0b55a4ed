"""The catalog's SQLite connection: opened safely by several processes at once, migrated to the current schema."""

from __future__ import annotations

import contextlib
import datetime as dt
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from lakeclone.catalog.migrations import migrate
from lakeclone.errors import CatalogBusyError


def timestamp_text(moment: dt.datetime) -> str:
    """A UTC timestamp as fixed-width text, so SQLite compares it correctly as a string."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)


def optional_timestamp(text: str | None) -> dt.datetime | None:
    return parse_timestamp(text) if text else None


class CatalogConnection:
    """One connection to the catalog file.

    Reads run in autocommit mode; every change runs inside :meth:`transaction`,
    which takes SQLite's write lock up front (``BEGIN IMMEDIATE``) so that two
    processes never interleave a check and the write that depends on it.
    """

    def __init__(self, path: Path, *, timeout: float = 60) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, timeout=timeout, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._enable_wal(timeout=timeout)
        # In WAL mode, NORMAL still survives a crash of the process; only a power
        # loss can lose the last commits. FULL costs a disk sync per statement run.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        with self.transaction():
            migrate(self._db)

    def _enable_wal(self, *, timeout: float) -> None:
        """Switch a new catalog file to WAL mode, which lets readers and a writer work at once.

        SQLite does not wait out its busy timeout for a journal-mode change, so
        two processes opening a new warehouse together retry here instead.
        """
        deadline = time.monotonic() + timeout
        while True:
            try:
                # Reading the mode needs no lock; a file already in WAL mode needs no change.
                if self._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal":
                    return
                if self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0] == "wal":
                    return
            except sqlite3.OperationalError:
                pass
            if time.monotonic() > deadline:
                raise CatalogBusyError(f"The catalog {self.path} stayed locked for {timeout:g} s.")
            time.sleep(0.05)

    def close(self) -> None:
        self._db.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block atomically: all of its changes, or none."""
        if self._db.in_transaction:
            yield
            return
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _mark_dropped(self, table: str, object_id: str, now: dt.datetime) -> None:
        self._db.execute(
            f"UPDATE {table} SET dropped_at = ? WHERE id = ?",
            (timestamp_text(now), object_id),
        )
