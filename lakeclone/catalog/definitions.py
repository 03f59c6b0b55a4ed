"""What a table's definition says beyond its Delta schema: column defaults, informational constraints, clustering."""

from __future__ import annotations

import json
import sqlite3

from lakeclone.catalog.db import Store, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import ClusteringEntry, ColumnDefault, ConstraintEntry, ConstraintKind, Identity


class DefinitionStore(Store):
    """Column defaults, constraints and clustering keys, by table id."""

    def column_defaults(self, table_id: str) -> list[ColumnDefault]:
        rows = self._db.execute("SELECT * FROM column_defaults WHERE table_id = ? ORDER BY rowid", (table_id,)).fetchall()
        return [_column_default(r) for r in rows]

    def set_column_default(self, table_id: str, default: ColumnDefault, *, identity_next: int | None = None) -> None:
        """Set a column's default; an identity's numbering goes on from ``identity_next`` (by default, its start)."""
        identity = default.identity
        start, increment = (identity.start, identity.increment) if identity is not None else (None, None)
        following = identity_next if identity_next is not None else start
        self._db.execute(
            "INSERT INTO column_defaults "
            "(table_id, column_name, sequence_id, expression, identity_start, identity_increment, identity_next) "
            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (table_id, column_name) DO UPDATE SET "
            "sequence_id = excluded.sequence_id, expression = excluded.expression, identity_start = excluded.identity_start, "
            "identity_increment = excluded.identity_increment, identity_next = excluded.identity_next",
            (table_id, default.column, default.sequence_id, default.expression, start, increment, following),
        )

    def drop_column_default(self, table_id: str, column: str) -> None:
        """Remove a column's default (ALTER COLUMN … DROP DEFAULT): a value the column is not given is NULL from now on."""
        self._db.execute("DELETE FROM column_defaults WHERE table_id = ? AND column_name = ?", (table_id, column))

    def identity_next(self, table_id: str, column: str) -> int:
        """The value an identity column hands out next."""
        row = self._db.execute(
            "SELECT identity_next FROM column_defaults WHERE table_id = ? AND column_name = ?", (table_id, column)
        ).fetchone()
        if row is None or row["identity_next"] is None:
            raise KeyError((table_id, column))
        return int(row["identity_next"])

    def reserve_identity_values(self, table_id: str, column: str, count: int) -> tuple[int, int]:
        """Hand out ``count`` consecutive values of an identity column: (first value, increment).

        As a sequence's: the read and the advance run under SQLite's write
        lock, so no two callers, in any process, ever get the same value.
        """
        with self.transaction():
            row = self._db.execute(
                "SELECT identity_next, identity_increment FROM column_defaults WHERE table_id = ? AND column_name = ?",
                (table_id, column),
            ).fetchone()
            if row is None or row["identity_next"] is None:
                raise KeyError((table_id, column))
            first, increment = int(row["identity_next"]), int(row["identity_increment"])
            self._db.execute(
                "UPDATE column_defaults SET identity_next = ? WHERE table_id = ? AND column_name = ?",
                (first + count * increment, table_id, column),
            )
        return first, increment

    def constraints(self, table_id: str) -> list[ConstraintEntry]:
        rows = self._db.execute("SELECT * FROM table_constraints WHERE table_id = ? ORDER BY rowid", (table_id,)).fetchall()
        return [_constraint(r) for r in rows]

    def references_to(self, table_id: str) -> list[ConstraintEntry]:
        """The foreign keys, of any table, that reference ``table_id``."""
        rows = self._db.execute("SELECT * FROM table_constraints WHERE ref_table_id = ? ORDER BY rowid", (table_id,)).fetchall()
        return [_constraint(r) for r in rows]

    def add_constraint(self, constraint: ConstraintEntry) -> None:
        self._db.execute(
            "INSERT INTO table_constraints (table_id, name, kind, columns, ref_table_id, "
            "ref_columns, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                constraint.table_id,
                constraint.name,
                constraint.kind.value,
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


def _constraint(row: sqlite3.Row) -> ConstraintEntry:
    return ConstraintEntry(
        row["table_id"],
        row["name"],
        ConstraintKind(row["kind"]),
        tuple(json.loads(row["columns"])),
        parse_timestamp(row["created_at"]),
        row["ref_table_id"],
        tuple(json.loads(row["ref_columns"])) if row["ref_columns"] else (),
    )


def _column_default(row: sqlite3.Row) -> ColumnDefault:
    numbered = row["identity_increment"] is not None
    identity = Identity(int(row["identity_start"]), int(row["identity_increment"])) if numbered else None
    return ColumnDefault(row["column_name"], row["sequence_id"], row["expression"], identity)
