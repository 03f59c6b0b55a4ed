"""Databases, schemas and tables in the catalog.

Names are unique among live objects only; a dropped object keeps its row (and
its id) so that UNDROP can bring it back. Dropping a database or schema marks
only that object: what lies below it disappears with it because every lookup
goes through live parents, and comes back with it on UNDROP.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import uuid

from lakeclone.catalog.db import Store, optional_timestamp, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import CloneKind, DatabaseEntry, SchemaEntry, TableEntry, TableKind, VacuumEntry

DEFAULT_DATABASE = "LAKE"
DEFAULT_SCHEMA = "PUBLIC"

_SCHEMA_SELECT = (
    "SELECT s.*, d.name AS database_name FROM schemas s JOIN databases d ON s.database_id = d.id WHERE d.dropped_at IS NULL"
)
_TABLE_ROWS = (
    "SELECT t.*, s.name AS schema_name, d.name AS database_name FROM tables t "
    "JOIN schemas s ON t.schema_id = s.id JOIN databases d ON s.database_id = d.id"
)
# A purged table stays gone even when the schema or database around it is undropped.
_LIVE_PARENTS = " WHERE d.dropped_at IS NULL AND s.dropped_at IS NULL AND t.purged_at IS NULL"


class ObjectStore(Store):
    """Databases, schemas and tables."""

    def ensure_default(self, now: dt.datetime) -> None:
        """Create the LAKE database and its PUBLIC schema in a warehouse that has no database yet."""
        with self.transaction():
            if self._db.execute("SELECT 1 FROM databases LIMIT 1").fetchone():
                return
            database = self.create_database(DEFAULT_DATABASE, now)
            self.create_schema(database, DEFAULT_SCHEMA, now)

    # Databases ------------------------------------------------------------

    def database(self, name: str) -> DatabaseEntry | None:
        row = self._db.execute("SELECT * FROM databases WHERE name = ? AND dropped_at IS NULL", (name,)).fetchone()
        row = self._as_first_held(("databases", name), row)
        return _database(row) if row else None

    def databases(self) -> list[DatabaseEntry]:
        rows = self._db.execute("SELECT * FROM databases WHERE dropped_at IS NULL ORDER BY name").fetchall()
        return [_database(r) for r in rows]

    def create_database(self, name: str, now: dt.datetime) -> DatabaseEntry:
        entry = DatabaseEntry(uuid.uuid4().hex, name, now, None)
        self._db.execute("INSERT INTO databases (id, name, created_at) VALUES (?, ?, ?)", (entry.id, name, timestamp_text(now)))
        return entry

    def drop_database(self, database: DatabaseEntry, now: dt.datetime) -> None:
        self._mark_dropped("databases", database.id, now)

    def last_dropped_database(self, name: str) -> DatabaseEntry | None:
        row = self._db.execute(
            "SELECT * FROM databases WHERE name = ? AND dropped_at IS NOT NULL ORDER BY dropped_at DESC LIMIT 1",
            (name,),
        ).fetchone()
        return _database(row) if row else None

    def undrop_database(self, database: DatabaseEntry) -> None:
        self._db.execute("UPDATE databases SET dropped_at = NULL WHERE id = ?", (database.id,))

    def rename_database(self, database: DatabaseEntry, name: str) -> None:
        self._db.execute("UPDATE databases SET name = ? WHERE id = ?", (name, database.id))

    # Schemas --------------------------------------------------------------

    def schema(self, database: str, name: str) -> SchemaEntry | None:
        row = self._db.execute(
            _SCHEMA_SELECT + " AND d.name = ? AND s.name = ? AND s.dropped_at IS NULL", (database, name)
        ).fetchone()
        row = self._as_first_held(("schemas", database, name), row)
        return _schema(row) if row else None

    def schema_by_id(self, schema_id: str) -> SchemaEntry | None:
        """A schema by identity, live or dropped."""
        row = self._db.execute(
            "SELECT s.*, d.name AS database_name FROM schemas s JOIN databases d ON s.database_id = d.id WHERE s.id = ?",
            (schema_id,),
        ).fetchone()
        return _schema(row) if row else None

    def schemas(self, database: DatabaseEntry) -> list[SchemaEntry]:
        rows = self._db.execute(
            _SCHEMA_SELECT + " AND d.id = ? AND s.dropped_at IS NULL ORDER BY s.name", (database.id,)
        ).fetchall()
        return [_schema(r) for r in rows]

    def create_schema(self, database: DatabaseEntry, name: str, now: dt.datetime) -> SchemaEntry:
        entry = SchemaEntry(uuid.uuid4().hex, database.id, database.name, name, now, None)
        self._db.execute(
            "INSERT INTO schemas (id, database_id, name, created_at) VALUES (?, ?, ?, ?)",
            (entry.id, database.id, name, timestamp_text(now)),
        )
        return entry

    def drop_schema(self, schema: SchemaEntry, now: dt.datetime) -> None:
        self._mark_dropped("schemas", schema.id, now)

    def last_dropped_schema(self, database: DatabaseEntry, name: str) -> SchemaEntry | None:
        row = self._db.execute(
            "SELECT s.*, d.name AS database_name FROM schemas s JOIN databases d "
            "ON s.database_id = d.id WHERE d.id = ? AND s.name = ? AND s.dropped_at IS NOT NULL "
            "ORDER BY s.dropped_at DESC LIMIT 1",
            (database.id, name),
        ).fetchone()
        return _schema(row) if row else None

    def undrop_schema(self, schema: SchemaEntry) -> None:
        self._db.execute("UPDATE schemas SET dropped_at = NULL WHERE id = ?", (schema.id,))

    def rename_schema(self, schema: SchemaEntry, name: str) -> None:
        self._db.execute("UPDATE schemas SET name = ? WHERE id = ?", (name, schema.id))

    # Tables ---------------------------------------------------------------

    def table(self, database: str, schema: str, name: str) -> TableEntry | None:
        row = self._db.execute(
            _TABLE_ROWS + _LIVE_PARENTS + " AND d.name = ? AND s.name = ? AND t.name = ? AND t.dropped_at IS NULL",
            (database, schema, name),
        ).fetchone()
        row = self._as_first_held(("tables", database, schema, name), row)
        return _table(row) if row else None

    def table_by_id(self, table_id: str) -> TableEntry | None:
        """A table by identity, live or dropped, whatever its parents' state."""
        row = self._db.execute(_TABLE_ROWS + " WHERE t.id = ?", (table_id,)).fetchone()
        return _table(row) if row else None

    def tables(self, schema: SchemaEntry, *, dropped: bool = False) -> list[TableEntry]:
        """A schema's live tables; with ``dropped``, also those dropped but not yet purged."""
        live = "t.purged_at IS NULL" if dropped else "t.dropped_at IS NULL"
        rows = self._db.execute(
            _TABLE_ROWS + _LIVE_PARENTS + f" AND s.id = ? AND {live} ORDER BY t.name, t.created_at", (schema.id,)
        ).fetchall()
        return [_table(r) for r in rows]

    def live_table_at(self, location: str) -> TableEntry | None:
        """The live table whose folder is ``location``, if any."""
        row = self._db.execute(
            _TABLE_ROWS + _LIVE_PARENTS + " AND t.location = ? AND t.dropped_at IS NULL", (location,)
        ).fetchone()
        return _table(row) if row else None

    def table_locations(self) -> list[TableEntry]:
        """Every table whose folder may still hold files: live, dropped or purged-but-shared alike."""
        return [_table(r) for r in self._db.execute(_TABLE_ROWS).fetchall()]

    def create_table(
        self,
        schema: SchemaEntry,
        name: str,
        *,
        kind: TableKind,
        location: str,
        now: dt.datetime,
        table_id: str,
        owns_folder: bool,
        source_id: str | None = None,
        source_version: int | None = None,
        clone_kind: CloneKind | None = None,
    ) -> TableEntry:
        self._db.execute(
            "INSERT INTO tables (id, schema_id, name, kind, location, created_at, "
            "source_id, source_version, clone_kind, owns_folder) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                table_id,
                schema.id,
                name,
                kind.value,
                location,
                timestamp_text(now),
                source_id,
                source_version,
                clone_kind.value if clone_kind else None,
                int(owns_folder),
            ),
        )
        return TableEntry(
            table_id,
            schema.id,
            schema.database,
            schema.name,
            name,
            kind,
            location,
            now,
            None,
            source_id,
            source_version,
            clone_kind,
            None,
            owns_folder,
        )

    def drop_table(self, table: TableEntry, now: dt.datetime) -> None:
        self._mark_dropped("tables", table.id, now)

    def last_dropped_table(self, schema: SchemaEntry, name: str) -> TableEntry | None:
        row = self._db.execute(
            _TABLE_ROWS + " WHERE s.id = ? AND t.name = ? AND t.dropped_at IS NOT NULL AND t.purged_at IS NULL "
            "ORDER BY t.dropped_at DESC LIMIT 1",
            (schema.id, name),
        ).fetchone()
        return _table(row) if row else None

    def undrop_table(self, table: TableEntry) -> None:
        self._db.execute("UPDATE tables SET dropped_at = NULL WHERE id = ?", (table.id,))

    def rename_table(self, table: TableEntry, schema: SchemaEntry, name: str) -> None:
        self._db.execute("UPDATE tables SET schema_id = ?, name = ? WHERE id = ?", (schema.id, name, table.id))

    def clones_of(self, table_id: str, *, purged: bool = False) -> list[TableEntry]:
        """The tables cloned directly from ``table_id``, live or dropped; with ``purged``, purged ones too.

        Walking a lineage needs the purged ones: a purged clone's own clones may
        still be alive, and they reference the original's files directly.
        """
        rows = self._db.execute(
            _TABLE_ROWS + " WHERE t.source_id = ? AND (? OR t.purged_at IS NULL) ORDER BY t.created_at",
            (table_id, purged),
        ).fetchall()
        return [_table(r) for r in rows]

    def unpurged_tables(self) -> list[tuple[TableEntry, dt.datetime | None]]:
        """Every table whose files may still be on storage, with when it stopped being live.

        A table stops being live when it, its schema or its database is dropped;
        the earliest of those drops is what its UNDROP window counts from.
        """
        rows = self._db.execute(
            "SELECT t.*, s.name AS schema_name, d.name AS database_name, "
            "s.dropped_at AS schema_dropped_at, d.dropped_at AS database_dropped_at "
            "FROM tables t JOIN schemas s ON t.schema_id = s.id "
            "JOIN databases d ON s.database_id = d.id WHERE t.purged_at IS NULL"
        ).fetchall()
        found = []
        for row in rows:
            drops = [row[k] for k in ("dropped_at", "schema_dropped_at", "database_dropped_at") if row[k]]
            found.append((_table(row), parse_timestamp(min(drops)) if drops else None))
        return found

    def set_lineage(self, table: TableEntry, *, source_version: int) -> None:
        """Record that a deep clone was refreshed from a newer version of its source."""
        self._db.execute("UPDATE tables SET source_version = ? WHERE id = ?", (source_version, table.id))

    def vacuumed_before(self, table: TableEntry) -> dt.datetime | None:
        """The oldest moment a VACUUM of the table kept files for; versions before it may have lost files."""
        row = self._db.execute("SELECT vacuumed_before FROM tables WHERE id = ?", (table.id,)).fetchone()
        return optional_timestamp(row["vacuumed_before"]) if row else None

    def record_vacuum(self, table: TableEntry, vacuum: VacuumEntry) -> None:
        """Remember a VACUUM and its horizon (the latest such horizon is what counts for time travel)."""
        self._db.execute(
            "UPDATE tables SET vacuumed_before = MAX(COALESCE(vacuumed_before, ''), ?) WHERE id = ?",
            (timestamp_text(vacuum.horizon), table.id),
        )
        self._db.execute(
            "INSERT INTO vacuums (table_id, query_id, vacuumed_at, horizon) VALUES (?, ?, ?, ?)",
            (table.id, vacuum.query_id, timestamp_text(vacuum.vacuumed_at), timestamp_text(vacuum.horizon)),
        )

    def vacuums(self, table: TableEntry) -> list[VacuumEntry]:
        """The VACUUMs that removed ``table``'s files, oldest first (a warehouse before lakeclone recorded them has none)."""
        rows = self._db.execute(
            "SELECT query_id, vacuumed_at, horizon FROM vacuums WHERE table_id = ? ORDER BY vacuumed_at", (table.id,)
        )
        return [VacuumEntry(r["query_id"], parse_timestamp(r["vacuumed_at"]), parse_timestamp(r["horizon"])) for r in rows]

    def mark_purged(self, table: TableEntry, now: dt.datetime) -> None:
        self._db.execute("UPDATE tables SET purged_at = ? WHERE id = ?", (timestamp_text(now), table.id))


def _database(row: sqlite3.Row) -> DatabaseEntry:
    return DatabaseEntry(row["id"], row["name"], parse_timestamp(row["created_at"]), optional_timestamp(row["dropped_at"]))


def _schema(row: sqlite3.Row) -> SchemaEntry:
    return SchemaEntry(
        row["id"],
        row["database_id"],
        row["database_name"],
        row["name"],
        parse_timestamp(row["created_at"]),
        optional_timestamp(row["dropped_at"]),
    )


def _table(row: sqlite3.Row) -> TableEntry:
    return TableEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        TableKind(row["kind"]),
        row["location"],
        parse_timestamp(row["created_at"]),
        optional_timestamp(row["dropped_at"]),
        row["source_id"],
        row["source_version"],
        CloneKind(row["clone_kind"]) if row["clone_kind"] else None,
        optional_timestamp(row["purged_at"]),
        bool(row["owns_folder"]),
    )
