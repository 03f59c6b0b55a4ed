"""Streams, the versions of each table whose changes are tracked, and statements consuming streams."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
from collections.abc import Mapping

from lakeclone.catalog.db import (
    LIVE_OBJECT,
    SchemaObjectTable,
    Store,
    optional_timestamp,
    parse_timestamp,
    timestamp_text,
)
from lakeclone.catalog.entries import (
    Consumption,
    SchemaEntry,
    SourceKind,
    StreamEntry,
    StreamMode,
    TrackingInterval,
)


class StreamStore(Store):
    """Streams live in a schema like tables, and follow their source by id."""

    # Streams ---------------------------------------------------------------

    def stream(self, database: str, schema: str, name: str) -> StreamEntry | None:
        return self._named(STREAMS, database, schema, name)

    def stream_by_id(self, stream_id: str) -> StreamEntry | None:
        """A stream by identity, live or dropped."""
        return self._with_id(STREAMS, stream_id)

    def in_schema(self, schema: SchemaEntry) -> list[StreamEntry]:
        return self._in_schema(STREAMS, schema.id)

    def streams_on(self, table_id: str) -> list[StreamEntry]:
        """The live streams whose offsets include ``table_id`` (streams on the table, or on views reading it)."""
        rows = self._db.execute(
            STREAMS.select + " WHERE o.offsets LIKE ?" + LIVE_OBJECT + " ORDER BY o.name", (f'%"{table_id}"%',)
        ).fetchall()
        return [e for e in map(_stream, rows) if table_id in e.offsets]

    def streamed_table_ids(self) -> set[str]:
        """The tables some live stream reads."""
        rows = self._db.execute(STREAMS.select + " WHERE 1 = 1" + LIVE_OBJECT).fetchall()
        return {str(table_id) for r in rows for table_id in json.loads(r["offsets"])}

    def create_stream(
        self,
        schema: SchemaEntry,
        name: str,
        *,
        source_kind: SourceKind,
        source_id: str,
        mode: StreamMode,
        offsets: Mapping[str, int],
        initial_rows: bool,
        comment: str,
        now: dt.datetime,
    ) -> StreamEntry:
        entry = StreamEntry(
            uuid.uuid4().hex,
            schema.id,
            schema.database,
            schema.name,
            name,
            source_kind,
            source_id,
            mode,
            dict(offsets),
            initial_rows,
            comment,
            now,
            now,
        )
        self._db.execute(
            "INSERT INTO streams (id, schema_id, name, source_kind, source_id, mode, offsets, initial_rows, "
            "comment, created_at, offset_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.id,
                schema.id,
                name,
                source_kind.value,
                source_id,
                mode.value,
                json.dumps(dict(offsets)),
                int(initial_rows),
                comment,
                timestamp_text(now),
                timestamp_text(now),
            ),
        )
        return entry

    def move_offsets(self, stream_id: str, offsets: Mapping[str, int], *, initial_rows: bool, now: dt.datetime) -> None:
        """A consuming statement's commit: the stream's changes now start after ``offsets``."""
        self._db.execute(
            "UPDATE streams SET offsets = ?, initial_rows = ?, offset_at = ? WHERE id = ?",
            (json.dumps(dict(offsets)), int(initial_rows), timestamp_text(now), stream_id),
        )

    # Change tracking --------------------------------------------------------

    def tracking(self, table_id: str) -> list[TrackingInterval]:
        rows = self._db.execute("SELECT * FROM change_tracking WHERE table_id = ? ORDER BY since_version", (table_id,)).fetchall()
        return [TrackingInterval(r["table_id"], int(r["since_version"]), r["until_version"]) for r in rows]

    def start_tracking(self, table_id: str, version: int) -> None:
        self._db.execute("INSERT OR IGNORE INTO change_tracking (table_id, since_version) VALUES (?, ?)", (table_id, version))

    def stop_tracking(self, table_id: str, version: int) -> None:
        self._db.execute(
            "UPDATE change_tracking SET until_version = ? WHERE table_id = ? AND until_version IS NULL",
            (version, table_id),
        )

    # Consumptions -------------------------------------------------------------

    def consumption(self, stream_id: str) -> Consumption | None:
        row = self._db.execute("SELECT * FROM stream_consumptions WHERE stream_id = ?", (stream_id,)).fetchone()
        return _consumption(row) if row else None

    def consumptions(self) -> list[Consumption]:
        return [_consumption(r) for r in self._db.execute("SELECT * FROM stream_consumptions").fetchall()]

    def record_consumption(self, consumption: Consumption) -> None:
        self._db.execute(
            "INSERT INTO stream_consumptions (stream_id, query_id, session_id, target, offsets, initial_rows) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                consumption.stream_id,
                consumption.query_id,
                consumption.session_id,
                consumption.target,
                json.dumps(dict(consumption.offsets)),
                int(consumption.initial_rows),
            ),
        )

    def forget_consumptions_of(self, holder: str) -> None:
        """Drop every consumption record a statement or transaction holds."""
        self._db.execute("DELETE FROM stream_consumptions WHERE query_id = ?", (holder,))

    def forget_consumption(self, stream_id: str, query_id: str) -> None:
        self._db.execute("DELETE FROM stream_consumptions WHERE stream_id = ? AND query_id = ?", (stream_id, query_id))


def _stream(row: sqlite3.Row) -> StreamEntry:
    return StreamEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        SourceKind(row["source_kind"]),
        row["source_id"],
        StreamMode(row["mode"]),
        {str(k): int(v) for k, v in json.loads(row["offsets"]).items()},
        bool(row["initial_rows"]),
        row["comment"],
        parse_timestamp(row["created_at"]),
        parse_timestamp(row["offset_at"]),
        optional_timestamp(row["dropped_at"]),
    )


STREAMS = SchemaObjectTable("streams", _stream)


def _consumption(row: sqlite3.Row) -> Consumption:
    return Consumption(
        row["stream_id"],
        row["query_id"],
        row["session_id"],
        row["target"],
        {str(k): int(v) for k, v in json.loads(row["offsets"]).items()},
        bool(row["initial_rows"]),
    )
