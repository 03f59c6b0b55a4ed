"""Stages (named external locations files are loaded from), named file formats, and the load history COPY INTO keeps per table."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from lakeclone.catalog.db import SchemaObjectTable, Store, optional_timestamp, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import SchemaEntry, SchemaObjectEntry


@dataclass(frozen=True)
class StageEntry(SchemaObjectEntry):
    """A stage's catalog row: where its files are and the file format options it gives a COPY by default."""

    url: str
    file_format: Mapping[str, str]
    comment: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None


@dataclass(frozen=True)
class FileFormatEntry(SchemaObjectEntry):
    """A named file format's catalog row: its options, as :class:`lakeclone.loading.formats.FileFormat` writes them."""

    options: Mapping[str, str]
    comment: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None


@dataclass(frozen=True)
class LoadedFile:
    """A file a COPY INTO loaded into a table (or is loading: ``pending`` until its statement finishes).

    Attributes:
        holder: the statement (or the transaction) that loads it; its commit carries that id.
        session_id: the session running the statement, while pending.
    """

    table_id: str
    uri: str
    checksum: str
    rows_loaded: int
    loaded_at: dt.datetime
    holder: str
    session_id: str
    pending: bool


class StageStore(Store):
    """Stages live in a schema, in a namespace of their own; load history is kept per table and file."""

    def stage(self, database: str, schema: str, name: str) -> StageEntry | None:
        return self._named(STAGES, database, schema, name)

    def stage_by_id(self, stage_id: str) -> StageEntry | None:
        """A stage by identity, live or dropped."""
        return self._with_id(STAGES, stage_id)

    def in_schema(self, schema: SchemaEntry) -> list[StageEntry]:
        return self._in_schema(STAGES, schema.id)

    def create_stage(
        self, schema: SchemaEntry, name: str, *, url: str, file_format: Mapping[str, str], comment: str, now: dt.datetime
    ) -> StageEntry:
        entry = StageEntry(
            uuid.uuid4().hex, schema.id, schema.database, schema.name, name, url, dict(file_format), comment, now, None
        )
        self._db.execute(
            "INSERT INTO stages (id, schema_id, name, url, file_format, comment, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (entry.id, schema.id, name, url, json.dumps(entry.file_format), comment, timestamp_text(now)),
        )
        return entry

    def file_format(self, database: str, schema: str, name: str) -> FileFormatEntry | None:
        return self._named(FILE_FORMATS, database, schema, name)

    def file_format_by_id(self, format_id: str) -> FileFormatEntry | None:
        """A named file format by identity, live or dropped."""
        return self._with_id(FILE_FORMATS, format_id)

    def file_formats(self, schema: SchemaEntry) -> list[FileFormatEntry]:
        return self._in_schema(FILE_FORMATS, schema.id)

    def create_file_format(
        self, schema: SchemaEntry, name: str, *, options: Mapping[str, str], comment: str, now: dt.datetime
    ) -> FileFormatEntry:
        entry = FileFormatEntry(
            uuid.uuid4().hex, schema.id, schema.database, schema.name, name, dict(options), comment, now, None
        )
        self._db.execute(
            "INSERT INTO file_formats (id, schema_id, name, options, comment, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (entry.id, schema.id, name, json.dumps(entry.options), comment, timestamp_text(now)),
        )
        return entry

    def loaded_files(self, table_id: str, uris: Iterable[str], since: dt.datetime) -> list[LoadedFile]:
        """What the load history holds for these files of a table: loads since ``since``, and pending ones."""
        found: list[LoadedFile] = []
        listed = list(uris)
        for start in range(0, len(listed), 500):
            chunk = listed[start : start + 500]
            rows = self._db.execute(
                f"SELECT * FROM loaded_files WHERE table_id = ? AND uri IN ({', '.join('?' * len(chunk))}) "
                "AND (pending = 1 OR loaded_at >= ?)",
                (table_id, *chunk, timestamp_text(since)),
            ).fetchall()
            found.extend(_loaded(r) for r in rows)
        return found

    def record_loads(self, loads: Iterable[LoadedFile]) -> None:
        self._db.executemany(
            "INSERT INTO loaded_files (table_id, uri, checksum, rows_loaded, loaded_at, holder, session_id, pending) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    f.table_id,
                    f.uri,
                    f.checksum,
                    f.rows_loaded,
                    timestamp_text(f.loaded_at),
                    f.holder,
                    f.session_id,
                    int(f.pending),
                )
                for f in loads
            ],
        )

    def pending_loads(self) -> list[LoadedFile]:
        rows = self._db.execute("SELECT * FROM loaded_files WHERE pending = 1 ORDER BY holder").fetchall()
        return [_loaded(r) for r in rows]

    def settle_loads(self, holder: str, now: dt.datetime) -> None:
        """The loads ``holder`` recorded landed: they are history, dated ``now``."""
        self._db.execute(
            "UPDATE loaded_files SET pending = 0, loaded_at = ? WHERE holder = ? AND pending = 1", (timestamp_text(now), holder)
        )

    def count_load(self, holder: str, uri: str, rows_loaded: int) -> None:
        """How many rows a pending load of ``uri`` brings."""
        self._db.execute(
            "UPDATE loaded_files SET rows_loaded = ? WHERE holder = ? AND uri = ? AND pending = 1", (rows_loaded, holder, uri)
        )

    def forget_loads(self, holder: str, uris: Iterable[str] | None = None) -> None:
        """The loads ``holder`` recorded (of ``uris`` only, if given) did not land."""
        if uris is None:
            self._db.execute("DELETE FROM loaded_files WHERE holder = ? AND pending = 1", (holder,))
            return
        self._db.executemany(
            "DELETE FROM loaded_files WHERE holder = ? AND uri = ? AND pending = 1", [(holder, uri) for uri in uris]
        )

    def expire_loads(self, before: dt.datetime) -> None:
        """Forget loads older than the history is kept for."""
        self._db.execute("DELETE FROM loaded_files WHERE pending = 0 AND loaded_at < ?", (timestamp_text(before),))


def _stage(row: sqlite3.Row) -> StageEntry:
    return StageEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        row["url"],
        json.loads(row["file_format"]),
        row["comment"],
        parse_timestamp(row["created_at"]),
        optional_timestamp(row["dropped_at"]),
    )


def _file_format(row: sqlite3.Row) -> FileFormatEntry:
    return FileFormatEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        json.loads(row["options"]),
        row["comment"],
        parse_timestamp(row["created_at"]),
        optional_timestamp(row["dropped_at"]),
    )


STAGES = SchemaObjectTable("stages", _stage)
FILE_FORMATS = SchemaObjectTable("file_formats", _file_format)


def _loaded(row: sqlite3.Row) -> LoadedFile:
    return LoadedFile(
        row["table_id"],
        row["uri"],
        row["checksum"],
        int(row["rows_loaded"]),
        parse_timestamp(row["loaded_at"]),
        row["holder"],
        row["session_id"],
        bool(row["pending"]),
    )
