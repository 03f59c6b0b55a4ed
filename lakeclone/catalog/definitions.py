"""What a table's definition says beyond its Delta schema: column defaults, informational constraints, clustering."""

from __future__ import annotations

import json
import sqlite3

from lakeclone.catalog.db import CatalogConnection, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import ClusteringEntry, ColumnDefault, ConstraintEntry, ConstraintKind


class DefinitionStore(CatalogConnection):
    """Column defaults, constraints and clustering keys, by table id."""

    def column_defaults(self, table_id: str) -> list[ColumnDefault]:
        rows = self._db.execute("SELECT * FROM column_defaults WHERE table_id = ? ORDER BY rowid", (table_id,)).fetchall()
        return [ColumnDefault(r["column_name"], r["sequence_id"], r["expression"]) for r in rows]

    def set_column_default(self, table_id: str, default: ColumnDefault) -> None:
        self._db.execute(
            "INSERT INTO column_defaults (table_id, column_name, sequence_id, expression) "
            "VALUES (?, ?, ?, ?) ON CONFLICT (table_id, column_name) DO UPDATE SET "
            "sequence_id = excluded.sequence_id, expression = excluded.expression",
            (table_id, default.column, default.sequence_id, default.expression),
        )

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
