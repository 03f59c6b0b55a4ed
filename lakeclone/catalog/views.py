"""Views in the catalog: their definitions, by schema."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
from collections.abc import Sequence

from lakeclone.catalog.db import SchemaObjectTable, Store, optional_timestamp, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import SchemaEntry, ViewEntry


class ViewStore(Store):
    """Views live in a schema like tables; a dropped view keeps its row, marked ``dropped_at``."""

    def view(self, database: str, schema: str, name: str) -> ViewEntry | None:
        return self._named(VIEWS, database, schema, name)

    def view_by_id(self, view_id: str) -> ViewEntry | None:
        """A view by identity, live or dropped."""
        return self._with_id(VIEWS, view_id)

    def in_schema(self, schema: SchemaEntry) -> list[ViewEntry]:
        """A schema's live views, by name."""
        return self._in_schema(VIEWS, schema.id)

    def create_view(
        self, schema: SchemaEntry, name: str, *, definition: str, columns: Sequence[str], now: dt.datetime
    ) -> ViewEntry:
        entry = ViewEntry(uuid.uuid4().hex, schema.id, schema.database, schema.name, name, definition, tuple(columns), now, None)
        self._db.execute(
            "INSERT INTO views (id, schema_id, name, definition, columns, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (entry.id, schema.id, name, definition, json.dumps(list(columns)), timestamp_text(now)),
        )
        return entry

    def rename_view(self, view: ViewEntry, schema: SchemaEntry, name: str) -> None:
        self._db.execute("UPDATE views SET schema_id = ?, name = ? WHERE id = ?", (schema.id, name, view.id))


def _view(row: sqlite3.Row) -> ViewEntry:
    return ViewEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        row["definition"],
        tuple(json.loads(row["columns"])),
        parse_timestamp(row["created_at"]),
        optional_timestamp(row["dropped_at"]),
    )


VIEWS = SchemaObjectTable("views", _view)
