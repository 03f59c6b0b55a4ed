"""The catalog's SQLite connection: opened safely by several processes at once, migrated to the current schema."""

from __future__ import annotations

import contextlib
import datetime as dt
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from lakeclone.catalog.migrations import migrate
from lakeclone.errors import CatalogBusyError


def timestamp_text(moment: dt.datetime) -> str:
    """A UTC timestamp as fixed-width text, so SQLite compares it correctly as a string."""
    return moment.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_timestamp(text: str) -> dt.datetime:
    return dt.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=dt.timezone.utc)


def optional_timestamp(text: str | None) -> dt.datetime | None:
    return parse_timestamp(text) if text else None


def optional_timestamp_text(moment: dt.datetime | None) -> str | None:
    return timestamp_text(moment) if moment is not None else None


_WRITE = re.compile(r"\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)

# A write's catalog table, and for an UPDATE the columns it sets.
_WRITE_TARGET = re.compile(
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|DELETE\s+FROM|UPDATE)\s+(\w+)(?:\s+SET\s+(.*?)\s+WHERE\b)?",
    re.IGNORECASE | re.DOTALL,
)
# The columns that decide which object a name holds.
_NAMING_COLUMNS = re.compile(r"\b(name|dropped_at|purged_at|schema_id|database_id)\s*=", re.IGNORECASE)
# Catalog tables whose names hold what lives inside them: renaming or dropping one changes what every name under it holds.
_CONTAINERS = frozenset({"databases", "schemas"})

_OUTSIDE_UNIT_OF_WORK = "A statement wrote to the catalog outside its unit of work."

Recording = Callable[[], contextlib.AbstractContextManager[None]]
"""Where a step's catalog writes go, as a context to write in: a statement's unit of work
(``work.records`` or ``work.durable``), else the catalog's own (``Catalog.recovering`` at connect)."""


class _Connection(sqlite3.Connection):
    """SQLite's connection, refusing a running statement's write outside its unit of work.

    Reads run in autocommit mode, and so would a write made outside a
    transaction: while a statement runs, that is a write its unit of work does
    not own (it would stay if the statement failed), and it is refused.
    """

    statement_running = False
    held_names: dict[tuple[str, ...], str | None] | None = None
    """What each name a running statement looked up held then (an object's id, or None), by catalog table and name."""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        self._check(sql)
        return super().execute(sql, parameters)

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        self._check(sql)
        return super().executemany(sql, parameters)

    def _check(self, sql: str) -> None:
        if self.statement_running and not self.in_transaction and _WRITE.match(sql):
            raise RuntimeError(_OUTSIDE_UNIT_OF_WORK)
        if self.held_names:
            self._release_renamed(sql)

    def _release_renamed(self, sql: str) -> None:
        """Forget what the names of a catalog table held once the statement itself changes which object a name holds there."""
        target = _WRITE_TARGET.match(sql)
        if target is None:
            return
        table, assignments = target.groups()
        if assignments is not None and not _NAMING_COLUMNS.search(assignments):
            return
        assert self.held_names is not None
        table = table.lower()
        for key in [k for k in self.held_names if table in _CONTAINERS or k[0] == table]:
            del self.held_names[key]


Entry = TypeVar("Entry")


@dataclass(frozen=True)
class SchemaObjectTable(Generic[Entry]):
    """A table of objects that live in a schema by name and are dropped by marking (views, streams, sequences, …).

    Its rows are read joined to their schema and database (``o`` is the
    object's row, ``s`` its schema's, ``d`` its database's), so that an
    entry carries its qualified name.

    Attributes:
        table: the catalog table.
        entry: builds an entry from a row read through :attr:`select`.
    """

    table: str
    entry: Callable[[sqlite3.Row], Entry]

    @property
    def select(self) -> str:
        return (
            f"SELECT o.*, s.name AS schema_name, d.name AS database_name FROM {self.table} o "
            "JOIN schemas s ON o.schema_id = s.id JOIN databases d ON s.database_id = d.id"
        )


# Rows of live objects in live schemas of live databases.
LIVE_OBJECT = " AND o.dropped_at IS NULL AND s.dropped_at IS NULL AND d.dropped_at IS NULL"


class CatalogConnection:
    """One connection to the catalog file.

    Reads run in autocommit mode; every change runs inside :meth:`transaction`,
    which takes SQLite's write lock up front (``BEGIN IMMEDIATE``) so that two
    processes never interleave a check and the write that depends on it.
    """

    def __init__(self, path: Path, *, timeout: float = 60, create: bool = True) -> None:
        """Open the catalog at ``path``, creating it unless ``create`` is False (then a missing one is an error)."""
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        target: str | Path = path if create else f"{path.resolve().as_uri()}?mode=rw"
        self._db = sqlite3.connect(
            target, isolation_level=None, timeout=timeout, check_same_thread=False, factory=_Connection, uri=not create
        )
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
    def names_held(self) -> Iterator[None]:
        """Within the block (one statement), a name resolves to the object it held when first looked up.

        A statement's privileges are checked on the objects its names hold
        when it is bound; another session may drop, rename or replace one of
        them before the statement reads it. Within the block, a lookup by name
        made outside a transaction finds the object the name first held, or
        nothing if the name now holds another (or none): the statement acts
        on what its role was checked against, or reports the object gone.
        Inside a transaction, which holds the catalog's write lock, lookups
        see the catalog as it is, so a check and the write that depends on it
        agree; and once the statement itself creates, drops or renames an
        object of a kind, names of that kind resolve afresh. A block inside
        another shares its names.
        """
        if self._db.held_names is not None:
            yield
            return
        self._db.held_names = {}
        try:
            yield
        finally:
            self._db.held_names = None

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Run the block atomically: all of its changes, or none.

        Inside a statement's transaction the block joins it. While a statement
        runs (:meth:`statement_running`) and has not begun its transaction,
        a block is refused: the statement's writes go through its unit of
        work, which decides when they commit.
        """
        if self._db.statement_running and not self._db.in_transaction:
            raise RuntimeError(_OUTSIDE_UNIT_OF_WORK)
        with self.joined_or_at_once():
            yield

    def recovering(self) -> contextlib.AbstractContextManager[None]:
        """A transaction recovering what a dead session left: its locks, its transaction, a stream's consumption.

        A statement may come upon such leftovers as it runs; their recovery is
        no part of its work, so it commits on its own (or joins the
        statement's transaction, once that began).
        """
        return self.joined_or_at_once()

    @contextlib.contextmanager
    def joined_or_at_once(self) -> Iterator[None]:
        """The block joins the open transaction, or is a transaction of its own, committed when it ends."""
        if self._db.in_transaction:
            yield
            return
        with self.committed_at_once():
            yield

    @contextlib.contextmanager
    def committed_at_once(self) -> Iterator[None]:
        """The block's changes commit when it ends, whether or not a statement runs (a unit of work's durable writes)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    @contextlib.contextmanager
    def statement_block(self) -> Iterator[None]:
        """One block of a running statement's changes, kept in the statement's transaction.

        The statement's transaction begins with its first block and stays open
        until :meth:`end_statement`, so everything a statement records commits
        together with its query record, or not at all. A block that fails is
        undone on its own; the blocks before it stay in the transaction.
        """
        if not self._db.in_transaction:
            self._db.execute("BEGIN IMMEDIATE")
        self._db.execute("SAVEPOINT statement_block")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK TO statement_block")
            self._db.execute("RELEASE statement_block")
            raise
        self._db.execute("RELEASE statement_block")

    @contextlib.contextmanager
    def statement_running(self) -> Iterator[None]:
        """A statement's handler runs: its catalog writes go through its unit of work (see :meth:`transaction`)."""
        self._db.statement_running = True
        try:
            yield
        finally:
            self._db.statement_running = False

    @property
    def in_statement(self) -> bool:
        """Whether a statement's transaction is open: its changes are not yet committed."""
        return self._db.in_transaction

    def end_statement(self, *, commit: bool) -> None:
        """Commit (or roll back) what the statement's blocks changed; nothing when it changed nothing."""
        if self._db.in_transaction:
            self._db.execute("COMMIT" if commit else "ROLLBACK")


class Store:
    """One part of the catalog, grouped by what it stores, on the catalog's connection.

    Its reads run on the connection as it is; its writes join the transaction
    the caller opened (a statement's unit of work, or the catalog's own).
    """

    def __init__(self, connection: CatalogConnection) -> None:
        self._connection = connection
        self._db = connection._db

    def transaction(self) -> contextlib.AbstractContextManager[None]:
        """A block of this part's changes that must land together (see :meth:`CatalogConnection.transaction`)."""
        return self._connection.transaction()

    def joined_or_at_once(self) -> contextlib.AbstractContextManager[None]:
        """A block that joins the open transaction, or commits on its own (see :meth:`CatalogConnection.joined_or_at_once`)."""
        return self._connection.joined_or_at_once()

    def _as_first_held(self, key: tuple[str, ...], row: sqlite3.Row | None) -> sqlite3.Row | None:
        """``row``, the live object a name holds now, as :meth:`CatalogConnection.names_held` lets the statement see it.

        ``key`` is the catalog table and the name.
        """
        held = self._db.held_names
        if held is None or self._db.in_transaction:
            return row
        object_id: str | None = row["id"] if row is not None else None
        first = held.setdefault(key, object_id)
        return row if first == object_id else None

    def _named(self, objects: SchemaObjectTable[Entry], database: str, schema: str, name: str) -> Entry | None:
        """The live object a qualified name holds."""
        row = self._db.execute(
            objects.select + " WHERE d.name = ? AND s.name = ? AND o.name = ?" + LIVE_OBJECT, (database, schema, name)
        ).fetchone()
        row = self._as_first_held((objects.table, database, schema, name), row)
        return objects.entry(row) if row else None

    def _with_id(self, objects: SchemaObjectTable[Entry], object_id: str) -> Entry | None:
        """An object by identity, live or dropped."""
        row = self._db.execute(objects.select + " WHERE o.id = ?", (object_id,)).fetchone()
        return objects.entry(row) if row else None

    def _in_schema(self, objects: SchemaObjectTable[Entry], schema_id: str) -> list[Entry]:
        """A schema's live objects, by name."""
        rows = self._db.execute(
            objects.select + " WHERE s.id = ? AND o.dropped_at IS NULL ORDER BY o.name", (schema_id,)
        ).fetchall()
        return [objects.entry(r) for r in rows]

    def _mark_dropped(self, table: str, object_id: str, now: dt.datetime) -> None:
        self._db.execute(
            f"UPDATE {table} SET dropped_at = ? WHERE id = ?",
            (timestamp_text(now), object_id),
        )
