"""Masking policies, row access policies and tags, and where they are attached.

Policies and tags are schema-level objects (``database.schema.name``). A
reference ties a policy to a table or view (a masking policy to one of its
columns, a row access policy to the object itself) or gives a tag a value on
an object or a column. Objects are named by kind and id, so references follow
their objects through renames, and a clone's references are its own.
"""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from lakeclone.catalog.db import Store, parse_timestamp, timestamp_text
from lakeclone.catalog.entries import ObjectKind, SchemaEntry


class PolicyKind(str, Enum):
    """The kinds of schema-level governance object; the value is how Snowflake names the kind."""

    MASKING = "MASKING POLICY"
    ROW_ACCESS = "ROW ACCESS POLICY"
    TAG = "TAG"

    @property
    def object_kind(self) -> ObjectKind:
        """The kind as privileges and ownership name it."""
        return ObjectKind(self.value)


POLICY_KINDS = frozenset(kind.object_kind for kind in PolicyKind)
"""The kinds of object the policies store keeps, as privileges name them."""

OBJECT_LEVEL = ""
"""The ``column_name`` of a reference to a whole table or view (a row access policy, a table's tag)."""


@dataclass(frozen=True)
class PolicyEntry:
    """A masking policy, row access policy or tag.

    Attributes:
        signature: the policy's arguments, (name, type as written), in order; empty for a tag.
        return_type: what the policy returns as written; None for a tag.
        body: the policy's expression text; None for a tag.
        allowed_values: a tag's allowed values, None when any value is allowed.
    """

    id: str
    schema_id: str
    database: str
    schema: str
    name: str
    kind: PolicyKind
    signature: tuple[tuple[str, str], ...]
    return_type: str | None
    body: str | None
    allowed_values: tuple[str, ...] | None
    comment: str | None
    created_at: dt.datetime

    @property
    def qualified(self) -> str:
        return f"{self.database}.{self.schema}.{self.name}"


@dataclass(frozen=True)
class PolicyReference:
    """A policy attached to an object: a masking policy on ``column`` or a row access policy (column '')."""

    policy_id: str
    object_kind: ObjectKind
    object_id: str
    column: str
    using: tuple[str, ...]


@dataclass(frozen=True)
class TagReference:
    """A tag's value on an object (column '') or on one of its columns."""

    tag_id: str
    object_kind: ObjectKind
    object_id: str
    column: str
    value: str


_SELECT = (
    "SELECT p.*, s.name AS schema_name, d.name AS database_name FROM policies p "
    "JOIN schemas s ON p.schema_id = s.id JOIN databases d ON s.database_id = d.id"
)


class PolicyStore(Store):
    """The governance part of the catalog: policies, tags and their references."""

    def policy(self, database: str, schema: str, name: str, kind: PolicyKind) -> PolicyEntry | None:
        row = self._db.execute(
            _SELECT + " WHERE d.name = ? AND s.name = ? AND p.name = ? AND p.kind = ?"
            " AND s.dropped_at IS NULL AND d.dropped_at IS NULL",
            (database, schema, name, kind.value),
        ).fetchone()
        row = self._as_first_held(("policies", kind.value, database, schema, name), row)
        return _policy(row) if row else None

    def policy_by_id(self, policy_id: str) -> PolicyEntry | None:
        row = self._db.execute(_SELECT + " WHERE p.id = ?", (policy_id,)).fetchone()
        return _policy(row) if row else None

    def in_schema(self, schema: SchemaEntry, kind: PolicyKind) -> list[PolicyEntry]:
        """A schema's policies (or tags) of ``kind``, by name."""
        rows = self._db.execute(
            _SELECT + " WHERE p.schema_id = ? AND p.kind = ? ORDER BY p.name", (schema.id, kind.value)
        ).fetchall()
        return [_policy(r) for r in rows]

    def create_policy(
        self,
        schema: SchemaEntry,
        name: str,
        kind: PolicyKind,
        *,
        signature: Sequence[tuple[str, str]] = (),
        return_type: str | None = None,
        body: str | None = None,
        allowed_values: Sequence[str] | None = None,
        comment: str | None = None,
        now: dt.datetime,
    ) -> PolicyEntry:
        entry = PolicyEntry(
            uuid.uuid4().hex,
            schema.id,
            schema.database,
            schema.name,
            name,
            kind,
            tuple(signature),
            return_type,
            body,
            tuple(allowed_values) if allowed_values is not None else None,
            comment,
            now,
        )
        self._db.execute(
            "INSERT INTO policies (id, schema_id, name, kind, signature, return_type, body, allowed_values, comment,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                entry.id,
                schema.id,
                name,
                kind.value,
                json.dumps([list(pair) for pair in entry.signature]),
                return_type,
                body,
                json.dumps(list(entry.allowed_values)) if entry.allowed_values is not None else None,
                comment,
                timestamp_text(now),
            ),
        )
        return entry

    def set_policy_body(self, policy: PolicyEntry, body: str) -> None:
        self._db.execute("UPDATE policies SET body = ? WHERE id = ?", (body, policy.id))

    def set_policy_comment(self, policy: PolicyEntry, comment: str | None) -> None:
        self._db.execute("UPDATE policies SET comment = ? WHERE id = ?", (comment, policy.id))

    def drop_policy(self, policy: PolicyEntry) -> None:
        """Remove a policy or tag: its row, a tag's values and its masking policies, and its ownership and grants."""
        self._db.execute("DELETE FROM tag_references WHERE tag_id = ?", (policy.id,))
        self._db.execute("DELETE FROM tag_policies WHERE tag_id = ? OR policy_id = ?", (policy.id, policy.id))
        self._db.execute("DELETE FROM policy_references WHERE policy_id = ?", (policy.id,))
        self._db.execute("DELETE FROM ownership WHERE object_kind = ? AND object_id = ?", (policy.kind.value, policy.id))
        self._db.execute("DELETE FROM grants WHERE object_kind = ? AND object_id = ?", (policy.kind.value, policy.id))
        self._db.execute("DELETE FROM policies WHERE id = ?", (policy.id,))

    # Policy references

    def attach_policy(self, reference: PolicyReference) -> None:
        self._db.execute(
            "INSERT INTO policy_references (policy_id, object_kind, object_id, column_name, using_columns)"
            " VALUES (?, ?, ?, ?, ?)",
            (
                reference.policy_id,
                reference.object_kind,
                reference.object_id,
                reference.column,
                json.dumps(list(reference.using)),
            ),
        )

    def detach_policy(self, reference: PolicyReference) -> None:
        self._db.execute(
            "DELETE FROM policy_references WHERE policy_id = ? AND object_id = ? AND column_name = ?",
            (reference.policy_id, reference.object_id, reference.column),
        )

    def policy_references(self, object_id: str) -> list[PolicyReference]:
        """The policies attached to an object, its row access policy ('' column) first, then by column."""
        rows = self._db.execute(
            "SELECT * FROM policy_references WHERE object_id = ? ORDER BY column_name, policy_id", (object_id,)
        ).fetchall()
        return [_policy_reference(r) for r in rows]

    def references_to_policy(self, policy_id: str) -> list[PolicyReference]:
        rows = self._db.execute("SELECT * FROM policy_references WHERE policy_id = ?", (policy_id,)).fetchall()
        return [_policy_reference(r) for r in rows]

    # Tags

    def set_tag(self, reference: TagReference) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO tag_references (tag_id, object_kind, object_id, column_name, value) VALUES (?, ?, ?, ?, ?)",
            (reference.tag_id, reference.object_kind, reference.object_id, reference.column, reference.value),
        )

    def unset_tag(self, tag_id: str, object_id: str, column: str) -> None:
        self._db.execute(
            "DELETE FROM tag_references WHERE tag_id = ? AND object_id = ? AND column_name = ?", (tag_id, object_id, column)
        )

    def tag_references(self, object_id: str) -> list[TagReference]:
        """The tags set on an object and its columns: the object's ('' column) first, then by column."""
        rows = self._db.execute(
            "SELECT * FROM tag_references WHERE object_id = ? ORDER BY column_name, tag_id", (object_id,)
        ).fetchall()
        return [_tag_reference(r) for r in rows]

    def tag_policies(self, tag_id: str) -> list[str]:
        """The ids of the masking policies a tag carries."""
        rows = self._db.execute("SELECT policy_id FROM tag_policies WHERE tag_id = ? ORDER BY policy_id", (tag_id,))
        return [str(r["policy_id"]) for r in rows.fetchall()]

    def tags_with_policy(self, policy_id: str) -> list[str]:
        rows = self._db.execute("SELECT tag_id FROM tag_policies WHERE policy_id = ? ORDER BY tag_id", (policy_id,))
        return [str(r["tag_id"]) for r in rows.fetchall()]

    def set_tag_policy(self, tag_id: str, policy_id: str) -> None:
        self._db.execute("INSERT OR IGNORE INTO tag_policies (tag_id, policy_id) VALUES (?, ?)", (tag_id, policy_id))

    def unset_tag_policy(self, tag_id: str, policy_id: str) -> None:
        self._db.execute("DELETE FROM tag_policies WHERE tag_id = ? AND policy_id = ?", (tag_id, policy_id))

    def has_policies(self, object_id: str) -> bool:
        """Whether anything may protect an object: a policy on it, or a tag on it or its columns (cheap, one query)."""
        row = self._db.execute(
            "SELECT 1 FROM policy_references WHERE object_id = ? UNION ALL "
            "SELECT 1 FROM tag_references r JOIN tag_policies p ON p.tag_id = r.tag_id WHERE r.object_id = ? LIMIT 1",
            (object_id, object_id),
        ).fetchone()
        return row is not None


def _policy(row: sqlite3.Row) -> PolicyEntry:
    allowed = row["allowed_values"]
    return PolicyEntry(
        row["id"],
        row["schema_id"],
        row["database_name"],
        row["schema_name"],
        row["name"],
        PolicyKind(row["kind"]),
        tuple((str(name), str(kind)) for name, kind in json.loads(row["signature"])),
        row["return_type"],
        row["body"],
        tuple(json.loads(allowed)) if allowed is not None else None,
        row["comment"],
        parse_timestamp(row["created_at"]),
    )


def _policy_reference(row: sqlite3.Row) -> PolicyReference:
    return PolicyReference(
        row["policy_id"],
        ObjectKind(row["object_kind"]),
        row["object_id"],
        row["column_name"],
        tuple(json.loads(row["using_columns"])),
    )


def _tag_reference(row: sqlite3.Row) -> TagReference:
    return TagReference(row["tag_id"], ObjectKind(row["object_kind"]), row["object_id"], row["column_name"], row["value"])
