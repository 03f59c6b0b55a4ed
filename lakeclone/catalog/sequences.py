"""Sequences in the catalog, and handing out their values."""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid

from lakeclone.catalog.db import (
    LIVE_OBJECT,
    SchemaObjectTable,
    Store,
    optional_timestamp,
    parse_timestamp,
    timestamp_text,
)
from lakeclone.catalog.entries import SchemaEntry, SequenceEntry


class SequenceStore(Store):
    """Sequences live in a schema like tables; ``next_value`` is the next value handed out."""

    def sequence(self, database: str, schema: str, name: str) -> SequenceEntry | None:
        return self._named(SEQUENCES, database, schema, name)

    def sequence_by_id(self, sequence_id: str) -> SequenceEntry | None:
        """A sequence by identity, live or dropped."""
        return self._with_id(SEQUENCES, sequence_id)

    def sequence_is_live(self, sequence_id: str) -> bool:
        return self._db.execute(SEQUENCES.select + " WHERE o.id = ?" + LIVE_OBJECT, (sequence_id,)).fetchone() is not None

    def in_schema(self, schema: SchemaEntry) -> list[SequenceEntry]:
        return self._in_schema(SEQUENCES, schema.id)

    def create_sequence(
        self,
        schema: SchemaEntry,
        name: str,
        *,
        start: int,
        increment: int,
        now: dt.datetime,
        comment: str = "",
        source_id: str | None = None,
    ) -> SequenceEntry:
        entry = SequenceEntry(
            uuid.uuid4().hex,
            schema.id,
            schema.database,
            schema.name,
            name,
            start,
            increment,
            comment,
            now,
            None,
            source_id,
        )
        self._db.execute(
            "INSERT INTO sequences (id, schema_id, name, next_value, increment, comment, "
            "created_at, source_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (entry.id, schema.id, name, start, increment, comment, timestamp_text(now), source_id),
        )
        return entry

    def reserve_sequence_values(self, sequence_id: str, count: int) -> tuple[int, int]:
        """Hand out ``count`` consecutive values of a sequence: (first value, increment).

        The read and the advance run under SQLite's write lock, so no two
        callers, in any process, ever get the same value.
        """
        with self.transaction():
            row = self._db.execute("SELECT next_value, increment FROM sequences WHERE id = ?", (sequence_id,)).fetchone()
            if row is None:
                raise KeyError(sequence_id)
            first, increment = int(row["next_value"]), int(row["increment"])
            self._db.execute("UPDATE sequences SET next_value = ? WHERE id = ?", (first + count * increment, sequence_id))
        return first, increment


def _sequence(row: sqlite3.Row) -> SequenceEntry:
    return SequenceEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        int(row["next_value"]),
        int(row["increment"]),
        row["comment"],
        parse_timestamp(row["created_at"]),
        optional_timestamp(row["dropped_at"]),
        row["source_id"],
    )


SEQUENCES = SchemaObjectTable("sequences", _sequence)
