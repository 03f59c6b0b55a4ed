"""The catalog store: SQLite in the warehouse, shared safely by every process using it.

Names are unique among live objects only; a dropped object keeps its row (and
its id) so that UNDROP can bring it back. Dropping a database or schema marks
only that object: what lies below it disappears with it because every lookup
goes through live parents, and comes back with it on UNDROP.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from lakeclone.errors import LakecloneError

SCHEMA_SQL = """
CREATE TABLE IF NOT EXISTS databases (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS databases_live_name ON databases(name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS schemas (
    id TEXT PRIMARY KEY,
    database_id TEXT NOT NULL REFERENCES databases(id),
    name TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS schemas_live_name
    ON schemas(database_id, name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('MANAGED', 'EXTERNAL')),
    location TEXT NOT NULL,
    created_at TEXT NOT NULL,
    dropped_at TEXT,
    -- Lineage: the table this one was cloned from, at which version, and how.
    source_id TEXT REFERENCES tables(id),
    source_version INTEGER,
    clone_kind TEXT CHECK (clone_kind IN ('SHALLOW', 'DEEP')),
    -- Set once a dropped table's window has passed and its files are gone.
    purged_at TEXT
);
CREATE INDEX IF NOT EXISTS tables_source ON tables(source_id);
CREATE UNIQUE INDEX IF NOT EXISTS tables_live_name
    ON tables(schema_id, name) WHERE dropped_at IS NULL;

CREATE TABLE IF NOT EXISTS parameters (
    object_id TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (object_id, key)
);

CREATE TABLE IF NOT EXISTS queries (
    id TEXT PRIMARY KEY,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    text TEXT NOT NULL
);

-- Sequences live in a schema like tables; next_value is the next value handed out.
CREATE TABLE IF NOT EXISTS sequences (
    id TEXT PRIMARY KEY,
    schema_id TEXT NOT NULL REFERENCES schemas(id),
    name TEXT NOT NULL,
    next_value INTEGER NOT NULL,
    increment INTEGER NOT NULL CHECK (increment <> 0),
    comment TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    dropped_at TEXT,
    -- The sequence this one was cloned from, if any.
    source_id TEXT REFERENCES sequences(id)
);
CREATE UNIQUE INDEX IF NOT EXISTS sequences_live_name
    ON sequences(schema_id, name) WHERE dropped_at IS NULL;

-- Column defaults: a sequence's NEXTVAL (by sequence id) or a constant expression (lsql text).
CREATE TABLE IF NOT EXISTS column_defaults (
    table_id TEXT NOT NULL REFERENCES tables(id),
    column_name TEXT NOT NULL,
    sequence_id TEXT REFERENCES sequences(id),
    expression TEXT,
    CHECK ((sequence_id IS NULL) <> (expression IS NULL)),
    PRIMARY KEY (table_id, column_name)
);

-- Informational (not enforced) constraints; a foreign key names its referenced table by id.
CREATE TABLE IF NOT EXISTS table_constraints (
    table_id TEXT NOT NULL REFERENCES tables(id),
    name TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')),
    columns TEXT NOT NULL,
    ref_table_id TEXT REFERENCES tables(id),
    ref_columns TEXT,
    created_at TEXT NOT NULL,
    PRIMARY KEY (table_id, name)
);
CREATE INDEX IF NOT EXISTS table_constraints_ref ON table_constraints(ref_table_id);

-- Clustering keys (JSON list of lsql expressions) and whether automatic clustering runs.
CREATE TABLE IF NOT EXISTS clustering (
    table_id TEXT PRIMARY KEY REFERENCES tables(id),
    keys TEXT NOT NULL,
    automatic INTEGER NOT NULL CHECK (automatic IN (0, 1))
);
"""

DEFAULT_DATABASE = "LAKE"


class CatalogBusyError(LakecloneError):
    """Another process held the catalog longer than lakeclone waits."""

DEFAULT_SCHEMA = "PUBLIC"


def timestamp_text(moment: dt.datetime) -> str:
    """A UTC timestamp as fixed-width text, so SQLite compares it correctly as a string."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class DatabaseEntry:
    id: str
    name: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None


@dataclass(frozen=True)
class SchemaEntry:
    id: str
    database_id: str
    database: str
    name: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None


@dataclass(frozen=True)
class TableEntry:
    """A table's catalog row. ``id`` is its identity: RENAME keeps it, CREATE makes a new one."""

    id: str
    schema_id: str
    database: str
    schema: str
    name: str
    kind: str
    location: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None
    source_id: str | None = None
    source_version: int | None = None
    clone_kind: str | None = None
    purged_at: dt.datetime | None = None

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"

    @property
    def managed(self) -> bool:
        return self.kind == "MANAGED"


@dataclass(frozen=True)
class QueryEntry:
    id: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    text: str


@dataclass(frozen=True)
class SequenceEntry:
    """A sequence's catalog row; ``next_value`` is the next value it hands out."""

    id: str
    schema_id: str
    database: str
    schema: str
    name: str
    next_value: int
    increment: int
    comment: str
    created_at: dt.datetime
    dropped_at: dt.datetime | None
    source_id: str | None = None

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


@dataclass(frozen=True)
class ColumnDefault:
    """A column's default: a sequence's NEXTVAL (by id) or a constant lsql expression."""

    column: str
    sequence_id: str | None = None
    expression: str | None = None


@dataclass(frozen=True)
class ConstraintEntry:
    """An informational PRIMARY KEY, UNIQUE or FOREIGN KEY constraint of a table."""

    table_id: str
    name: str
    kind: str
    columns: tuple[str, ...]
    created_at: dt.datetime
    ref_table_id: str | None = None
    ref_columns: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClusteringEntry:
    """A table's clustering key (lsql expressions) and whether automatic clustering is on."""

    table_id: str
    keys: tuple[str, ...]
    automatic: bool


def _when(text: str | None) -> dt.datetime | None:
    return parse_timestamp(text) if text else None


class Catalog:
    """The catalog of one warehouse.

    Reads run in autocommit mode; every change runs inside :meth:`transaction`,
    which takes SQLite's write lock up front (``BEGIN IMMEDIATE``) so that two
    processes never interleave a check and the write that depends on it.
    """

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, timeout=60, check_same_thread=False)
        self._db.row_factory = sqlite3.Row
        self._enable_wal(timeout=60)
        # In WAL mode, NORMAL still survives a crash of the process; only a power
        # loss can lose the last commits. FULL costs a disk sync per statement run.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        # Every statement is IF NOT EXISTS, so concurrent first opens are harmless.
        self._db.executescript(SCHEMA_SQL)

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

    def ensure_default(self, now: dt.datetime) -> None:
        """Create the LAKE database and its PUBLIC schema in a warehouse that has no database yet."""
        with self.transaction():
            if self._db.execute("SELECT 1 FROM databases LIMIT 1").fetchone():
                return
            database = self.create_database(DEFAULT_DATABASE, now)
            self.create_schema(database, DEFAULT_SCHEMA, now)

    # Databases ------------------------------------------------------------

    def database(self, name: str) -> DatabaseEntry | None:
        row = self._db.execute(
            "SELECT * FROM databases WHERE name = ? AND dropped_at IS NULL", (name,)
        ).fetchone()
        return self._database(row) if row else None

    def databases(self) -> list[DatabaseEntry]:
        rows = self._db.execute(
            "SELECT * FROM databases WHERE dropped_at IS NULL ORDER BY name"
        ).fetchall()
        return [self._database(r) for r in rows]

    def create_database(self, name: str, now: dt.datetime) -> DatabaseEntry:
        entry = DatabaseEntry(uuid.uuid4().hex, name, now, None)
        self._db.execute(
            "INSERT INTO databases (id, name, created_at) VALUES (?, ?, ?)",
            (entry.id, name, timestamp_text(now)),
        )
        return entry

    def drop_database(self, database: DatabaseEntry, now: dt.datetime) -> None:
        self._mark_dropped("databases", database.id, now)

    def last_dropped_database(self, name: str) -> DatabaseEntry | None:
        row = self._db.execute(
            "SELECT * FROM databases WHERE name = ? AND dropped_at IS NOT NULL "
            "ORDER BY dropped_at DESC LIMIT 1",
            (name,),
        ).fetchone()
        return self._database(row) if row else None

    def undrop_database(self, database: DatabaseEntry) -> None:
        self._db.execute("UPDATE databases SET dropped_at = NULL WHERE id = ?", (database.id,))

    # Schemas --------------------------------------------------------------

    def schema(self, database: str, name: str) -> SchemaEntry | None:
        row = self._db.execute(
            self._SCHEMA_SELECT + " AND d.name = ? AND s.name = ? AND s.dropped_at IS NULL",
            (database, name),
        ).fetchone()
        return self._schema(row) if row else None

    def schemas(self, database: DatabaseEntry) -> list[SchemaEntry]:
        rows = self._db.execute(
            self._SCHEMA_SELECT + " AND d.id = ? AND s.dropped_at IS NULL ORDER BY s.name",
            (database.id,),
        ).fetchall()
        return [self._schema(r) for r in rows]

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
        return self._schema(row) if row else None

    def undrop_schema(self, schema: SchemaEntry) -> None:
        self._db.execute("UPDATE schemas SET dropped_at = NULL WHERE id = ?", (schema.id,))

    # Tables ---------------------------------------------------------------

    def table(self, database: str, schema: str, name: str) -> TableEntry | None:
        row = self._db.execute(
            self._TABLE_SELECT
            + " AND d.name = ? AND s.name = ? AND t.name = ? AND t.dropped_at IS NULL",
            (database, schema, name),
        ).fetchone()
        return self._table(row) if row else None

    def table_by_id(self, table_id: str) -> TableEntry | None:
        """A table by identity, live or dropped, whatever its parents' state."""
        row = self._db.execute(
            "SELECT t.*, s.name AS schema_name, d.name AS database_name FROM tables t "
            "JOIN schemas s ON t.schema_id = s.id JOIN databases d ON s.database_id = d.id "
            "WHERE t.id = ?",
            (table_id,),
        ).fetchone()
        return self._table(row) if row else None

    def tables(self, schema: SchemaEntry, *, dropped: bool = False) -> list[TableEntry]:
        """A schema's live tables; with ``dropped``, also those dropped but not yet purged."""
        live = "t.purged_at IS NULL" if dropped else "t.dropped_at IS NULL"
        rows = self._db.execute(
            self._TABLE_SELECT + f" AND s.id = ? AND {live} ORDER BY t.name, t.created_at",
            (schema.id,),
        ).fetchall()
        return [self._table(r) for r in rows]

    def create_table(
        self,
        schema: SchemaEntry,
        name: str,
        *,
        kind: str,
        location: str,
        now: dt.datetime,
        table_id: str,
        source_id: str | None = None,
        source_version: int | None = None,
        clone_kind: str | None = None,
    ) -> TableEntry:
        self._db.execute(
            "INSERT INTO tables (id, schema_id, name, kind, location, created_at, "
            "source_id, source_version, clone_kind) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (table_id, schema.id, name, kind, location, timestamp_text(now),
             source_id, source_version, clone_kind),
        )
        return TableEntry(
            table_id, schema.id, schema.database, schema.name, name, kind, location, now, None,
            source_id, source_version, clone_kind,
        )

    def drop_table(self, table: TableEntry, now: dt.datetime) -> None:
        self._mark_dropped("tables", table.id, now)

    def last_dropped_table(self, schema: SchemaEntry, name: str) -> TableEntry | None:
        row = self._db.execute(
            "SELECT t.*, s.name AS schema_name, d.name AS database_name FROM tables t "
            "JOIN schemas s ON t.schema_id = s.id JOIN databases d ON s.database_id = d.id "
            "WHERE s.id = ? AND t.name = ? AND t.dropped_at IS NOT NULL AND t.purged_at IS NULL "
            "ORDER BY t.dropped_at DESC LIMIT 1",
            (schema.id, name),
        ).fetchone()
        return self._table(row) if row else None

    def undrop_table(self, table: TableEntry) -> None:
        self._db.execute("UPDATE tables SET dropped_at = NULL WHERE id = ?", (table.id,))

    def clones_of(self, table_id: str, *, purged: bool = False) -> list[TableEntry]:
        """The tables cloned directly from ``table_id``, live or dropped; with ``purged``, purged ones too.

        Walking a lineage needs the purged ones: a purged clone's own clones may
        still be alive, and they reference the original's files directly.
        """
        rows = self._db.execute(
            "SELECT t.*, s.name AS schema_name, d.name AS database_name FROM tables t "
            "JOIN schemas s ON t.schema_id = s.id JOIN databases d ON s.database_id = d.id "
            "WHERE t.source_id = ? AND (? OR t.purged_at IS NULL) ORDER BY t.created_at",
            (table_id, purged),
        ).fetchall()
        return [self._table(r) for r in rows]

    def unpurged_tables(self) -> list[tuple[TableEntry, dt.datetime | None]]:
        """Every table whose files may still be on disk, with when it stopped being live.

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
            found.append((self._table(row), parse_timestamp(min(drops)) if drops else None))
        return found

    def set_lineage(self, table: TableEntry, *, source_version: int) -> None:
        """Record that a deep clone was refreshed from a newer version of its source."""
        self._db.execute(
            "UPDATE tables SET source_version = ? WHERE id = ?", (source_version, table.id)
        )

    def mark_purged(self, table: TableEntry, now: dt.datetime) -> None:
        self._db.execute(
            "UPDATE tables SET purged_at = ? WHERE id = ?", (timestamp_text(now), table.id)
        )

    def rename_schema(self, schema: SchemaEntry, name: str) -> None:
        self._db.execute("UPDATE schemas SET name = ? WHERE id = ?", (name, schema.id))

    def rename_database(self, database: DatabaseEntry, name: str) -> None:
        self._db.execute("UPDATE databases SET name = ? WHERE id = ?", (name, database.id))

    def rename_table(self, table: TableEntry, schema: SchemaEntry, name: str) -> None:
        self._db.execute(
            "UPDATE tables SET schema_id = ?, name = ? WHERE id = ?", (schema.id, name, table.id)
        )

    # Parameters -----------------------------------------------------------

    def parameters(self, object_id: str) -> dict[str, str]:
        rows = self._db.execute(
            "SELECT key, value FROM parameters WHERE object_id = ?", (object_id,)
        ).fetchall()
        return {r["key"]: r["value"] for r in rows}

    def set_parameter(self, object_id: str, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO parameters (object_id, key, value) VALUES (?, ?, ?) "
            "ON CONFLICT (object_id, key) DO UPDATE SET value = excluded.value",
            (object_id, key, value),
        )

    def unset_parameter(self, object_id: str, key: str) -> None:
        self._db.execute(
            "DELETE FROM parameters WHERE object_id = ? AND key = ?", (object_id, key)
        )

    def parameter(self, table: TableEntry, key: str) -> tuple[str, str]:
        """A table parameter's value and the level it comes from ('' for the default).

        The chain is followed by id, so it works for dropped tables too.
        """
        from lakeclone.catalog.parameters import PARAMETERS

        parameter = PARAMETERS[key]
        chain = [("TABLE", table.id)]
        if parameter.inherited:
            row = self._db.execute(
                "SELECT id, database_id FROM schemas WHERE id = ?", (table.schema_id,)
            ).fetchone()
            chain += [("SCHEMA", row["id"]), ("DATABASE", row["database_id"])]
        for level, object_id in chain:
            value = self.parameters(object_id).get(key)
            if value is not None:
                return value, level
        return parameter.default, ""

    def retention(self, table: TableEntry) -> dt.timedelta:
        """How long a table's old versions (and, once dropped, the table itself) are kept."""
        return dt.timedelta(days=int(self.parameter(table, "DATA_RETENTION_TIME_IN_DAYS")[0]))

    # Queries --------------------------------------------------------------

    def record_query(self, query_id: str, text: str, started_at: dt.datetime) -> None:
        self._db.execute(
            "INSERT INTO queries (id, started_at, text) VALUES (?, ?, ?)",
            (query_id, timestamp_text(started_at), text),
        )

    def finish_query(self, query_id: str, finished_at: dt.datetime) -> None:
        self._db.execute(
            "UPDATE queries SET finished_at = ? WHERE id = ?",
            (timestamp_text(finished_at), query_id),
        )

    def query(self, query_id: str) -> QueryEntry | None:
        row = self._db.execute("SELECT * FROM queries WHERE id = ?", (query_id,)).fetchone()
        if row is None:
            return None
        return QueryEntry(
            row["id"], parse_timestamp(row["started_at"]), _when(row["finished_at"]), row["text"]
        )

    # Sequences ------------------------------------------------------------

    _SEQUENCE_SELECT = (
        "SELECT q.*, s.name AS schema_name, d.name AS database_name FROM sequences q "
        "JOIN schemas s ON q.schema_id = s.id JOIN databases d ON s.database_id = d.id"
    )

    def sequence(self, database: str, schema: str, name: str) -> SequenceEntry | None:
        row = self._db.execute(
            self._SEQUENCE_SELECT
            + " WHERE d.dropped_at IS NULL AND s.dropped_at IS NULL AND q.dropped_at IS NULL"
            " AND d.name = ? AND s.name = ? AND q.name = ?",
            (database, schema, name),
        ).fetchone()
        return self._sequence(row) if row else None

    def sequence_by_id(self, sequence_id: str) -> SequenceEntry | None:
        """A sequence by identity, live or dropped."""
        row = self._db.execute(self._SEQUENCE_SELECT + " WHERE q.id = ?", (sequence_id,)).fetchone()
        return self._sequence(row) if row else None

    def sequence_is_live(self, sequence_id: str) -> bool:
        row = self._db.execute(
            self._SEQUENCE_SELECT
            + " WHERE q.id = ? AND q.dropped_at IS NULL AND s.dropped_at IS NULL AND d.dropped_at IS NULL",
            (sequence_id,),
        ).fetchone()
        return row is not None

    def sequences(self, schema: SchemaEntry) -> list[SequenceEntry]:
        rows = self._db.execute(
            self._SEQUENCE_SELECT + " WHERE s.id = ? AND q.dropped_at IS NULL ORDER BY q.name",
            (schema.id,),
        ).fetchall()
        return [self._sequence(r) for r in rows]

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
            uuid.uuid4().hex, schema.id, schema.database, schema.name, name, start, increment,
            comment, now, None, source_id,
        )
        self._db.execute(
            "INSERT INTO sequences (id, schema_id, name, next_value, increment, comment, "
            "created_at, source_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (entry.id, schema.id, name, start, increment, comment, timestamp_text(now), source_id),
        )
        return entry

    def drop_sequence(self, sequence: SequenceEntry, now: dt.datetime) -> None:
        self._mark_dropped("sequences", sequence.id, now)

    def reserve_sequence_values(self, sequence_id: str, count: int) -> tuple[int, int]:
        """Hand out ``count`` consecutive values of a sequence: (first value, increment).

        The read and the advance run under SQLite's write lock, so no two
        callers, in any process, ever get the same value.
        """
        with self.transaction():
            row = self._db.execute(
                "SELECT next_value, increment FROM sequences WHERE id = ?", (sequence_id,)
            ).fetchone()
            if row is None:
                raise KeyError(sequence_id)
            first, increment = int(row["next_value"]), int(row["increment"])
            self._db.execute(
                "UPDATE sequences SET next_value = ? WHERE id = ?",
                (first + count * increment, sequence_id),
            )
        return first, increment

    # Column defaults, constraints, clustering -------------------------------

    def column_defaults(self, table_id: str) -> list[ColumnDefault]:
        rows = self._db.execute(
            "SELECT * FROM column_defaults WHERE table_id = ? ORDER BY rowid", (table_id,)
        ).fetchall()
        return [ColumnDefault(r["column_name"], r["sequence_id"], r["expression"]) for r in rows]

    def set_column_default(self, table_id: str, default: ColumnDefault) -> None:
        self._db.execute(
            "INSERT INTO column_defaults (table_id, column_name, sequence_id, expression) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (table_id, column_name) DO UPDATE SET "
            "sequence_id = excluded.sequence_id, expression = excluded.expression",
            (table_id, default.column, default.sequence_id, default.expression),
        )

    def constraints(self, table_id: str) -> list[ConstraintEntry]:
        rows = self._db.execute(
            "SELECT * FROM table_constraints WHERE table_id = ? ORDER BY rowid", (table_id,)
        ).fetchall()
        return [self._constraint(r) for r in rows]

    def add_constraint(self, constraint: ConstraintEntry) -> None:
        self._db.execute(
            "INSERT INTO table_constraints (table_id, name, kind, columns, ref_table_id, "
            "ref_columns, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                constraint.table_id,
                constraint.name,
                constraint.kind,
                json.dumps(list(constraint.columns)),
                constraint.ref_table_id,
                json.dumps(list(constraint.ref_columns)) if constraint.ref_table_id else None,
                timestamp_text(constraint.created_at),
            ),
        )

    def clustering(self, table_id: str) -> ClusteringEntry | None:
        row = self._db.execute("SELECT * FROM clustering WHERE table_id = ?", (table_id,)).fetchone()
        if row is None:
            return None
        return ClusteringEntry(row["table_id"], tuple(json.loads(row["keys"])), bool(row["automatic"]))

    def set_clustering(self, table_id: str, keys: tuple[str, ...] | list[str], *, automatic: bool) -> None:
        self._db.execute(
            "INSERT INTO clustering (table_id, keys, automatic) VALUES (?, ?, ?) "
            "ON CONFLICT (table_id) DO UPDATE SET keys = excluded.keys, automatic = excluded.automatic",
            (table_id, json.dumps(list(keys)), int(automatic)),
        )

    def drop_clustering(self, table_id: str) -> None:
        self._db.execute("DELETE FROM clustering WHERE table_id = ?", (table_id,))

    # Rows -----------------------------------------------------------------

    _SCHEMA_SELECT = (
        "SELECT s.*, d.name AS database_name FROM schemas s JOIN databases d "
        "ON s.database_id = d.id WHERE d.dropped_at IS NULL"
    )
    _TABLE_SELECT = (
        "SELECT t.*, s.name AS schema_name, d.name AS database_name FROM tables t "
        "JOIN schemas s ON t.schema_id = s.id JOIN databases d ON s.database_id = d.id "
        "WHERE d.dropped_at IS NULL AND s.dropped_at IS NULL"
    )

    def _mark_dropped(self, table: str, object_id: str, now: dt.datetime) -> None:
        self._db.execute(
            f"UPDATE {table} SET dropped_at = ? WHERE id = ?",  # noqa: S608 - table is ours
            (timestamp_text(now), object_id),
        )

    @staticmethod
    def _database(row: sqlite3.Row) -> DatabaseEntry:
        return DatabaseEntry(
            row["id"], row["name"], parse_timestamp(row["created_at"]), _when(row["dropped_at"])
        )

    @staticmethod
    def _schema(row: sqlite3.Row) -> SchemaEntry:
        return SchemaEntry(
            row["id"],
            row["database_id"],
            row["database_name"],
            row["name"],
            parse_timestamp(row["created_at"]),
            _when(row["dropped_at"]),
        )

    @staticmethod
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
            _when(row["dropped_at"]),
            row["source_id"],
        )

    @staticmethod
    def _constraint(row: sqlite3.Row) -> ConstraintEntry:
        return ConstraintEntry(
            row["table_id"],
            row["name"],
            row["kind"],
            tuple(json.loads(row["columns"])),
            parse_timestamp(row["created_at"]),
            row["ref_table_id"],
            tuple(json.loads(row["ref_columns"])) if row["ref_columns"] else (),
        )

    @staticmethod
    def _table(row: sqlite3.Row) -> TableEntry:
        return TableEntry(
            row["id"],
            row["schema_id"],
            row["database_name"],
            row["schema_name"],
            row["name"],
            row["kind"],
            row["location"],
            parse_timestamp(row["created_at"]),
            _when(row["dropped_at"]),
            row["source_id"],
            row["source_version"],
            row["clone_kind"],
            _when(row["purged_at"]),
        )
