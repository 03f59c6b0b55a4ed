"""The statements lakeclone ran, and the warehouse's ticks that order statements and commits."""

from __future__ import annotations

import datetime as dt
import sqlite3

from lakeclone.catalog.db import CatalogConnection, optional_timestamp, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import QueryEntry


class QueryStore(CatalogConnection):
    """Statements by query id, for ``AT|BEFORE(STATEMENT => id)``."""

    def tick(self) -> int:
        """The warehouse's next tick.

        Taken under SQLite's write lock, so ticks order the statements and
        commits of every process on the warehouse.
        """
        with self.transaction():
            self._db.execute("UPDATE ticks SET value = value + 1 WHERE id = 1")
            return int(self._db.execute("SELECT value FROM ticks WHERE id = 1").fetchone()[0])

    def record_query(self, query_id: str, text: str, started_at: dt.datetime, query_tag: str = "") -> int:
        """Record a statement as it starts, with its session's QUERY_TAG; returns the tick it started at."""
        with self.transaction():
            tick = self.tick()
            self._db.execute(
                "INSERT INTO queries (id, started_at, text, started_tick, query_tag) VALUES (?, ?, ?, ?, ?)",
                (query_id, timestamp_text(started_at), text, tick, query_tag),
            )
        return tick

    def finish_query(self, query_id: str, finished_at: dt.datetime) -> None:
        with self.transaction():
            self._db.execute(
                "UPDATE queries SET finished_at = ?, finished_tick = ? WHERE id = ?",
                (timestamp_text(finished_at), self.tick(), query_id),
            )

    def query(self, query_id: str) -> QueryEntry | None:
        row = self._db.execute("SELECT * FROM queries WHERE id = ?", (query_id,)).fetchone()
        return _query(row) if row else None


def _query(row: sqlite3.Row) -> QueryEntry:
    return QueryEntry(
        row["id"],
        int(row["started_tick"]),
        row["finished_tick"],
        parse_timestamp(row["started_at"]),
        optional_timestamp(row["finished_at"]),
        row["text"],
        row["query_tag"],
    )
