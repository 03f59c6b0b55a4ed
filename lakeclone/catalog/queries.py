"""The statements lakeclone ran, and the warehouse's ticks that order statements and commits."""

from __future__ import annotations

import datetime as dt
import sqlite3
from collections.abc import Collection

from lakeclone.catalog.db import Store, optional_timestamp, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import QueryEntry, QueryOrigin


class QueryStore(Store):
    """Statements by query id, for ``AT|BEFORE(STATEMENT => id)`` and QUERY_HISTORY."""

    def tick(self) -> int:
        """The warehouse's next tick.

        Taken under SQLite's write lock, so ticks order the statements and
        commits of every process on the warehouse.
        """
        # A tick orders commits; it is no statement's record, so it commits at once outside one.
        with self.joined_or_at_once():
            self._db.execute("UPDATE ticks SET value = value + 1 WHERE id = 1")
            return int(self._db.execute("SELECT value FROM ticks WHERE id = 1").fetchone()[0])

    def record_query(self, query_id: str, text: str, started_at: dt.datetime, origin: QueryOrigin) -> int:
        """Record a statement as it starts, with who runs it and where; returns the tick it started at."""
        with self.transaction():
            tick = self.tick()
            self._db.execute(
                "INSERT INTO queries (id, started_at, text, started_tick, query_tag, session_id, user_name, role_name,"
                " database_name, schema_name, query_type) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    query_id,
                    timestamp_text(started_at),
                    _storable(text),
                    tick,
                    origin.query_tag,
                    origin.session_id,
                    origin.user,
                    origin.role,
                    origin.database,
                    origin.schema,
                    origin.query_type,
                ),
            )
        return tick

    def finish_query(self, query_id: str, finished_at: dt.datetime) -> None:
        with self.transaction():
            self._db.execute(
                "UPDATE queries SET finished_at = ?, finished_tick = ? WHERE id = ?",
                (timestamp_text(finished_at), self.tick(), query_id),
            )

    def fail_query(self, query_id: str, finished_at: dt.datetime, code: str | None, message: str) -> None:
        """Record that a statement failed, with its error (Snowflake's code for it, where it has one)."""
        with self.transaction():
            self._db.execute(
                "UPDATE queries SET finished_at = ?, finished_tick = ?, error_code = ?, error_message = ? WHERE id = ?",
                (timestamp_text(finished_at), self.tick(), code, _storable(message), query_id),
            )

    def query_history(
        self,
        since: dt.datetime,
        until: dt.datetime,
        limit: int,
        *,
        user: str | None = None,
        session_id: str | None = None,
    ) -> list[QueryEntry]:
        """The latest ``limit`` statements that finished between ``since`` and ``until`` or still run, newest first.

        Only ``user``'s or ``session_id``'s when given.
        """
        conditions = ["COALESCE(finished_at, :until) BETWEEN :since AND :until", "started_at <= :until"]
        if user is not None:
            conditions.append("user_name = :user")
        if session_id is not None:
            conditions.append("session_id = :session")
        rows = self._db.execute(
            f"SELECT * FROM queries WHERE {' AND '.join(conditions)} ORDER BY started_tick DESC LIMIT :limit",
            {
                "since": timestamp_text(since),
                "until": timestamp_text(until),
                "user": user,
                "session": session_id,
                "limit": limit,
            },
        ).fetchall()
        return [_query(row) for row in rows]

    def query(self, query_id: str) -> QueryEntry | None:
        row = self._db.execute("SELECT * FROM queries WHERE id = ?", (query_id,)).fetchone()
        return _query(row) if row else None

    def query_users(self, query_ids: Collection[str]) -> dict[str, str]:
        """The user who ran each of the statements ``query_ids`` name, by query id (those the history has)."""
        found: dict[str, str] = {}
        ids = sorted(set(query_ids))
        # SQLite's default limit on a statement's parameters is 999: ask in chunks below it.
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self._db.execute(f"SELECT id, user_name FROM queries WHERE id IN ({marks})", chunk):
                found[row["id"]] = row["user_name"]
        return found


def _storable(text: str) -> str:
    """``text`` as SQLite can hold it: a lone surrogate, which no UTF-8 spells, written as its escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _query(row: sqlite3.Row) -> QueryEntry:
    return QueryEntry(
        row["id"],
        int(row["started_tick"]),
        row["finished_tick"],
        parse_timestamp(row["started_at"]),
        optional_timestamp(row["finished_at"]),
        row["text"],
        QueryOrigin(
            row["session_id"],
            row["user_name"],
            row["role_name"],
            row["database_name"],
            row["schema_name"],
            row["query_type"],
            row["query_tag"],
        ),
        row["error_code"],
        row["error_message"],
    )
