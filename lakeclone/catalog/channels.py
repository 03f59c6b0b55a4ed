"""Channels: each table's named ingestion channels, their current open, and a cache of what they committed."""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid

from lakeclone.catalog.db import (
    Store,
    optional_timestamp,
    optional_timestamp_text,
    parse_timestamp,
    timestamp_text,
)
from lakeclone.catalog.entries import ChannelEntry


class ChannelStore(Store):
    """Channels by table and name; the offset token itself lives in the table's Delta log."""

    def channel(self, table_id: str, name: str) -> ChannelEntry | None:
        row = self._db.execute("SELECT * FROM channels WHERE table_id = ? AND name = ?", (table_id, name)).fetchone()
        return _channel(row) if row else None

    def channel_by_id(self, channel_id: str) -> ChannelEntry | None:
        row = self._db.execute("SELECT * FROM channels WHERE id = ?", (channel_id,)).fetchone()
        return _channel(row) if row else None

    def channels_of(self, table_id: str) -> list[ChannelEntry]:
        rows = self._db.execute("SELECT * FROM channels WHERE table_id = ? ORDER BY name", (table_id,)).fetchall()
        return [_channel(r) for r in rows]

    def open_channel(self, table_id: str, name: str, client: str, now: dt.datetime) -> ChannelEntry:
        """Create the channel, or take it over: its generation moves on, which invalidates every older handle."""
        existing = self.channel(table_id, name)
        if existing is None:
            self._db.execute(
                "INSERT INTO channels (id, table_id, name, client, app_id, generation, created_at, opened_at) "
                "VALUES (?, ?, ?, ?, ?, 1, ?, ?)",
                (uuid.uuid4().hex, table_id, name, client, _app_id(), timestamp_text(now), timestamp_text(now)),
            )
        else:
            self._db.execute(
                "UPDATE channels SET generation = generation + 1, client = ?, opened_at = ?, pending_since = NULL WHERE id = ?",
                (client, timestamp_text(now), existing.id),
            )
        entry = self.channel(table_id, name)
        assert entry is not None
        return entry

    def reset_channel(self, channel_id: str, now: dt.datetime) -> None:
        """Start the channel over (30 days without ingestion): a new appId, so its offset token is NULL."""
        self._db.execute(
            "UPDATE channels SET app_id = ?, generation = generation + 1, txn_version = NULL, offset_token = NULL, "
            "rows_inserted = 0, rows_in_error = 0, last_error = NULL, created_at = ?, last_committed_at = NULL, "
            "pending_since = NULL "
            "WHERE id = ?",
            (_app_id(), timestamp_text(now), channel_id),
        )

    def record_channel_commit(
        self,
        channel_id: str,
        app_id: str,
        txn_version: int,
        token: str | None,
        rows: int,
        now: dt.datetime,
        pending_since: dt.datetime | None,
    ) -> None:
        """A commit of the channel landed: cache its token, unless a later one is cached already.

        ``pending_since``: when the oldest row its client holds after the commit was inserted (None: it holds none).
        """
        self._db.execute(
            "UPDATE channels SET txn_version = ?, offset_token = ?, rows_inserted = rows_inserted + ?, "
            "last_committed_at = ?, pending_since = ? "
            "WHERE id = ? AND app_id = ? AND (txn_version IS NULL OR txn_version < ?)",
            (
                txn_version,
                token,
                rows,
                timestamp_text(now),
                optional_timestamp_text(pending_since),
                channel_id,
                app_id,
                txn_version,
            ),
        )

    def cache_channel_token(self, channel_id: str, app_id: str, txn_version: int | None, token: str | None) -> None:
        """What the log says the channel last committed."""
        self._db.execute(
            "UPDATE channels SET txn_version = ?, offset_token = ? WHERE id = ? AND app_id = ?",
            (txn_version, token, channel_id, app_id),
        )

    def record_channel_errors(
        self, channel_id: str, count: int, last_error: str, pending_since: dt.datetime | None = None
    ) -> None:
        """Rows the channel rejected, or a failed flush (``count`` 0), whose rows wait since ``pending_since``."""
        self._db.execute(
            "UPDATE channels SET rows_in_error = rows_in_error + ?, last_error = ?, "
            "pending_since = COALESCE(?, pending_since) WHERE id = ?",
            (count, last_error, optional_timestamp_text(pending_since), channel_id),
        )

    def drop_channel(self, channel_id: str) -> None:
        self._db.execute("DELETE FROM channels WHERE id = ?", (channel_id,))


def _app_id() -> str:
    return f"lakeclone-channel-{uuid.uuid4().hex}"


def _channel(row: sqlite3.Row) -> ChannelEntry:
    return ChannelEntry(
        row["id"],
        row["table_id"],
        row["name"],
        row["client"],
        row["app_id"],
        int(row["generation"]),
        None if row["txn_version"] is None else int(row["txn_version"]),
        row["offset_token"],
        int(row["rows_inserted"]),
        int(row["rows_in_error"]),
        row["last_error"],
        parse_timestamp(row["created_at"]),
        parse_timestamp(row["opened_at"]),
        optional_timestamp(row["last_committed_at"]),
        optional_timestamp(row["pending_since"]),
    )
